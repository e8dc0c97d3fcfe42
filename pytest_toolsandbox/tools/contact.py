"""Contact book tools."""

from __future__ import annotations

from typing import Any

import polars as pl

from pytest_toolsandbox.tools.checks import check_phone_number
from pytest_toolsandbox.tools.errors import DuplicateError
from pytest_toolsandbox.tools.spec import NOT_GIVEN, NotGiven, tool
from pytest_toolsandbox.tools.tables_ops import (
    append_row,
    given,
    remove_row,
    replace_row,
    search_rows,
)
from pytest_toolsandbox.world.tables import Table
from pytest_toolsandbox.world.world import World

_NAME_CUTOFF = 90


def _ensure_single_self(world: World, excluding: str | None = None) -> None:
    owners = world.table(Table.CONTACTS).filter(pl.col("is_self") & (pl.col("person_id") != (excluding or "")))
    if owners.height:
        raise DuplicateError("Self entry already exists. Cannot add another one.")


@tool(domain="contact", action=True, reads=(Table.CONTACTS,), writes=(Table.CONTACTS,))
def add_contact(
    world: World, name: str, phone_number: str, relationship: str | None = None, is_self: bool = False
) -> str:
    """Add a new contact person to the contact book.

    Args:
        name: Full name of the contact.
        phone_number: Phone number with country code, e.g. +14155550123.
        relationship: How the contact relates to the device owner, e.g. friend, mother, boss.
        is_self: Whether the contact is the device owner.

    Returns:
        The person_id of the new contact.
    """
    check_phone_number("phone_number", phone_number)
    if is_self:
        _ensure_single_self(world)
    person_id = world.ids.next_id("person")
    append_row(world, Table.CONTACTS, {"person_id": person_id, "name": name, "phone_number": phone_number,
                                       "relationship": relationship, "is_self": is_self})
    return person_id


@tool(domain="contact", action=True, reads=(Table.CONTACTS,), writes=(Table.CONTACTS,))
def modify_contact(
    world: World,
    person_id: str,
    name: str | NotGiven = NOT_GIVEN,
    phone_number: str | NotGiven = NOT_GIVEN,
    relationship: str | NotGiven = NOT_GIVEN,
    is_self: bool | NotGiven = NOT_GIVEN,
) -> None:
    """Modify the information of an existing contact.

    Args:
        person_id: The id of the contact to modify.
        name: New full name.
        phone_number: New phone number with country code.
        relationship: New relationship to the device owner.
        is_self: Whether the contact is the device owner.
    """
    changes = given(name=name, phone_number=phone_number, relationship=relationship, is_self=is_self)
    if not changes:
        raise ValueError("No update information given. At least one new field should be provided among "
                         "[name, phone_number, relationship, is_self] in order to modify contact")
    if "phone_number" in changes:
        check_phone_number("phone_number", changes["phone_number"])
    if changes.get("is_self"):
        _ensure_single_self(world, excluding=person_id)
    replace_row(world, Table.CONTACTS, person_id, changes)


@tool(domain="contact", action=True, reads=(Table.CONTACTS,), writes=(Table.CONTACTS,))
def remove_contact(world: World, person_id: str) -> None:
    """Remove a contact from the contact book.

    Args:
        person_id: The id of the contact to remove.
    """
    remove_row(world, Table.CONTACTS, person_id)


@tool(domain="contact", reads=(Table.CONTACTS,))
def search_contacts(
    world: World,
    person_id: str | NotGiven = NOT_GIVEN,
    name: str | NotGiven = NOT_GIVEN,
    phone_number: str | NotGiven = NOT_GIVEN,
    relationship: str | NotGiven = NOT_GIVEN,
    is_self: bool | NotGiven = NOT_GIVEN,
) -> list[dict[str, Any]]:
    """Search contacts; every given criterion must match. Names and relationships match approximately.

    Args:
        person_id: Exact id of the contact.
        name: Name of the contact, matched approximately.
        phone_number: Exact phone number with country code.
        relationship: Relationship to the device owner, matched approximately.
        is_self: Whether the contact is the device owner.

    Returns:
        The matching contacts.
    """
    if not isinstance(phone_number, NotGiven):
        check_phone_number("phone_number", phone_number)  # as the reference: "4155550134" is an error, not []
    arguments = {"person_id": person_id, "name": name, "phone_number": phone_number,
                 "relationship": relationship, "is_self": is_self}
    return search_rows(world.table(Table.CONTACTS), arguments, {"name": _NAME_CUTOFF, "relationship": _NAME_CUTOFF})
