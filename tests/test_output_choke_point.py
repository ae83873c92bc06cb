"""Text for the user's terminal goes through one place: ``gpuviz.display.echo`` (issue 16).

The CLI and the app print names from files (kernels, paths, a user's exception). A bare
``print`` or ``traceback.print_exc`` would write a crafted name's escape sequences to the
terminal as they are, so in the modules that talk to the user (``gpuviz/cli/``,
``gpuviz/commands/``, ``gpuviz/gui/``) there is none: they call ``echo``, ``echo_traceback`` or
``json_text`` instead. The engine's child processes write their own protocol and are not
covered here.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "gpuviz"
USER_FACING = [*sorted((ROOT / "cli").rglob("*.py")), *sorted((ROOT / "commands").rglob("*.py"))]
USER_FACING += sorted((ROOT / "gui").rglob("*.py"))
# The agents' server answers through the MCP SDK; a bare print would also corrupt its stdout.
USER_FACING += sorted((ROOT / "agents").rglob("*.py"))
TRACEBACK_PRINTERS = {"print_exc", "print_exception", "print_tb", "print_stack", "print_last"}


def _bare_prints(path: Path) -> list[str]:
    """``print(...)`` and ``traceback.print_*(...)`` calls in ``path`` (a rich console's own
    ``console.print`` of escaped text is not one)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "print":
            name = "print"
        elif (
            isinstance(f, ast.Attribute)
            and isinstance(f.value, ast.Name)
            and f.value.id == "traceback"
            and f.attr in TRACEBACK_PRINTERS
        ):
            name = f"traceback.{f.attr}"
        else:
            continue
        found.append(f"{path.name}:{node.lineno}: {name}(...)")
    return found


def test_user_facing_modules_print_only_through_echo() -> None:
    assert len(USER_FACING) > 20  # the globs found the package
    found = [hit for path in USER_FACING for hit in _bare_prints(path)]
    assert not found, "use gpuviz.display.echo / echo_traceback:\n" + "\n".join(found)


def test_the_check_finds_a_bare_print(tmp_path: Path) -> None:
    f = tmp_path / "x.py"
    f.write_text("import traceback\nprint(1)\ntraceback.print_exc()\necho(2)\nconsole.print(3)\n")
    assert [h.split(": ")[1] for h in _bare_prints(f)] == [
        "print(...)",
        "traceback.print_exc(...)",
    ]
