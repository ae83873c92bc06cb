"""Names from files are data on the terminal (issue 16): every command, run as a user would.

Each command gets a hostile trace (or user file, or file name): its stdout and stderr, read as
bytes, hold no control byte but newline and tab, no DEL, no C1 and no bidirectional control,
and the names are still there in their visible ``\\x1b`` form. ``--json`` stays exact.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from evil_names import (
    EVIL_FILE_NAME,
    EVIL_NAMES,
    EVIL_THREAD,
    unsafe_bytes,
    write_evil_trace,
)

from gpuviz.display import terminal_safe

ROOT = Path(__file__).resolve().parents[1]

# A user workload in a file with a hostile name, whose docstring and exception are hostile.
EVIL_USER_FILE = "wl-\x1b[31m<b>x\u202e.py"
EVIL_USER_SOURCE = '''
def ok(device, n: int = 3):
    """<b>doc</b>\\x1b]0;t\\x07 title"""
    return n * n


def boom(device, n: int = 3):
    raise ValueError("kernel \\x1b]52;c;cHduZWQ=\\x07<b>bad</b>\\u202e failed")
'''


def gpuviz(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen")
    return subprocess.run(
        [sys.executable, "-m", "gpuviz", *map(str, args)],
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=240,
    )


def assert_clean(r: subprocess.CompletedProcess[bytes]) -> None:
    assert not unsafe_bytes(r.stdout), r.stdout
    assert not unsafe_bytes(r.stderr), r.stderr


def shown(text: str) -> bytes:
    return terminal_safe(text, one_line=True).encode()


def stderr_lines(r: subprocess.CompletedProcess[bytes]) -> list[bytes]:
    # Qt's offscreen plugin may add its own warning; it is not ours and names no file.
    return [ln for ln in r.stderr.splitlines() if ln.strip() and b"propagateSizeHints" not in ln]


def test_summary_text_shows_every_name_escaped(evil_trace: Path) -> None:
    r = gpuviz("summary", evil_trace)
    assert r.returncode == 0, r.stderr
    assert_clean(r)
    for name in EVIL_NAMES:
        assert shown(name) in r.stdout, name
    assert shown(str(evil_trace)) in r.stdout
    # One line per kernel: a newline in a name does not break the table.
    table = r.stdout.split(b"Top 10 kernels")[1].split(b"\n\n")[0].splitlines()
    assert len(table) == 2 + len(EVIL_NAMES)


def test_summary_json_is_exact_and_printable(evil_trace: Path) -> None:
    r = gpuviz("summary", evil_trace, "--json")
    assert r.returncode == 0, r.stderr
    assert_clean(r)
    assert all(0x20 <= b < 0x7F for b in r.stdout.rstrip(b"\n")), "not printable ASCII"
    j = json.loads(r.stdout)
    assert {k["name"] for k in j["top_kernels"]} == set(EVIL_NAMES)  # the exact names
    assert j["sources"] == [str(evil_trace)]


def test_missing_file_with_a_hostile_name_is_one_clean_line(tmp_path: Path) -> None:
    missing = tmp_path / EVIL_FILE_NAME
    for command in (["summary", missing], ["export", missing, "-o", tmp_path / "o.json"]):
        r = gpuviz(*command)
        assert r.returncode == 2
        assert_clean(r)
        assert stderr_lines(r) == [
            f"gpuviz {command[0]}: ".encode() + shown(str(missing)) + b": no such file or folder"
        ]


def test_bad_file_with_a_hostile_name_is_one_clean_line(tmp_path: Path) -> None:
    bad = tmp_path / EVIL_FILE_NAME
    bad.write_text("not json \x1b[31m", encoding="utf-8")
    r = gpuviz("summary", bad)
    assert r.returncode == 2
    assert_clean(r)
    lines = stderr_lines(r)
    assert len(lines) == 1 and shown(str(bad)) in lines[0], r.stderr
    assert b"Traceback" not in r.stderr


def test_usage_error_quoting_a_hostile_argument_is_clean(tmp_path: Path) -> None:
    r = gpuviz("open", tmp_path, "--view", "<b>x</b>\x1b[31m\u202e")
    assert r.returncode == 2
    assert_clean(r)
    assert b"\\x1b[31m" in r.stderr


def test_export_prints_clean_paths_and_keeps_the_names_exact(
    evil_trace: Path, tmp_path: Path
) -> None:
    out = tmp_path / f"out-{EVIL_FILE_NAME}"
    r = gpuviz("export", evil_trace, "-o", out)
    assert r.returncode == 0, r.stderr
    assert_clean(r)
    assert r.stdout == shown(str(out)) + b"\n"
    # The exported file holds the exact names (only the display escapes).
    doc = json.loads(out.read_text(encoding="utf-8"))
    names = {e.get("name") for e in doc["traceEvents"]}
    assert set(EVIL_NAMES) <= names
    threads = {e["args"]["name"] for e in doc["traceEvents"] if e.get("name") == "thread_name"}
    assert EVIL_THREAD in threads
    # And it summarizes to the same exact names.
    a = json.loads(gpuviz("summary", evil_trace, "--json").stdout)
    b = json.loads(gpuviz("summary", out, "--json").stdout)
    assert a["top_kernels"] == b["top_kernels"]


def test_export_per_rank_and_its_errors_are_clean(evil_trace: Path, tmp_path: Path) -> None:
    folder = tmp_path / "ranks-\x1b[31m<b>"
    r = gpuviz("export", evil_trace, "--per-rank", folder)
    assert r.returncode == 0, r.stderr
    assert_clean(r)
    (written,) = folder.iterdir()
    with gzip.open(written, "rt", encoding="utf-8") as f:
        assert set(EVIL_NAMES) <= {e.get("name") for e in json.load(f)["traceEvents"]}
    r = gpuviz("export", evil_trace, "-o", tmp_path / "bad-\x1b]0;t\x07.txt")
    assert r.returncode == 2
    assert_clean(r)


@pytest.fixture
def evil_user_file(tmp_path: Path) -> Path:
    f = tmp_path / EVIL_USER_FILE
    f.write_text(EVIL_USER_SOURCE, encoding="utf-8")
    return f


def test_run_of_a_hostile_user_file_prints_clean_text_and_json(
    evil_user_file: Path, tmp_path: Path
) -> None:
    target = f"{evil_user_file}:ok"
    events = tmp_path / "events.jsonl"
    r = gpuviz("run", target, "--device", "cpu", "--steps", "1", "--no-profile", "--events", events)
    assert r.returncode == 0, r.stderr
    assert_clean(r)
    assert shown(target) in r.stdout
    r = gpuviz("run", target, "--device", "cpu", "--steps", "1", "--no-profile", "--json")
    assert r.returncode == 0, r.stderr
    assert_clean(r)
    assert json.loads(r.stdout)["workload"] == target  # exact
    # The recorded stream keeps the exact name too (the app replays it).
    first = json.loads(events.read_text(encoding="utf-8").splitlines()[0])
    assert first["workload"] == target


def test_failed_run_prints_a_clean_error_and_traceback(evil_user_file: Path) -> None:
    r = gpuviz("run", f"{evil_user_file}:boom", "--device", "cpu", "--steps", "1", "--no-profile")
    assert r.returncode == 1
    assert_clean(r)
    assert b"kernel \\x1b]52;c;cHduZWQ=\\x07<b>bad</b>\\u202e failed" in r.stderr
    assert b"Traceback" in r.stderr  # the user's own traceback, escaped


def test_unknown_user_function_names_the_file_cleanly(evil_user_file: Path) -> None:
    r = gpuviz("run", f"{evil_user_file}:missing", "--device", "cpu")
    assert r.returncode == 2
    assert_clean(r)
    assert shown(str(evil_user_file)) in r.stderr


def test_open_screenshot_of_a_hostile_trace_and_of_a_bad_one(
    evil_trace: Path, tmp_path: Path
) -> None:
    png = tmp_path / "shot.png"
    r = gpuviz("open", evil_trace, "--view", "kernels", "--screenshot", png, "--size", "900x600")
    assert r.returncode == 0, r.stderr
    assert_clean(r)
    assert png.stat().st_size > 0
    bad = tmp_path / f"bad-{EVIL_FILE_NAME}"
    bad.write_text("[[1, 2]]", encoding="utf-8")  # a memory-timeline file, not a trace
    r = gpuviz("open", evil_trace, bad, "--screenshot", png)
    assert r.returncode == 2
    assert_clean(r)
    lines = stderr_lines(r)
    assert len(lines) == 1 and shown(str(bad)) in lines[0], r.stderr


def test_uncaught_exceptions_are_printed_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    from gpuviz.cli import _safe_excepthook

    try:
        raise RuntimeError("name \x1b]0;pwned\x07 in a bug")
    except RuntimeError as exc:
        _safe_excepthook(type(exc), exc, exc.__traceback__)
    err = capsys.readouterr().err
    assert "RuntimeError: name \\x1b]0;pwned\\x07 in a bug" in err
    assert "\x1b" not in err and "\x07" not in err


def test_write_evil_trace_makes_the_file_it_names(tmp_path: Path) -> None:
    # The fixture's file name really holds the hostile characters (the OS keeps them).
    p = write_evil_trace(tmp_path)
    assert p.name == EVIL_FILE_NAME and "\x1b" in os.listdir(tmp_path)[0]
