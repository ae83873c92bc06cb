"""Hostile allocator snapshots: bad values, deep nesting and bombs are bad input, never a crash."""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from subproc import gpuviz_env
from test_allocator_snapshot import tiny_snapshot

from gpuviz.trace import snapshot_pickle
from gpuviz.trace.allocator_snapshot import (
    MAX_BYTES,
    MAX_DEVICES,
    load_snapshot,
    snapshot_from_data,
)
from gpuviz.trace.errors import TraceFormatError

MIB = 1 << 20


def _set(snap: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    obj: Any = snap
    keys = path.split("/")
    for k in keys[:-1]:
        obj = obj[int(k)] if isinstance(obj, list) else obj[k]
    obj[keys[-1]] = value
    return snap


@pytest.mark.parametrize(
    ("path", "value", "place"),
    [
        ("segments/0/blocks/0/size", -(2**40), r"segments\[0\]\.blocks\[0\]: 'size' is -"),
        ("segments/0/blocks/1/size", MAX_BYTES + 1, r"segments\[0\]\.blocks\[1\]: 'size'"),
        ("segments/0/blocks/0/requested_size", -1, "'requested_size' is -1"),
        ("segments/0/blocks/0/address", -4096, "'address' is -4096"),
        ("segments/0/total_size", -5, r"segments\[0\]: 'total_size' is -5"),
        ("segments/0/allocated_size", -5, "'allocated_size' is -5"),
        ("segments/0/address", -1, "'address' is -1"),
        ("segments/0/stream", -1, "'stream' is -1"),
        ("segments/0/device", -1, "'device' is -1"),
        ("segments/0/device", 10**9, "'device' is 1,000,000,000"),
        ("device_traces/0/1/size", -1, r"device_traces\[0\]\[1\]: 'size' is -1"),
        ("device_traces/0/1/addr", -8, r"device_traces\[0\]\[1\]: 'addr' is -8"),
        ("device_traces/0/1/time_us", -3, "'time_us' is -3"),
        ("device_traces/0/1/time_us", 2**62, "'time_us' is 4,611,686,018,427,387,904"),
        ("device_traces/0/1/stream", -2, "'stream' is -2"),
        ("device_traces/0/2/device_free", -1, r"device_traces\[0\]\[2\]: 'device_free' is -1"),
        ("device_traces/0/2/size", 2**62, "'size' is 4,611,686,018,427,387,904: more than"),
        ("external_annotations/0/time_us", -1, "'time_us' is -1"),
    ],
)
def test_negative_or_absurd_values_are_refused(path: str, value: int, place: str) -> None:
    snap = _set(tiny_snapshot(), path, value)
    with pytest.raises(TraceFormatError, match=place):
        snapshot_from_data(snap, "s.pickle")


def test_the_tiny_snapshot_itself_is_valid() -> None:
    # the cases above differ from it in one value only
    assert len(snapshot_from_data(tiny_snapshot(), "s.pickle").trace_columns(0)) == 3


def test_a_bad_value_of_an_oom_entry_names_that_entry() -> None:
    # the OOM entries' device_free is read apart from the others' addr: the message must still
    # give the entry's place in the trace, not its place among the OOM entries
    snap = _set(tiny_snapshot(), "device_traces/0/2/device_free", "x")
    with pytest.raises(TraceFormatError, match=r"device_traces\[0\]\[2\]: 'device_free' is 'x'"):
        snapshot_from_data(snap, "s.pickle")


def test_an_oom_may_name_an_absurd_request() -> None:
    # Real data (the H100 OOM test asks for 16 TiB): an OOM's size is the request, not a block.
    snap = _set(tiny_snapshot(), "device_traces/0/2/size", 16 * MAX_BYTES)
    assert snap["device_traces"][0][2]["action"] == "oom"
    cols = snapshot_from_data(snap, "s.pickle").trace_columns(0)
    assert int(cols.size_bytes[2]) == 16 * MAX_BYTES
    with pytest.raises(TraceFormatError, match="'size'"):  # a block or an alloc may not
        snapshot_from_data(_set(tiny_snapshot(), "device_traces/0/1/size", 16 * MAX_BYTES), "s")


def test_too_many_devices_is_refused_before_a_loop_per_device() -> None:
    snap = {"segments": [], "device_traces": [[] for _ in range(MAX_DEVICES + 1)]}
    with pytest.raises(TraceFormatError, match="devices"):
        snapshot_from_data(snap, "s.pickle")


def test_an_absurd_frame_line_is_not_an_overflow() -> None:
    snap = tiny_snapshot()
    snap["device_traces"][0][1]["frames"] = [{"filename": "/u/a.py", "line": 2**70, "name": "f"}]
    s = snapshot_from_data(snap, "s.pickle")
    assert ("/u/a.py", 0, "f") in s.stack_frames(int(s.trace_columns(0).stack[1]))


# -- nesting ---------------------------------------------------------------------------------


def _deep_tuple_key(depth: int) -> bytes:
    """A dict whose key is a ``depth``-deep nested tuple: TUPLE1 ``depth`` times (1 byte each)."""
    return b"\x80\x02}" + b")" + b"\x85" * depth + b"K\x01s."


def _run_memory(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuviz", "memory", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=gpuviz_env(),
    )


def test_a_million_deep_tuple_key_is_bad_input_not_a_segfault(tmp_path: Path) -> None:
    path = tmp_path / "deep.pickle"
    path.write_bytes(_deep_tuple_key(1_000_000))
    # plain pickle.loads dies of it (SIGSEGV: hashing the key recurses in C)
    plain = subprocess.run(
        [sys.executable, "-c", f"import pickle; pickle.loads(open({str(path)!r}, 'rb').read())"],
        capture_output=True,
        timeout=120,
    )
    assert plain.returncode != 0
    proc = _run_memory(path)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and str(path) in proc.stderr


def test_deep_tuples_where_names_belong_are_bad_input(tmp_path: Path) -> None:
    # a 1,000,000-deep tuple (pickle.dumps cannot write one) where a name belongs: written as a
    # placeholder string, whose opcode is then replaced (protocol 2: no frame lengths to fix;
    # the placeholder's memo entry, and so every later reference, becomes the tuple)
    snap = tiny_snapshot()
    # (an action or a block state that is not a string is refused by its type first: issue 47,
    # item 15; see test_wrong_structure_is_bad_input_naming_the_place)
    snap["segments"][0]["blocks"][0]["state"] = "DEEPDEEP"
    snap["device_traces"][0][1]["frames"] = [{"filename": "DEEPDEEP", "line": 1, "name": "f"}]
    data = pickle.dumps(snap, protocol=2)
    placeholder = b"X\x08\x00\x00\x00DEEPDEEP"
    assert data.count(placeholder) == 1
    path = tmp_path / "deep_values.pickle"
    path.write_bytes(data.replace(placeholder, b")" + b"\x85" * 1_000_000))
    proc = _run_memory(path)
    assert proc.returncode == 2, proc.stderr
    assert "nested too deeply" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_more_possible_tuple_levels_than_the_stack_holds_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        snapshot_pickle, "STACK_BYTES", 1000 * snapshot_pickle.STACK_BYTES_PER_LEVEL
    )
    path = tmp_path / "deep.pickle"
    path.write_bytes(_deep_tuple_key(1001))
    with pytest.raises(TraceFormatError, match="nest tuples"):
        load_snapshot(path)
    path.write_bytes(_deep_tuple_key(900))  # within the stack: read, then not a snapshot
    with pytest.raises(TraceFormatError, match="not a CUDA allocator snapshot"):
        load_snapshot(path)


