"""Device settings tools, with the implicit dependencies between settings.

Low battery mode forbids turning cellular, wifi or location service on, and switching it on turns
all three off (switching it off restores nothing) — the nested dependency of the paper.
"""

from __future__ import annotations

from pytest_toolsandbox.tools.checks import require_location_service, setting
from pytest_toolsandbox.tools.spec import tool
from pytest_toolsandbox.world.tables import Table, frame
from pytest_toolsandbox.world.world import World

_RADIOS = {"cellular": "Cellular service", "wifi": "Wifi", "location_service": "Location service"}


def _set(world: World, column: str, on: bool) -> None:
    # As in the reference, low battery mode is checked before the "already" test: turning a radio on
    # in low battery mode is refused even when a world patch left that radio on.
    if column in _RADIOS and on and setting(world, "low_battery_mode"):
        raise PermissionError(f"{_RADIOS[column]} cannot be turned on in low battery mode")
    if bool(setting(world, column)) == on:
        raise ValueError(f"{column} already {'enabled' if on else 'disabled'}")
    changes = {column: on}
    if column == "low_battery_mode" and on:
        changes.update(dict.fromkeys(_RADIOS, False))
    # rebuilt from its (single) row: a fraction of the cost of a polars expression on so small a table
    world.write(Table.SETTINGS, frame(Table.SETTINGS, [{**row, **changes}
                                                      for row in world.table(Table.SETTINGS).to_dicts()]))


def _status_tool(column: str, label: str):
    def get_status(world: World) -> bool:
        return bool(setting(world, column))

    get_status.__doc__ = f"""Tell whether {label} is on.

    Returns:
        True when {label} is on.
    """
    return get_status


def _setter_tool(column: str, label: str, extra: str = ""):
    def set_status(world: World, on: bool) -> None:
        _set(world, column, on)

    set_status.__doc__ = f"""Turn {label} on or off.{extra}

    Args:
        on: True to turn {label} on, False to turn it off.
    """
    return set_status


def _register(name: str, function, action: bool) -> None:
    function.__name__ = function.__qualname__ = name
    writes = (Table.SETTINGS,) if action else ()
    globals()[name] = tool(domain="setting", action=action, reads=(Table.SETTINGS,), writes=writes)(function)


for _column, _label in (("cellular", "cellular service"), ("wifi", "wifi"),
                        ("location_service", "location service"), ("low_battery_mode", "low battery mode")):
    _getter_name = "get_cellular_service_status" if _column == "cellular" else f"get_{_column}_status"
    _register(_getter_name, _status_tool(_column, _label), action=False)
    _extra = (" Turning low battery mode on also turns off cellular service, wifi and location service."
              if _column == "low_battery_mode" else "")
    _register(_getter_name.replace("get_", "set_", 1), _setter_tool(_column, _label, _extra), action=True)


@tool(domain="setting", reads=(Table.SETTINGS,))
def get_current_location(world: World) -> dict[str, float]:
    """Get the current latitude and longitude of the device.

    Returns:
        A dictionary with keys latitude and longitude.
    """
    require_location_service(world)
    settings = world.table(Table.SETTINGS)
    return {"latitude": settings["latitude"][0], "longitude": settings["longitude"][0]}
