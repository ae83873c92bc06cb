"""DESIGN.md's layering table, checked by importing each module in a fresh interpreter."""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import gpuviz

QT = ("PySide6", "pyqtgraph", "shiboken6")
TORCH = ("torch",)

# module prefix -> top-level packages it must never load at import time
FORBIDDEN = {
    "gpuviz.trace": QT + TORCH,
    "gpuviz.analysis": QT + TORCH,
    "gpuviz.workloads": QT + TORCH,
    "gpuviz.engine": QT,
    "gpuviz.gui": TORCH,
    "gpuviz.cli": QT + TORCH + ("numpy",),
    "gpuviz.commands": QT + TORCH,
    # the agents' server (gpuviz mcp): Qt never (tests/test_mcp.py checks after every tool),
    # torch never at import (profile's engine runs in a child process)
    "gpuviz.agents": QT + TORCH,
    # text and JSON of analysis results, below both commands and agents (DESIGN.md)
    "gpuviz.report": QT + TORCH,
}


def _modules() -> list[str]:
    root = Path(gpuviz.__file__).parent
    names = ["gpuviz.cli"]
    for info in pkgutil.walk_packages([str(root)], prefix="gpuviz."):
        if info.name.startswith(tuple(FORBIDDEN)) and not info.name.endswith("__main__"):
            names.append(info.name)
    return sorted(set(names))