# -- size ------------------------------------------------------------------------------------


def write_padding_bomb(path: Path, pad_mib: int, pieces: int = 1) -> Path:
    """A snapshot-shaped .pickle.gz with ``pad_mib`` MiB of spaces in ``pieces`` strings
    (BINUNICODE8), written without holding them."""
    c = zlib.compressobj(1, zlib.DEFLATED, 31)
    mib = b" " * MIB
    with open(path, "wb") as f:
        f.write(
            c.compress(
                b"\x80\x04}\x94(\x8c\x08segments\x94]\x8c\x0ddevice_traces\x94]\x8c\x07padding\x94("
            )
        )
        for _ in range(pieces):
            per = pad_mib // pieces
            f.write(c.compress(b"\x8d" + struct.pack("<Q", per * MIB)))
            for _ in range(per):
                f.write(c.compress(mib))
        f.write(c.compress(b"lu."))
        f.write(c.flush())
    return path


def test_the_bomb_writer_makes_a_snapshot(tmp_path: Path) -> None:
    path = write_padding_bomb(tmp_path / "small.pickle.gz", 2, 2)
    assert snapshot_pickle.load_snapshot_data(path)["padding"] == [" " * MIB] * 2


def _peak_rss_mib(path: Path) -> tuple[int, str]:
    code = (
        "import re\n"
        "from gpuviz.trace.allocator_snapshot import load_snapshot\n"
        "try:\n"
        f"    load_snapshot({str(path)!r})\n"
        "except Exception as e:\n"
        "    print(e)\n"
        # VmHWM, this process's own peak: getrusage's ru_maxrss carries the forking parent's
        # peak across exec (pytest's 1.5 GB late in a full run read as the child's).
        "status = open('/proc/self/status').read()\n"
        "print(int(re.search(r'VmHWM:\\s+(\\d+)', status).group(1)) // 1024)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=gpuviz_env()
    )
    *msg, rss = out.stdout.strip().splitlines()
    return int(rss), "\n".join(msg)


