"""Command line: `python -m pytest_toolsandbox tools|run …`."""

from __future__ import annotations

import sys

from pytest_toolsandbox.cli import main

if __name__ == "__main__":
    sys.exit(main())
