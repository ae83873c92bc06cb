"""The ``gpuviz`` console script's exit (``gpuviz.cli.entry``): a command that only reads files
leaves without the interpreter's finalization, with all its output out; others exit normally."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpuviz.cli import main

TRACE = Path(__file__).parent / "data" / "dataparallel_4gpu.json.gz"

# Runs the console script's entry with an atexit function that says it ran.
ENTRY = (
    "import atexit, sys\n"
    "atexit.register(lambda: print('atexit ran', file=sys.stderr))\n"
    "sys.argv = ['gpuviz', *sys.argv[1:]]\n"
    "from gpuviz.cli import entry\n"
    "entry()\n"
)


def _entry(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", ENTRY, *argv], capture_output=True, text=True, timeout=300
    )


def test_a_file_reading_command_leaves_at_once_with_all_its_output(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["summary", str(TRACE), "--json", "--no-cache"]) == 0
    want = capsys.readouterr().out
    got = _entry("summary", str(TRACE), "--json", "--no-cache")
    assert got.returncode == 0, got.stderr
    assert got.stdout == want  # flushed whole before leaving
    assert "atexit ran" not in got.stderr  # no finalization


def test_its_exit_code_is_kept() -> None:
    got = _entry("summary", str(TRACE.with_name("no-such-trace.json")))
    assert got.returncode == 2
    assert "no such file or folder" in got.stderr
    assert "atexit ran" not in got.stderr


def test_other_commands_exit_normally() -> None:
    got = _entry("workloads")
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip()
    assert "atexit ran" in got.stderr


def test_python_m_gpuviz_goes_through_the_entry() -> None:
    got = subprocess.run(
        [sys.executable, "-m", "gpuviz", "summary", str(TRACE.with_name("no-such.json"))],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert got.returncode == 2 and "no such file or folder" in got.stderr