@pytest.mark.slow
def test_a_gigabyte_string_is_refused_before_it_is_read(tmp_path: Path) -> None:
    bomb = write_padding_bomb(tmp_path / "bomb.pickle.gz", 1024)
    assert bomb.stat().st_size < 8 * MIB
    rss, msg = _peak_rss_mib(bomb)
    assert "1,073,741,824 bytes" in msg
    assert rss < 200, rss  # before: 2.1 GB


@pytest.mark.slow
def test_a_gzip_bomb_of_many_strings_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    bomb = write_padding_bomb(tmp_path / "bomb.pickle.gz", 1024, 8)
    rss, msg = _peak_rss_mib(bomb)
    assert "gzip bomb" in msg
    limit = bomb.stat().st_size * snapshot_pickle.MAX_GZIP_RATIO + snapshot_pickle.GZIP_SLACK_BYTES
    assert rss < (limit >> 20) + 150, rss  # before: 1.2 GB


def test_object_and_ratio_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bomb = write_padding_bomb(tmp_path / "b.pickle.gz", 4, 1)
    monkeypatch.setattr(snapshot_pickle, "MAX_OBJECT_BYTES", 2 * MIB)
    with pytest.raises(TraceFormatError, match="4,194,304 bytes"):
        load_snapshot(bomb)
    monkeypatch.setattr(snapshot_pickle, "MAX_OBJECT_BYTES", 256 * MIB)
    monkeypatch.setattr(snapshot_pickle, "GZIP_SLACK_BYTES", 0)
    with pytest.raises(TraceFormatError, match="gzip bomb"):
        load_snapshot(bomb)
    monkeypatch.setattr(snapshot_pickle, "GZIP_SLACK_BYTES", 8 * MIB)
    assert load_snapshot(bomb).devices() == []  # within both limits: read


