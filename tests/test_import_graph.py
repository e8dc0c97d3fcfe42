"""The package's modules import each other without circles.

A circle makes the import order decide whether a name exists yet: whichever module of the circle is
imported first sees the others half-initialised, so a new top-level import elsewhere can break an
unrelated module. It also hides which module owns what: a shared piece belongs to one of them, or to
a small module both use.

What counts as an import:
- every import that runs, at module level or inside a function: a deferred import only postpones the
  circle to the first call, and the two modules still cannot be understood or tested apart;
- not the imports under `if TYPE_CHECKING:`, which never run and only name types for annotations;
- an explicit import of a package (`from pytest_toolsandbox.world import World`) is an import of its
  `__init__`, which grimp calls by the package's name: a submodule that imports its package's
  `__init__` while that `__init__` imports the submodule is a circle in Python's import order too;
- the implicit loading of a parent package when one of its submodules is imported is not an edge:
  Python finishes starting the parent before any submodule, and a submodule that does not import its
  parent never reads it, so an `__init__` that re-exports its submodules (`world/__init__.py`) is fine.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import grimp
import networkx as nx
import pytest

MAX_CYCLES_SHOWN = 20
"""Circles listed per group of entangled modules (a group of ten can hold dozens of circles)."""


def import_circles(package: str) -> list[list[list[str]]]:
    """The circles of runtime imports between the modules of `package`: one list per group of entangled
    modules (a strongly connected component), holding each circle through them as its modules from the
    alphabetically first one back to that one."""
    imports = grimp.build_graph(package, exclude_type_checking_imports=True, cache_dir=None)
    graph = nx.DiGraph()
    graph.add_nodes_from(imports.modules)
    graph.add_edges_from(
        (importer, imported)
        for importer in imports.modules
        for imported in imports.find_modules_directly_imported_by(importer)
    )
    groups = [graph.subgraph(component) for component in nx.strongly_connected_components(graph)]
    return sorted(
        sorted(_closed(cycle) for cycle in nx.simple_cycles(group)) for group in groups if group.number_of_edges()
    )


def _closed(cycle: list[str]) -> list[str]:
    """The cycle rotated to start at its first module by name, with that module repeated at the end."""
    start = cycle.index(min(cycle))
    rotated = cycle[start:] + cycle[:start]
    return [*rotated, rotated[0]]


def describe(groups: list[list[list[str]]]) -> str:
    """One line per circle (`a.b -> c.d -> a.b`), at most `MAX_CYCLES_SHOWN` per group of modules."""
    lines = [f"{sum(map(len, groups))} import circle(s) in {len(groups)} group(s) of modules:"]
    for circles in groups:
        lines += [" -> ".join(circle) for circle in circles[:MAX_CYCLES_SHOWN]]
        if len(circles) > MAX_CYCLES_SHOWN:
            modules = sorted({module for circle in circles for module in circle})
            lines.append(f"... and {len(circles) - MAX_CYCLES_SHOWN} more among {', '.join(modules)}")
    return "\n".join(lines)


def test_pytest_toolsandbox_has_no_import_circles() -> None:
    groups = import_circles("pytest_toolsandbox")

    if groups:
        pytest.fail(describe(groups), pytrace=False)


ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pytest_toolsandbox", "tests", "benchmarks", "scripts")


def missing_modules(root: Path, package: str, folders: tuple[str, ...]) -> list[str]:
    """`file:line: module` for every import of a module of `package` that names no module of the source
    tree under `root`.

    An editable install can still find a module that was moved away (its finder maps the package to
    another checkout), and grimp leaves an import of a module it does not know out of its graph: a
    stale import then passes both, and fails only on a clean machine."""

    def exists(module: str) -> bool:
        path = root.joinpath(*module.split("."))
        return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()

    found = []
    for folder in folders:
        for source in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
                names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                         else [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level
                         else [])
                found += [f"{source.relative_to(root)}:{node.lineno}: {name}" for name in names
                          if name.split(".")[0] == package and not exists(name)]
    return found


def test_every_import_of_the_package_names_one_of_its_modules() -> None:
    assert missing_modules(ROOT, "pytest_toolsandbox", SOURCES) == []


def test_a_moved_module_is_named_with_the_line_that_still_imports_it(tmp_path: Path) -> None:
    _write_package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/running/__init__.py": "",
        "pkg/running/resume.py": "",
        "pkg/front.py": "def later():\n    from pkg.resume import done\n    from pkg.running.resume import done\n",
    })

    assert missing_modules(tmp_path, "pkg", ("pkg",)) == ["pkg/front.py:2: pkg.resume"]


def _write_package(root: Path, files: dict[str, str]) -> None:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))


def test_the_check_finds_deferred_and_package_circles_and_skips_type_checking_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tiny package with one circle of each kind the check must see and two it must not."""
    _write_package(
        tmp_path,
        {
            "knot/__init__.py": "from knot.shout import shout\n\nVOLUME = 11\n",
            "knot/shout.py": "from knot import VOLUME\n\n\ndef shout():\n    return VOLUME\n",
            "knot/front.py": """
            def greet():
                from knot import helper  # deferred, still a circle

                return helper.name()
            """,
            "knot/helper.py": "import knot.front\n\n\ndef name():\n    return 'knot'\n",
            "knot/typed_a.py": """
            from typing import TYPE_CHECKING

            from knot.typed_b import B

            if TYPE_CHECKING:
                from knot.typed_b import Other
            """,
            "knot/typed_b.py": """
            from typing import TYPE_CHECKING

            if TYPE_CHECKING:
                from knot.typed_a import A


            class B: ...


            class Other: ...
            """,
            "knot/sub/__init__.py": "from knot.sub.leaf import value\n",
            "knot/sub/leaf.py": "value = 1\n",
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))

    groups = import_circles("knot")

    assert groups == [[["knot", "knot.shout", "knot"]], [["knot.front", "knot.helper", "knot.front"]]]
    assert describe(groups) == (
        "2 import circle(s) in 2 group(s) of modules:\n"
        "knot -> knot.shout -> knot\n"
        "knot.front -> knot.helper -> knot.front"
    )


def test_a_large_group_lists_its_first_circles_and_names_its_modules() -> None:
    hub = "pkg.hub"
    spokes = [f"pkg.spoke{number:02}" for number in range(MAX_CYCLES_SHOWN + 2)]
    groups = [[[hub, spoke, hub] for spoke in spokes]]

    lines = describe(groups).splitlines()

    assert lines[0] == f"{MAX_CYCLES_SHOWN + 2} import circle(s) in 1 group(s) of modules:"
    assert lines[1:-1] == [f"pkg.hub -> {spoke} -> pkg.hub" for spoke in spokes[:MAX_CYCLES_SHOWN]]
    assert lines[-1] == f"... and 2 more among {', '.join([hub, *spokes])}"
