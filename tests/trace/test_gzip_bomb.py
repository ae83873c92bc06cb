"""Padding and gzip bombs: a small .json.gz that inflates to gigabytes of whitespace.

Reading one must not take memory that grows with the padding, must show its progress as it
goes, and must stop at once when cancelled. (A 4 MB file holding 4 GiB of spaces inside
traceEvents used to run for minutes at a gigabyte and more, silently.)
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytest

from gpuviz.trace import jsonscan
from gpuviz.trace.errors import ImportCancelledError, TraceFormatError
from gpuviz.trace.kineto import load_trace

EVENTS = [
    {"ph": "X", "cat": "kernel", "name": f"k{i}", "pid": 0, "tid": 7, "ts": 10 * i, "dur": 2,
     "args": {"device": 0, "stream": 7}}
    for i in range(3)
]  # fmt: skip
MIB = 1 << 20
ROOT = Path(__file__).resolve().parents[2]

# Where the padding goes: text before it, and after it (it sits between the two).
PLACES = {
    "between events": ('{"traceEvents": [E0, E1, ', 'E2], "schemaVersion": 1}'),
    "before a comma": ('{"traceEvents": [E0, E1', ", E2]}"),
    "before the first event": ('{"traceEvents": [', "E0, E1, E2]}"),
    "after the events": ('{"traceEvents": [E0, E1, E2]', ', "schemaVersion": 1}'),
    "before the events": ('{"schemaVersion": 1, "traceEvents":', " [E0, E1, E2]}"),
    "in a bare list": ("[E0, ", "E1, E2]"),
}


def _text(template: str) -> bytes:
    for i, e in enumerate(EVENTS):
        template = template.replace(f"E{i}", json.dumps(e))
    return template.encode()


def write_bomb(path: Path, pad_mib: int, place: str = "between events") -> Path:
    """A gzip file with ``pad_mib`` MiB of spaces at ``place``, written without holding them."""
    head, tail = PLACES[place]
    c = zlib.compressobj(1, zlib.DEFLATED, 31)
    spaces = b" " * MIB
    with open(path, "wb") as f:
        f.write(c.compress(_text(head)))
        for _ in range(pad_mib):
            f.write(c.compress(spaces))
        f.write(c.compress(_text(tail)))
        f.write(c.flush())
    return path


def _plain(tmp_path: Path) -> Path:
    path = tmp_path / "plain.json"
    path.write_text(json.dumps({"traceEvents": EVENTS, "schemaVersion": 1}))
    return path


@pytest.mark.parametrize("place", list(PLACES))
def test_padding_anywhere_reads_as_the_same_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, place: str
) -> None:
    monkeypatch.setattr(jsonscan, "BLOCK_BYTES", 1 << 18)  # many blocks of padding
    bomb = load_trace(write_bomb(tmp_path / "bomb.json.gz", 16, place))
    plain = load_trace(_plain(tmp_path))
    assert bomb.event_count == 3
    np.testing.assert_array_equal(bomb.slices.start_ns, plain.slices.start_ns)
    np.testing.assert_array_equal(bomb.slices.dur_ns, plain.slices.dur_ns)
    assert bomb.symbols.lookup(bomb.slices.name) == ["k0", "k1", "k2"]


def test_padding_read_by_the_import_children_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKER_MIN_BYTES", "0")
    monkeypatch.setattr(jsonscan, "BLOCK_BYTES", 1 << 18)
    bomb = load_trace(write_bomb(tmp_path / "bomb.json.gz", 16))
    assert bomb.symbols.lookup(bomb.slices.name) == ["k0", "k1", "k2"]


def _peak_bytes(path: Path) -> int:
    tracemalloc.start()
    try:
        load_trace(path)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("place", ["between events", "after the events", "before the events"])
def test_memory_does_not_grow_with_the_padding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, place: str
) -> None:
    # Small blocks: the reader holds a few at a time (the inflating thread runs two ahead), so
    # the peak is a few blocks whatever the padding; growth with it would show as megabytes.
    block = 1 << 18
    monkeypatch.setattr(jsonscan, "BLOCK_BYTES", block)
    small = _peak_bytes(write_bomb(tmp_path / "small.json.gz", 16, place))
    big = _peak_bytes(write_bomb(tmp_path / "big.json.gz", 128, place))
    # 112 MiB more padding, and the peak moves by a few blocks at most (timing decides how far
    # the inflating thread runs ahead): nothing like the padding.
    assert big < small + 16 * block, (small, big)
    assert big < 32 * block, big


def test_a_bomb_reports_progress_all_along(tmp_path: Path) -> None:
    path = write_bomb(tmp_path / "bomb.json.gz", 128)
    seen: list[float] = []
    load_trace(path, progress=seen.append)
    reading = [f for f in seen if f < 0.9]
    # 128 MiB of spaces is 32 blocks; their compressed bytes are well under one file read.
    assert len(reading) >= 16, seen
    assert reading == sorted(reading) and seen[-1] == 1.0


def test_cancel_stops_a_bomb_at_once(tmp_path: Path) -> None:
    path = write_bomb(tmp_path / "bomb.json.gz", 128)
    seen: list[float] = []
    asked: list[int] = []

    def cancelled() -> bool:
        if not asked and len(seen) >= 4:
            asked.append(len(seen))
        return bool(asked)

    with pytest.raises(ImportCancelledError):
        load_trace(path, progress=seen.append, cancelled=cancelled)
    assert asked and len(seen) - asked[0] <= 3  # stopped within a block or so
    assert max(seen) < 0.5


def test_padding_inside_one_event_is_refused_past_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Inside an event the text is carried until the event ends: it is bounded by the limit.
    monkeypatch.setattr(jsonscan, "MAX_EVENT_BYTES", 2 * MIB)
    monkeypatch.setattr(jsonscan, "BLOCK_BYTES", 1 << 18)
    head = '{"traceEvents": [E0, {"ph": "X", "name": "k", '
    PLACES["inside an event"] = (head, '"ts": 1, "dur": 1}]}')
    try:
        path = write_bomb(tmp_path / "bomb.json.gz", 8, "inside an event")
    finally:
        del PLACES["inside an event"]
    with pytest.raises(TraceFormatError) as info:
        load_trace(path)
    assert info.value.what == "an event larger than 2 MiB"
    start = len(_text(head)) - len('{"ph": "X", "name": "k", ')
    assert info.value.where == f"byte {start}"


# ----------------------------------------------------------------------------- the CLI


def _gpuviz_on_a_terminal(*args: str, **env: str) -> tuple[subprocess.Popen[bytes], int]:
    """``gpuviz ARGS`` with stderr on a pseudo-terminal (stdout a pipe), in a process group of
    its own (Ctrl-C reaches the whole group); the pty's master fd."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuviz", *args],
        stdout=subprocess.PIPE,
        stderr=slave,
        env=dict(os.environ, PYTHONPATH=str(ROOT), TERM="xterm", COLUMNS="100", **env),
        start_new_session=True,
    )
    os.close(slave)
    return proc, master