def _loaded_after_import(module: str) -> list[str]:
    code = (
        f"import importlib, json, sys; importlib.import_module({module!r}); "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.parametrize("module", _modules())
def test_module_respects_layering(module: str) -> None:
    rule = next(v for k, v in FORBIDDEN.items() if module == k or module.startswith(k + "."))
    loaded = set(_loaded_after_import(module))
    assert not loaded & set(rule), f"{module} imports {sorted(loaded & set(rule))} at import time"


def test_the_check_can_fail() -> None:
    # Guard against a vacuous test: importing a Qt module must show Qt as loaded.
    assert "PySide6" in _loaded_after_import("PySide6.QtCore")


def test_every_layer_is_checked() -> None:
    mods = _modules()
    for layer in (
        "gpuviz.trace",
        "gpuviz.analysis",
        "gpuviz.cli",
        "gpuviz.agents",
        "gpuviz.report",
    ):
        assert any(m == layer or m.startswith(layer + ".") for m in mods)


# --------------------------------------------------------------------------- import circles
#
# A module's dependencies are the gpuviz modules it imports anywhere in its file: at module
# level, and also inside functions. A lazy import inside a function still makes the two
# modules depend on each other (both circles that issue 15 broke, engine.runner <->
# engine.multiprocess and trace.kineto_decode <-> trace.kineto_worker, went through imports
# inside functions), so it counts the same. Imports under ``if TYPE_CHECKING:`` are left out:
# they never run, and annotations may name a module above (a canvas names its widget's class).
# ``from pkg import name`` depends on ``pkg.name`` when that is a module, else on ``pkg``.


def _module_files(root: Path, package: str) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*.py"):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement outside ``if TYPE_CHECKING:`` blocks, with the names it imports."""
    found: list[tuple[ast.Import | ast.ImportFrom, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.extend((node, a.name) for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph(root: Path, package: str) -> dict[str, dict[str, int]]:
    """``module -> {imported module: line}`` for the modules of ``package`` (at ``root``)."""
    files = _module_files(root, package)

    def known(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, dict[str, int]] = {m: {} for m in files}
    for module, path in files.items():
        here = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node, name in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                target = name
            else:
                base = node.module or ""
                if node.level:
                    parts = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                target = f"{base}.{name}" if f"{base}.{name}" in files else base
            dep = known(target) if target.split(".")[0] == package else None
            if dep is not None and dep != module:
                graph[module].setdefault(dep, node.lineno)
    return graph


def import_circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, deps = work[-1]
            w = next(deps, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    group.append(m)
                    if m == v:
                        break
                if len(group) > 1:
                    circles.append(sorted(group))
    return circles


def test_no_import_circles_inside_gpuviz() -> None:
    root = Path(gpuviz.__file__).parent
    graph = import_graph(root, "gpuviz")
    circles = import_circles(graph)
    detail = [
        " <-> ".join(g)
        + ": "
        + "; ".join(f"{a} imports {b} (line {graph[a][b]})" for a in g for b in g if b in graph[a])
        for g in circles
    ]
    assert not circles, "import circles:\n" + "\n".join(detail)


def test_the_circle_check_can_fail(tmp_path: Path) -> None:
    # A lazy circle (b imports a inside a function) and a relative import are both found;
    # an import only for type checking is not a dependency.
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from . import a\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.d\n"
    )
    (pkg / "d.py").write_text("import pkg.c\n")
    graph = import_graph(pkg, "pkg")
    assert graph["pkg.sub.b"] == {"pkg.sub.a": 2}
    assert graph["pkg.c"] == {}
    assert import_circles(graph) == [["pkg.sub.a", "pkg.sub.b"]]


# --------------------------------------------------------------------------- siblings
#
# ``gpuviz.commands`` (the CLI) and ``gpuviz.agents`` (the MCP server) are siblings: what both
# print lives in ``gpuviz.report`` below them (issue 48). Read from the source, so an import
# inside a function, or one only for type checking, counts: the import-time check above sees
# neither. ``commands/mcp.py`` alone may import the agents, to start the server.

SIBLING_RULES = (
    # (layer, what no module of it may import, modules of it that may)
    ("agents", ("commands",), ()),
    ("commands", ("agents",), ("commands.mcp",)),
    ("report", ("commands", "agents", "PySide6", "pyqtgraph", "shiboken6", "torch"), ()),
)


def _all_imports(path: Path, module: str) -> dict[str, int]:
    """Every module name ``path`` (the module ``module``) imports, anywhere in the file, made
    absolute, with its first line: ``from a import b`` names both ``a`` and ``a.b``."""
    here = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = here.split(".")[: len(here.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            names = [base, *(f"{base}.{a.name}" for a in node.names)]
        for name in names:
            found.setdefault(name, node.lineno)
    return found


def layer_breaches(root: Path, package: str) -> list[str]:
    """``module imports name (line N)`` for each import :data:`SIBLING_RULES` forbids in the
    package ``package`` at ``root``."""
    out = []
    for module, path in sorted(_module_files(root, package).items()):
        for layer, banned, allowed in SIBLING_RULES:
            prefix = f"{package}.{layer}"
            if not (module == prefix or module.startswith(prefix + ".")):
                continue
            if module in {f"{package}.{a}" for a in allowed}:
                continue
            full = [f"{package}.{b}" if b in ("commands", "agents") else b for b in banned]
            for name, line in _all_imports(path, module).items():
                if any(name == b or name.startswith(b + ".") for b in full):
                    out.append(f"{module} imports {name} (line {line})")
    return out


def test_commands_and_agents_are_siblings_above_report() -> None:
    root = Path(gpuviz.__file__).parent
    assert not layer_breaches(root, "gpuviz"), "\n".join(layer_breaches(root, "gpuviz"))
    # it read the package: the server is started from commands/mcp.py, and both sides use report
    files = _module_files(root, "gpuviz")
    assert "gpuviz.agents.server" in _all_imports(
        files["gpuviz.commands.mcp"], "gpuviz.commands.mcp"
    )
    answers = _all_imports(files["gpuviz.agents.answers"], "gpuviz.agents.answers")
    assert "gpuviz.report.findings" in answers


def test_the_sibling_check_can_fail(tmp_path: Path) -> None:
    # A lazy import, a relative one and one for type checking are all found; commands/mcp.py
    # may start the server; report may import analysis but not torch.
    pkg = tmp_path / "pkg"
    for sub in ("agents", "commands", "report", "analysis"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "agents" / "answers.py").write_text("def f():\n    from pkg.commands.advise import g\n")
    (pkg / "agents" / "server.py").write_text("from pkg.report import tables\n")
    (pkg / "commands" / "advise.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..agents import answers\n"
    )
    (pkg / "commands" / "mcp.py").write_text("from pkg.agents.server import build\n")
    (pkg / "report" / "tables.py").write_text(
        "from pkg.analysis import x\ndef f():\n    import torch.nn\n"
    )
    assert layer_breaches(pkg, "pkg") == [
        "pkg.agents.answers imports pkg.commands.advise (line 2)",
        "pkg.agents.answers imports pkg.commands.advise.g (line 2)",
        "pkg.commands.advise imports pkg.agents (line 3)",
        "pkg.commands.advise imports pkg.agents.answers (line 3)",
        "pkg.report.tables imports torch.nn (line 3)",
    ]


# --------------------------------------------------------------------------- module size

MAX_LINES = 600
"""No module over this many lines (STYLE.md; issue 48 split the 750-799-line ones)."""

OVER_MAX_LINES: dict[str, str] = {
    # path under gpuviz/ -> why it is longer (each entry is a debt, not a licence); none now:
    # kineto_columns.py (709) gave its phase codes, args fields and time checks to
    # kineto_fields.py
}


def _line_counts(root: Path) -> dict[str, int]:
    # As `wc -l` counts: newline bytes (a last line without one is not counted).
    return {p.relative_to(root).as_posix(): p.read_bytes().count(b"\n") for p in root.rglob("*.py")}


def test_no_module_is_over_600_lines_unless_allowed() -> None:
    counts = _line_counts(Path(gpuviz.__file__).parent)
    over = {name: n for name, n in counts.items() if n > MAX_LINES and name not in OVER_MAX_LINES}
    assert not over, f"split these along a real seam (or explain them in OVER_MAX_LINES): {over}"
    assert len(counts) > 50 and max(counts.values()) > MAX_LINES / 2  # it read the package


def test_the_allow_list_is_short_and_current() -> None:
    # An entry for a module that is gone or back under the limit is removed, so the list
    # only ever names real debts; each says why.
    counts = _line_counts(Path(gpuviz.__file__).parent)
    stale = sorted(name for name in OVER_MAX_LINES if counts.get(name, 0) <= MAX_LINES)
    assert not stale, f"no longer over {MAX_LINES} lines: remove from OVER_MAX_LINES: {stale}"
    assert all(len(why) > 10 for why in OVER_MAX_LINES.values())
    assert len(OVER_MAX_LINES) <= 8


def test_the_size_check_can_fail(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "small.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "no_last_newline.py").write_text("x = 1\n" * (MAX_LINES - 1) + "x = 1")
    assert _line_counts(tmp_path) == {
        "big.py": MAX_LINES + 1,
        "small.py": MAX_LINES,
        "no_last_newline.py": MAX_LINES - 1,
    }


def test_timeline_parts_do_not_import_their_owner() -> None:
    # The canvas and painter are given a viewport and a model/controls interface
    # (gui/timeline/timeline_model.py), not the QtTimeline that owns them: not even for type
    # checking, which the circle check above does not count.
    root = Path(gpuviz.__file__).parent / "gui" / "timeline"
    for name in ("qt_timeline_canvas.py", "qt_timeline_painter.py"):
        tree = ast.parse((root / name).read_text(encoding="utf-8"))
        imported = {
            n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
        } | {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert "gpuviz.gui.timeline.qt_timeline" not in imported, name
        assert "gpuviz.gui.timeline.viewport" in imported, name  # it read the imports