def test_deep_lists_and_dicts_are_bad_input(tmp_path: Path) -> None:
    # lists and dicts never reach an unguarded C recursion: a 1,000,000-deep list where a frame
    # belongs stops at the interpreter's recursion limit, reported as bad input
    snap = tiny_snapshot()
    snap["device_traces"][0][1]["frames"] = ["DEEPDEEP"]
    data = pickle.dumps(snap, protocol=2)
    placeholder = b"X\x08\x00\x00\x00DEEPDEEP"
    n = 1_000_000
    path = tmp_path / "deep_list.pickle"
    path.write_bytes(data.replace(placeholder, b"]" * n + b"a" * (n - 1)))
    proc = _run_memory(path)
    assert proc.returncode == 2, proc.stderr
    assert "nested too deeply" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_progress_and_cancel_reach_the_unpickling_thread(tmp_path: Path) -> None:
    from gpuviz.trace.errors import ImportCancelledError
    from gpuviz.trace.synthetic_snapshot import make_snapshot, write_snapshot

    raw, _ = make_snapshot(20_000, seed=2)
    path = write_snapshot(tmp_path / "s.pickle", raw)
    seen: list[float] = []
    load_snapshot(path, progress=seen.append)
    assert seen and all(0 <= f <= 1 for f in seen)  # reported every 4 MiB: here once
    with pytest.raises(ImportCancelledError):
        load_snapshot(path, cancelled=lambda: True)


def test_a_smaller_stack_where_a_large_one_cannot_be_had(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = snapshot_pickle.threading.stack_size
    asked: list[int] = []

    def stack_size(size: int = 0) -> int:
        if size > 64 * MIB:
            asked.append(size)
            raise ValueError("size not valid")  # as a system that commits stacks up front
        return real(size)

    monkeypatch.setattr(snapshot_pickle.threading, "stack_size", stack_size)
    path = tmp_path / "deep.pickle"
    path.write_bytes(_deep_tuple_key(300_000))  # more than 64 MiB's 262,144 levels
    with pytest.raises(TraceFormatError, match="more than 262,144"):
        load_snapshot(path)
    big = snapshot_pickle.STACK_BYTES
    assert asked == [big, big >> 2, big >> 4]  # then 64 MiB could be had
    path.write_bytes(pickle.dumps({"segments": [], "device_traces": []}))
    assert load_snapshot(path).devices() == []


def test_a_file_of_empty_lists_is_refused_within_the_memory_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 1 byte of "]" is a 56-byte list: 64 MiB of them (a 64 KB .gz) would take 3.6 GB
    monkeypatch.setattr(snapshot_pickle, "memory_budget_bytes", lambda: 256 * MIB)
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    path = tmp_path / "lists.pickle.gz"
    with open(path, "wb") as f:
        f.write(c.compress(b"\x80\x02("))
        for _ in range(64):
            f.write(c.compress(b"]" * MIB))
        f.write(c.compress(b"l."))
        f.write(c.flush())
    assert path.stat().st_size < MIB
    with pytest.raises(TraceFormatError, match=r"may take more than 0\.2 GiB to read"):
        load_snapshot(path)


def test_the_memory_limit_is_gpuviz_max_memory_where_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(tiny_snapshot()))  # its estimate: about 30 KB
    monkeypatch.setenv("GPUVIZ_MAX_MEMORY", "20K")
    with pytest.raises(TraceFormatError, match=r"GPUVIZ_MAX_MEMORY or half this machine"):
        load_snapshot(path)
    monkeypatch.setenv("GPUVIZ_MAX_MEMORY", "1M")
    assert len(load_snapshot(path).trace_columns(0)) == 3
    monkeypatch.delenv("GPUVIZ_MAX_MEMORY")
    half = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    assert snapshot_pickle.memory_budget_bytes() == half


def test_real_snapshots_are_far_within_the_budget() -> None:
    root = Path(__file__).parents[1] / "data" / "snapshots"
    reader = snapshot_pickle._Reader(open(root / "snap_cpp_frames.pickle", "rb"), 1, None, None)
    with reader.raw:
        while reader.read(1 << 16):
            pass
    est = reader.containers * snapshot_pickle.BYTES_PER_CONTAINER
    assert 0 < est + reader.done * snapshot_pickle.BYTES_PER_BYTE < 50 * reader.done


# -- structure (issue 47, item 15) -------------------------------------------------------------


