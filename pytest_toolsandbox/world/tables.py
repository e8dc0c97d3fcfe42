"""Table names and polars schemas of the world state."""

from __future__ import annotations

from enum import StrEnum

import polars as pl


class Table(StrEnum):
    """Namespaces of the world. `sandbox` is the message log itself (used by scoring)."""

    SANDBOX = "sandbox"
    SETTINGS = "settings"
    CONTACTS = "contacts"
    MESSAGING = "messaging"
    REMINDERS = "reminders"


WORLD_TABLES: tuple[Table, ...] = (Table.SETTINGS, Table.CONTACTS, Table.MESSAGING, Table.REMINDERS)

SCHEMAS: dict[Table, dict[str, pl.DataType]] = {
    Table.SETTINGS: {
        "device_id": pl.String(),
        "cellular": pl.Boolean(),
        "wifi": pl.Boolean(),
        "location_service": pl.Boolean(),
        "low_battery_mode": pl.Boolean(),
        "latitude": pl.Float64(),
        "longitude": pl.Float64(),
    },
    Table.CONTACTS: {
        "person_id": pl.String(),
        "name": pl.String(),
        "phone_number": pl.String(),
        "relationship": pl.String(),
        "is_self": pl.Boolean(),
    },
    Table.MESSAGING: {
        "message_id": pl.String(),
        "sender_person_id": pl.String(),
        "sender_phone_number": pl.String(),
        "recipient_person_id": pl.String(),
        "recipient_phone_number": pl.String(),
        "content": pl.String(),
        "creation_timestamp": pl.Float64(),
    },
    Table.REMINDERS: {
        "reminder_id": pl.String(),
        "content": pl.String(),
        "creation_timestamp": pl.Float64(),
        "reminder_timestamp": pl.Float64(),
        "latitude": pl.Float64(),
        "longitude": pl.Float64(),
    },
}

PRIMARY_KEYS: dict[Table, str] = {
    Table.SETTINGS: "device_id",
    Table.CONTACTS: "person_id",
    Table.MESSAGING: "message_id",
    Table.REMINDERS: "reminder_id",
}


def frame(table: Table, rows: list[dict]) -> pl.DataFrame:
    """Rows → a frame with the table's exact schema (missing columns become null)."""
    schema = SCHEMAS[table]
    unknown = {key for row in rows for key in row} - set(schema)
    if unknown:
        raise ValueError(f"unknown column(s) {sorted(unknown)} for table '{table}'; allowed: {list(schema)}")
    return pl.DataFrame([{column: row.get(column) for column in schema} for row in rows], schema=schema)
