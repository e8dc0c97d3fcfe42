"""The default world every scenario patches: our own cast of contacts, messages and reminders.

All ids are stable (sha256 of a label) and all times are offsets from the scenario's frozen clock,
so a scenario's initial state is identical on every run and machine.
"""

from __future__ import annotations

import polars as pl

from pytest_toolsandbox.world.clock import FrozenClock
from pytest_toolsandbox.world.ids import stable_uuid
from pytest_toolsandbox.world.tables import Table, frame

HOME_LATITUDE = 37.323
HOME_LONGITUDE = -122.0322

OWNER = "Maya Lindqvist"
OWNER_PHONE = "+14155550134"

# name, phone, relationship, is_self
CONTACTS: tuple[tuple[str, str, str, bool], ...] = (
    (OWNER, OWNER_PHONE, "self", True),
    ("Fredrik Thordendal", "+12453344098", "friend", False),
    ("Priya Raman", "+14085550172", "coworker", False),
    ("Diego Alvarez", "+16505550119", "brother", False),
    ("Hannah Okafor", "+14155550188", "boss", False),
    ("Sam Whitaker", "+13105550143", "friend", False),
    ("Lena Lindqvist", "+14085550101", "mother", False),
    ("Kenji Watanabe", "+16505550166", "dentist", False),
    ("Olivia Chen", "+14155550127", "neighbor", False),
)

# other party (contact name or raw phone), outgoing?, content, age as timedelta kwargs
MESSAGES: tuple[tuple[str, bool, str, dict[str, int]], ...] = (
    ("+18005550199", False, "Your package is out for delivery and should arrive today.", {"days": 4, "hours": 2}),
    ("Lena Lindqvist", False, "Don't forget grandma's birthday dinner on Sunday!", {"days": 3, "hours": 5}),
    ("Lena Lindqvist", True, "I won't forget, I'll bring dessert.", {"days": 3, "hours": 4}),
    ("Diego Alvarez", False, "Can I borrow your camping tent next weekend?", {"days": 2, "hours": 1}),
    ("Diego Alvarez", True, "Sure, pick it up whenever you like.", {"days": 2}),
    ("Priya Raman", False, "The design review moved to Thursday at 2pm.", {"days": 1, "hours": 3}),
    ("Hannah Okafor", False, "How is the quarterly report coming along?", {"hours": 2, "minutes": 10}),
    ("Hannah Okafor", True, "Almost done, I'll send it by this afternoon.", {"hours": 2}),
    ("Sam Whitaker", False, "Climbing gym tonight at 7?", {"minutes": 45}),
    ("Fredrik Thordendal", False, "Just finished mixing the new track, want a preview?", {"minutes": 5}),
)

# label, content, created (ago), due (offset from now), latitude, longitude
REMINDERS: tuple[tuple[str, str, dict[str, int], dict[str, int], float | None, float | None], ...] = (
    ("reminder_dentist", "Book a cleaning with Kenji", {"days": 5}, {"days": -1}, None, None),
    ("reminder_tent", "Dig the camping tent out of the garage", {"days": 2}, {"hours": 5}, None, None),
    ("reminder_report", "Send the quarterly report to Hannah", {"days": 1}, {"hours": 6}, None, None),
    ("reminder_groceries", "Buy oat milk and coffee beans", {"hours": 3}, {"hours": 1},
     37.3225, -122.0406),
    ("reminder_dinner", "Pick up dessert for grandma's dinner", {"days": 3}, {"days": 3}, None, None),
)


def contact_id(name: str) -> str:
    """The stable person id of a default contact."""
    return stable_uuid("contact", name)


def default_tables(clock: FrozenClock) -> dict[Table, pl.DataFrame]:
    """The initial world, timed relative to `clock`."""
    settings = frame(Table.SETTINGS, [{
        "device_id": stable_uuid("device", "my phone"),
        "cellular": True,
        "wifi": True,
        "location_service": True,
        "low_battery_mode": False,
        "latitude": HOME_LATITUDE,
        "longitude": HOME_LONGITUDE,
    }])
    contacts = frame(Table.CONTACTS, [
        {"person_id": contact_id(name), "name": name, "phone_number": phone,
         "relationship": relationship, "is_self": is_self}
        for name, phone, relationship, is_self in CONTACTS
    ])
    phones = {name: phone for name, phone, _, _ in CONTACTS}
    owner = (contact_id(OWNER), phones[OWNER])
    message_rows = []
    for position, (party, outgoing, content, age) in enumerate(MESSAGES):
        other = (contact_id(party), phones[party]) if party in phones else (None, party)
        sender, recipient = (owner, other) if outgoing else (other, owner)
        message_rows.append({
            "message_id": stable_uuid("message", str(position)),
            "sender_person_id": sender[0], "sender_phone_number": sender[1],
            "recipient_person_id": recipient[0], "recipient_phone_number": recipient[1],
            "content": content,
            "creation_timestamp": clock.shifted(**{k: -v for k, v in age.items()}),
        })
    reminders = frame(Table.REMINDERS, [
        {"reminder_id": stable_uuid("reminder", label), "content": content,
         "creation_timestamp": clock.shifted(**{k: -v for k, v in created.items()}),
         "reminder_timestamp": clock.shifted(**due), "latitude": latitude, "longitude": longitude}
        for label, content, created, due, latitude, longitude in REMINDERS
    ])
    return {
        Table.SETTINGS: settings,
        Table.CONTACTS: contacts,
        Table.MESSAGING: frame(Table.MESSAGING, message_rows),
        Table.REMINDERS: reminders,
    }