def _drop(snap: dict[str, Any], path: str) -> dict[str, Any]:
    obj: Any = snap
    keys = path.split("/")
    for k in keys[:-1]:
        obj = obj[int(k)] if isinstance(obj, list) else obj[k]
    del obj[keys[-1]]
    return snap


@pytest.mark.parametrize(
    ("path", "place"),
    [
        # read as 0, an entry without a size or an address became a 512 B block at address 0
        ("device_traces/0/1/size", r"device_traces\[0\]\[1\]: no 'size'$"),
        ("device_traces/0/1/addr", r"device_traces\[0\]\[1\]: no 'addr'$"),
        ("device_traces/0/1/action", r"device_traces\[0\]\[1\]: no 'action'$"),
        ("device_traces/0/2/device_free", r"device_traces\[0\]\[2\]: no 'device_free'$"),
        ("segments/0/blocks/1/size", r"segments\[0\]\.blocks\[1\]: no 'size'$"),
        ("segments/0/blocks/0/state", r"segments\[0\]\.blocks\[0\]: no 'state'$"),
        ("segments/0/blocks", r"segments\[0\]: no 'blocks'$"),
        ("segments/0/address", r"segments\[0\]: no 'address'$"),
        ("segments/0/total_size", r"segments\[0\]: no 'total_size'$"),
    ],
)
def test_a_missing_required_key_is_named(tmp_path: Path, path: str, place: str) -> None:
    for consume in (False, True):
        with pytest.raises(TraceFormatError, match=place):
            snapshot_from_data(_drop(tiny_snapshot(), path), "s.pickle", consume)
    # and through the file reader (device 0's history read while it is unpickled)
    f = tmp_path / "s.pickle"
    f.write_bytes(pickle.dumps(_drop(tiny_snapshot(), path)))
    with pytest.raises(TraceFormatError, match=place):
        load_snapshot(f)


@pytest.mark.parametrize(
    ("snap", "place"),
    [
        ({"segments": "abc", "device_traces": 5}, "segments: expected a list, got str"),
        ({"segments": [], "device_traces": 5}, "device_traces: expected a list, got int"),
        ({"segments": [], "device_traces": ["x"]}, r"device_traces\[0\]: expected a list"),
        ({"segments": [], "device_traces": [[7]]}, r"device_traces\[0\]\[0\]: expected a dict"),
        ({"segments": [3], "device_traces": []}, r"segments\[0\]: expected a dict"),
        (
            {"segments": [{"address": 0, "total_size": 512, "blocks": "b"}]},
            r"segments\[0\]\.blocks: expected a list, got str",
        ),
        (
            {"segments": [{"address": 0, "total_size": 512, "blocks": [{}, 5]}]},
            r"segments\[0\]\.blocks\[0\]: no 'size'",
        ),
        (
            {"segments": [{"address": 0, "total_size": 512, "blocks": [None]}]},
            r"segments\[0\]\.blocks\[0\]: expected a dict, got NoneType",
        ),
        (
            {"segments": [{"address": 0, "total_size": 512, "blocks": [{"size": 1, "state": 5}]}]},
            r"segments\[0\]\.blocks\[0\]: 'state' is a int, expected a name",
        ),
        (
            {"device_traces": [[{"action": 3, "addr": 0, "size": 512}]]},
            r"device_traces\[0\]\[0\]: 'action' is a int, expected a name",
        ),
    ],
)
def test_wrong_structure_is_bad_input_naming_the_place(
    tmp_path: Path, snap: dict[str, Any], place: str
) -> None:
    # the reader's clean-up used to raise its own TypeError over the real message
    f = tmp_path / "s.pickle"
    f.write_bytes(pickle.dumps(snap))
    with pytest.raises(TraceFormatError, match=place):
        load_snapshot(f)


def test_the_issues_snapshot_exits_2_with_one_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.pickle"
    f.write_bytes(pickle.dumps({"segments": "abc", "device_traces": 5}))
    proc = _run_memory(f)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [f"gpuviz memory: {f}: segments: expected a list, got str"]
