"""The format strings a scenario may use in `fill_from` (its `formats` and the `{placeholders}` of the
text they fill).

`str.format` is a small language: `{num.bar}` reads attributes, `{0[1]}` indexes, `{:>300000000}` asks
for a 300 MB string. A scenario file is data, so only plain replacement fields are allowed — a name
(or nothing), an optional `!r`/`!s`, and a short numeric/alignment spec — checked when the file loads.
"""

from __future__ import annotations

import re
import string

_SPEC = re.compile(r"(.?[<>=^])?[+\- ]?z?#?0?(\d{1,3})?[,_]?(\.\d{1,2})?[bcdeEfFgGnosxX%]?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_format(text: str, names: set[str] | None) -> None:
    """Raise ValueError unless every field of `text` is plain: `{}` when `names` is None (a format
    applied to one value), else `{name}` with a name from `names`."""
    try:
        fields = [(name, spec, conversion) for _, name, spec, conversion in string.Formatter().parse(text)
                  if name is not None]
    except ValueError as error:
        raise ValueError(f"{text!r} is not a valid format string ({error}); write {{ and }} as {{{{ and }}}}") from None
    for name, spec, conversion in fields:
        if names is None and name != "":
            raise ValueError(f"format {text!r}: use {{}} (optionally with a spec such as {{:.2f}}), not {{{name}}}")
        if names is not None and (not _NAME.fullmatch(name) or name not in names):
            raise ValueError(f"placeholder {{{name}}} in {text!r} is not one of the fill_from values "
                             f"{sorted(names)} (attribute and index access are not allowed)")
        if conversion not in (None, "r", "s"):
            raise ValueError(f"format {text!r}: conversion !{conversion} is not allowed; use !r or !s")
        if spec and ("{" in spec or not _SPEC.fullmatch(spec)):
            raise ValueError(f"format {text!r}: spec {spec!r} is not allowed; use a short spec such as .2f, "
                             ">8 or 05d (width at most 999)")
