"""Text messaging tools."""

from __future__ import annotations

from typing import Any

import polars as pl

from pytest_toolsandbox.tools.checks import check_phone_number, require_cellular
from pytest_toolsandbox.tools.errors import DuplicateError
from pytest_toolsandbox.tools.spec import NOT_GIVEN, NotGiven, tool
from pytest_toolsandbox.tools.tables_ops import (
    append_row,
    check_timestamp_bounds,
    search_rows,
)
from pytest_toolsandbox.world.tables import Table
from pytest_toolsandbox.world.world import World

_CONTENT_CUTOFF = 50


@tool(domain="messaging", action=True, reads=(Table.SETTINGS, Table.CONTACTS, Table.MESSAGING),
      writes=(Table.MESSAGING,))
def send_message_with_phone_number(world: World, phone_number: str, content: str) -> str:
    """Send a text message to a phone number.

    Args:
        phone_number: Recipient phone number with country code, e.g. +14155550123.
        content: Text of the message.

    Returns:
        The message_id of the sent message.
    """
    check_phone_number("phone_number", phone_number)
    require_cellular(world)
    contacts = world.table(Table.CONTACTS)
    owners = contacts.filter(pl.col("is_self"))
    if owners.height != 1:
        raise DuplicateError("1 and only 1 self entry should exist in contacts database, instead found "
                             f"{owners.height}")
    owner = owners.row(0, named=True)
    recipients = contacts.filter(pl.col("phone_number") == phone_number)
    message_id = world.ids.next_id("message")
    append_row(world, Table.MESSAGING, {
        "message_id": message_id,
        "sender_person_id": owner["person_id"],
        "sender_phone_number": owner["phone_number"],
        "recipient_person_id": recipients["person_id"][0] if recipients.height else None,
        "recipient_phone_number": phone_number,
        "content": content,
        "creation_timestamp": world.clock.timestamp(),
    })
    return message_id


@tool(domain="messaging", reads=(Table.MESSAGING,))
def search_messages(
    world: World,
    message_id: str | NotGiven = NOT_GIVEN,
    sender_person_id: str | NotGiven = NOT_GIVEN,
    sender_phone_number: str | NotGiven = NOT_GIVEN,
    recipient_person_id: str | NotGiven = NOT_GIVEN,
    recipient_phone_number: str | NotGiven = NOT_GIVEN,
    content: str | NotGiven = NOT_GIVEN,
    creation_timestamp_lowerbound: float | NotGiven = NOT_GIVEN,
    creation_timestamp_upperbound: float | NotGiven = NOT_GIVEN,
) -> list[dict[str, Any]]:
    """Search sent and received messages; every given criterion must match.

    Args:
        message_id: Exact id of the message.
        sender_person_id: Exact person_id of the sender.
        sender_phone_number: Exact phone number of the sender, with country code.
        recipient_person_id: Exact person_id of the recipient.
        recipient_phone_number: Exact phone number of the recipient, with country code.
        content: Text of the message, matched approximately.
        creation_timestamp_lowerbound: Earliest creation time (POSIX timestamp, inclusive).
        creation_timestamp_upperbound: Latest creation time (POSIX timestamp, inclusive).

    Returns:
        The matching messages.
    """
    arguments = {
        "message_id": message_id, "sender_person_id": sender_person_id, "sender_phone_number": sender_phone_number,
        "recipient_person_id": recipient_person_id, "recipient_phone_number": recipient_phone_number,
        "content": content, "creation_timestamp_lowerbound": creation_timestamp_lowerbound,
        "creation_timestamp_upperbound": creation_timestamp_upperbound,
    }
    for name, number in (("sender_phone_number", sender_phone_number),
                         ("recipient_phone_number", recipient_phone_number)):
        if not isinstance(number, NotGiven):
            check_phone_number(name, number)
    check_timestamp_bounds(arguments)
    return search_rows(world.table(Table.MESSAGING), arguments, {"content": _CONTENT_CUTOFF})