def _read_pty(master: int, until: bytes | None = None, timeout_s: float = 120.0) -> bytes:
    """What the terminal got: all of it, or up to ``until``."""
    got = b""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if not ready:
            continue
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        got += data
        if until is not None and until in got:
            break
    return got


def test_a_long_read_shows_its_progress_on_a_terminal_only(tmp_path: Path) -> None:
    path = write_bomb(tmp_path / "bomb.json.gz", 256)
    proc, master = _gpuviz_on_a_terminal("summary", str(path), "--json")
    try:
        seen = _read_pty(master)
        out, _ = proc.communicate(timeout=120)
    finally:
        os.close(master)
    assert proc.returncode == 0
    assert json.loads(out)["events"] == 3
    text = seen.decode("utf-8", "replace")
    assert "reading bomb.json.gz" in text and "%" in text, text
    # Not a terminal: not a byte of it.
    r = subprocess.run(
        [sys.executable, "-m", "gpuviz", "summary", str(path), "--json"],
        capture_output=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        timeout=120,
    )
    assert r.returncode == 0 and r.stderr == b""


@pytest.mark.slow
def test_ctrl_c_stops_reading_a_gigabyte_bomb_at_once_in_bounded_memory(tmp_path: Path) -> None:
    import psutil

    path = write_bomb(tmp_path / "bomb.json.gz", 1024)  # 1 GiB of spaces in a few MB
    assert path.stat().st_size < 8 * MIB
    # With the import's child processes on: Ctrl-C reaches them too, and they must go quietly.
    proc, master = _gpuviz_on_a_terminal("summary", str(path), GPUVIZ_IMPORT_WORKER_MIN_BYTES="0")
    try:
        assert b"reading" in _read_pty(master, until=b"reading")
        me = psutil.Process(proc.pid)
        rss = []
        for _ in range(20):  # two seconds of reading padding
            rss.append(sum(p.memory_info().rss for p in [me, *me.children()]))
            time.sleep(0.1)
        children = me.children()
        assert proc.poll() is None, "still reading"
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C does: the whole process group
        proc.wait(timeout=30)
        took = time.monotonic() - t0
        tail = _read_pty(master, timeout_s=2)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert proc.returncode == 130
    assert took < 2.0, took
    assert b"cancelled" in tail and b"Traceback" not in tail
    assert children and not any(c.is_running() and c.status() != "zombie" for c in children)
    assert max(rss) < 200 * MIB, max(rss)  # python, numpy and a few blocks: not the padding
