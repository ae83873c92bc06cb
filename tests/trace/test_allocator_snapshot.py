"""Reading allocator snapshots: refused globals (nothing runs), bad files, layouts, columns."""

from __future__ import annotations

import gzip
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from snapshot_columns import snapshot_columns

from gpuviz.errors import BadInputError
from gpuviz.trace.allocator_columns import Action, BlockState
from gpuviz.trace.allocator_snapshot import load_snapshot, snapshot_from_data
from gpuviz.trace.errors import TraceFormatError
from gpuviz.trace.synthetic_snapshot import make_snapshot, write_snapshot


def frame(fn: str, line: int, name: str) -> dict[str, Any]:
    return {"filename": fn, "line": line, "name": name}


def entry(action: str, addr: int, size: int, t: int, frames: list[Any] | None = None) -> dict:
    return {
        "action": action,
        "addr": addr,
        "size": size,
        "stream": 0,
        "time_us": t,
        "frames": frames or [],
    }


def tiny_snapshot() -> dict[str, Any]:
    user = frame("/home/u/train.py", 10, "step")
    lib = frame("/x/site-packages/torch/nn/modules/linear.py", 125, "forward")
    return {
        "segments": [
            {
                "device": 0,
                "address": 1 << 20,
                "total_size": 2 << 20,
                "allocated_size": 1024,
                "active_size": 1024,
                "requested_size": 1000,
                "stream": 0,
                "segment_type": "small",
                "is_expandable": False,
                "frames": [],
                "blocks": [
                    {
                        "address": 1 << 20,
                        "size": 1024,
                        "requested_size": 1000,
                        "state": "active_allocated",
                        "frames": [lib, user],
                    },
                    {
                        "address": (1 << 20) + 1024,
                        "size": (2 << 20) - 1024,
                        "requested_size": 0,
                        "state": "inactive",
                        "frames": [],
                    },
                ],
            }
        ],
        "device_traces": [
            [
                entry("segment_alloc", 1 << 20, 2 << 20, 100, [lib, user]),
                entry("alloc", 1 << 20, 1000, 101, [lib, user]),
                {
                    "action": "oom",
                    "device_free": 5 << 20,
                    "size": 1 << 40,
                    "stream": 0,
                    "time_us": 102,
                    "frames": [lib, user],
                },
            ]
        ],
        "allocator_settings": {"expandable_segments": False},
        "external_annotations": [
            {"name": "ProfilerStep#0", "stage": "START", "time_us": 99, "device": 0},
            {"name": "ProfilerStep#0", "stage": "END", "time_us": 103, "device": 0},
        ],
    }


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


# -- nothing in the file runs ----------------------------------------------------------------


class _Planted:
    """Unpickling this calls os.system(command): the classic pickle attack."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (os.system, (self.command,))


def test_planted_os_system_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    snap = tiny_snapshot()
    snap["segments"][0]["frames"] = [_Planted(f"touch {marker}")]
    path = write(tmp_path, "evil.pickle", pickle.dumps(snap))
    # the file really would run the command under a plain pickle.load
    assert b"system" in path.read_bytes()
    with pytest.raises(TraceFormatError) as err:
        load_snapshot(path)
    msg = str(err.value)
    assert str(path) in msg and "refused" in msg
    assert "system" in msg  # names what it would have loaded (posix.system or nt.system)
    assert not marker.exists()


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_any_global_is_refused_at_every_protocol(tmp_path: Path, protocol: int) -> None:
    # a harmless class reference is refused just the same: no class is ever loaded
    path = write(tmp_path, "cls.pickle", pickle.dumps({"segments": [], "x": Path}, protocol))
    with pytest.raises(TraceFormatError, match="refused"):
        load_snapshot(path)


def test_refusal_in_a_fresh_process_imports_nothing(tmp_path: Path) -> None:
    # GLOBAL 'this s' then a call: find_class refuses before anything is imported ("this"
    # prints the Zen of Python when imported, so an import would show)
    path = write(tmp_path, "imp.pickle", b"\x80\x02cthis\ns\n)R.")
    code = (
        "import sys\n"
        "from gpuviz.trace.allocator_snapshot import load_snapshot\n"
        "try:\n"
        f"    load_snapshot({str(path)!r})\n"
        "except Exception as e:\n"
        "    print(type(e).__name__, e)\n"
        "print('this' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 2, out.stdout  # no Zen of Python in between
    assert lines[0].startswith("TraceFormatError") and "this.s" in lines[0]
    assert lines[-1] == "False"


# -- bad files ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "what"),
    [
        ("empty.pickle", b"", "empty file"),
        ("text.pickle", b"hello, this is not a pickle\n", "not a pickle"),
        (
            "list.pickle",
            pickle.dumps([1, 2, 3]),
            "not a CUDA allocator snapshot: a pickle of a list",
        ),
        (
            "dict.pickle",
            pickle.dumps({"a": 1}),
            "not a CUDA allocator snapshot: a pickle of a dict",
        ),
        ("badgz.pickle.gz", b"\x1f\x8b\x08\x00garbage", "gzip"),
    ],
)
def test_bad_files(tmp_path: Path, name: str, content: bytes, what: str) -> None:
    path = write(tmp_path, name, content)
    with pytest.raises(TraceFormatError) as err:
        load_snapshot(path)
    assert isinstance(err.value, BadInputError)
    assert str(err.value).startswith(str(path)) and what in str(err.value)


def test_truncated(tmp_path: Path) -> None:
    data = pickle.dumps(tiny_snapshot(), protocol=pickle.HIGHEST_PROTOCOL)
    path = write(tmp_path, "cut.pickle", data[: len(data) // 2])
    with pytest.raises(TraceFormatError, match="truncated"):
        load_snapshot(path)


def test_wrong_types_name_the_place(tmp_path: Path) -> None:
    snap = tiny_snapshot()
    snap["device_traces"][0][1]["size"] = "big"
    with pytest.raises(TraceFormatError, match=r"device_traces\[0\]\[1\].*'size'"):
        snapshot_from_data(snap, "s.pickle")
    snap = tiny_snapshot()
    snap["segments"] = {"not": "a list"}
    with pytest.raises(TraceFormatError, match="segments: expected a list"):
        snapshot_from_data(snap, "s.pickle")


def test_empty_trace_is_valid(tmp_path: Path) -> None:
    path = write(tmp_path, "e.pickle", pickle.dumps({"segments": [], "device_traces": [[]]}))
    snap = load_snapshot(path)
    assert snap.devices() == []
    assert len(snap.trace_columns(0)) == 0
    assert len(snap.device_allocations(0)) == 0


def test_gzip_and_folder(tmp_path: Path) -> None:
    path = write(tmp_path, "s.pickle.gz", gzip.compress(pickle.dumps(tiny_snapshot())))
    assert len(load_snapshot(path).trace_columns(0)) == 3
    with pytest.raises(TraceFormatError, match="folder"):
        load_snapshot(tmp_path)


# -- columns --------------------------------------------------------------------------------


def test_columns_of_a_tiny_snapshot(tmp_path: Path) -> None:
    snap = load_snapshot(write(tmp_path, "t.pickle", pickle.dumps(tiny_snapshot())))
    tr = snap.trace_columns(0)
    assert tr.action_names() == ["segment_alloc", "alloc", "oom"]
    assert tr.addr.tolist() == [1 << 20, 1 << 20, 5 << 20]  # the OOM's device_free
    assert tr.size_bytes.tolist() == [2 << 20, 1000, 1 << 40]
    assert tr.time_us.tolist() == [100, 101, 102]
    # one stack, shared by the three entries and the block
    assert len(set(tr.stack.tolist())) == 1 and tr.stack[0] >= 0
    assert snap.blocks.stack[0] == tr.stack[0]
    assert snap.stack_frames(int(tr.stack[0])) == [
        ("/x/site-packages/torch/nn/modules/linear.py", 125, "forward"),
        ("/home/u/train.py", 10, "step"),
    ]
    assert snap.blocks.state.tolist() == [BlockState.ACTIVE_ALLOCATED, BlockState.INACTIVE]
    assert snap.allocated_bytes(0) == 1024
    ann = snap.annotations
    assert [snap.symbols[i] for i in ann.name.tolist()] == ["ProfilerStep#0"] * 2
    assert ann.stage.tolist() == [0, 1]
    assert snap.allocator_settings == {"expandable_segments": False}


def test_equal_frames_in_distinct_objects_share_a_stack() -> None:
    snap = tiny_snapshot()
    # a copy by value (as an older pickler without a shared memo would write)
    snap["device_traces"][0][1]["frames"] = [dict(f) for f in snap["device_traces"][0][1]["frames"]]
    cols = snapshot_from_data(snap, "s")
    st = cols.trace_columns(0).stack
    assert st[0] == st[1] == st[2]
    assert cols.n_stacks == 1


@pytest.mark.parametrize("n_middles", [3, 20])
def test_stacks_that_differ_only_in_the_middle(n_middles: int) -> None:
    # Stacks sharing their length and first and last frames share a probe in the interner;
    # interleaved, they must still each keep their own stack, also past the few candidates
    # a probe remembers (20 > 8).
    inner = frame("/x/site-packages/torch/cuda/memory.py", 1, "alloc")
    outer = frame("/home/u/train.py", 99, "main")
    middles = [frame("/home/u/model.py", 10 + i, f"layer{i}") for i in range(n_middles)]
    rng = np.random.default_rng(n_middles)
    which = rng.integers(0, n_middles, size=300)
    trace = [
        entry("alloc", 4096 * (k + 1), 512, k, [inner, middles[int(w)], outer])
        for k, w in enumerate(which.tolist())
    ]
    cols = snapshot_from_data({"segments": [], "device_traces": [trace]}, "s")
    st = cols.trace_columns(0).stack
    got = [cols.stack_frames(int(s))[1][2] for s in st.tolist()]
    assert got == [f"layer{w}" for w in which.tolist()]
    # one stack per distinct middle, numbered in order of first appearance
    first_seen = list(dict.fromkeys(which.tolist()))
    assert cols.n_stacks == len(first_seen)
    assert [cols.stack_frames(s)[1][2] for s in range(cols.n_stacks)] == [
        f"layer{w}" for w in first_seen
    ]


def test_figures_import_no_numpy_ma(tmp_path: Path) -> None:
    # numpy.ma is imported by np.unique's first plain call: 12-36 ms of fixed cost, more than
    # the figures of a 100k-entry snapshot take (benchmarks/bench_memory.py)
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(tiny_snapshot()))
    code = (
        "import sys\n"
        "from gpuviz.trace.allocator_snapshot import load_snapshot\n"
        "from gpuviz.analysis.allocator import snapshot_figures\n"
        f"fig = snapshot_figures(load_snapshot({str(path)!r}))\n"
        "print(len(fig.devices), 'numpy.ma' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "False"]


def test_older_layouts() -> None:
    snap = tiny_snapshot()
    for b in snap["segments"][0]["blocks"]:
        del b["address"]  # blocks tile their segment
    blk = snap["segments"][0]["blocks"][0]
    blk["history"] = [{"frames": blk.pop("frames"), "real_size": 1000}]  # torch < 2.1
    del snap["external_annotations"]
    del snap["allocator_settings"]
    snap["device_traces"][0].append(entry("free", 1 << 20, 1000, 104))  # torch < 2.0
    blk["state"] = "inactive"  # freed by that last entry
    cols = snapshot_from_data(snap, "s")
    assert cols.blocks.address.tolist() == [1 << 20, (1 << 20) + 1024]
    assert cols.blocks.stack[0] >= 0
    assert len(cols.annotations) == 0
    assert cols.trace_columns(0).action[-1] == Action.FREE
    alloc = cols.device_allocations(0)
    assert alloc.start.tolist() == [1] and alloc.end.tolist() == [3]


def test_missing_keys_are_tolerated() -> None:
    snap = {"device_traces": [[{"action": "alloc", "addr": 4096, "size": 100}]]}
    cols = snapshot_from_data(snap, "s")
    tr = cols.trace_columns(0)
    assert tr.time_us.tolist() == [0] and tr.stream.tolist() == [0] and tr.stack[0] == -1
    assert cols.devices() == [0]


def test_synthetic_round_trip(tmp_path: Path) -> None:
    raw, truth = make_snapshot(3000, seed=3)
    path = write_snapshot(tmp_path / "s.pickle", raw)
    snap = load_snapshot(path)
    tr = snap.trace_columns(0)
    src = raw["device_traces"][0]
    assert len(tr) == len(src)
    assert tr.size_bytes.tolist() == [e["size"] for e in src]
    assert tr.time_us.tolist() == [e["time_us"] for e in src]
    assert snap.allocated_bytes(0) == truth.live_bytes
    assert int(snap.segments.total_size.sum()) == truth.reserved_bytes
    # every alloc's stack names the frames it was recorded with
    for i in np.flatnonzero(tr.action == Action.ALLOC)[:50].tolist():
        want = [(f["filename"], f["line"], f["name"]) for f in src[i]["frames"]]
        assert snap.stack_frames(int(tr.stack[i])) == want


@pytest.mark.parametrize("chunk", [1, 7, 64, 1000])
def test_chunked_trace_is_read_as_one(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # a wrapped history (frees of allocations from before the window, whose own stacks are
    # kept), an OOM and late free_completed entries, read in chunks of every size
    import gpuviz.trace.allocator_trace as mod
    from gpuviz.trace.allocations import orphan_frees

    raw, _ = make_snapshot(3000, seed=5, max_entries=1200, oom=True, record_stream=True)
    whole = snapshot_from_data(raw, "s")
    monkeypatch.setattr(mod, "TRACE_CHUNK", chunk)
    chunked = snapshot_from_data(raw, "s")
    tr = chunked.trace_columns(0)
    orphans = orphan_frees(tr)
    assert len(orphans) > 0 and (tr.action == Action.OOM).any()
    assert (tr.stack[orphans] >= 0).all()  # a pre-window free keeps its stack
    for a, b in zip(snapshot_columns(whole), snapshot_columns(chunked), strict=True):
        np.testing.assert_array_equal(a, b)


def test_orphan_frees_by_chunk_match_the_whole_trace() -> None:
    # the streaming state against pair_by_address on the whole trace, where addresses repeat
    # across chunks, allocs follow allocs (a free not recorded) and frees follow frees
    from gpuviz.trace.allocations import pair_by_address
    from gpuviz.trace.allocator_trace import _OrphanFrees

    rng = np.random.default_rng(3)
    n = 5000
    codes = np.array(
        [Action.ALLOC, Action.FREE_REQUESTED, Action.FREE_COMPLETED, Action.FREE, Action.OOM],
        dtype=np.int8,
    )
    action = codes[rng.integers(0, len(codes), n)]
    addr = rng.integers(0, 60, n).astype(np.int64) * 512
    sel = np.flatnonzero(
        (action == Action.ALLOC) | (action == Action.FREE_COMPLETED) | (action == Action.FREE)
    )
    want = pair_by_address(addr[sel], sel, action[sel] == Action.ALLOC)[2]
    for chunk in (1, 13, 500, n):
        state = _OrphanFrees()
        got = np.concatenate(
            [
                a + np.flatnonzero(state.chunk(action[a : a + chunk], addr[a : a + chunk]))
                for a in range(0, n, chunk)
            ]
        )
        np.testing.assert_array_equal(got, want)


def test_load_frees_each_entry_once_read(monkeypatch: pytest.MonkeyPatch) -> None:
    # the loader consumes the history chunk by chunk: an entry of an earlier chunk is gone
    # (its dict freed) while a later chunk is read, so the tree and the columns never both
    # hold the whole trace
    import weakref

    import gpuviz.trace.allocator_trace as mod

    class Entry(dict):  # plain dicts cannot be weakly referenced
        pass

    raw, _ = make_snapshot(400, seed=2)
    trace = [Entry(e) for e in raw["device_traces"][0]]
    raw["device_traces"] = [trace]
    first = weakref.ref(trace[0])
    alive_at_chunk: list[bool] = []
    read = mod.Interner.stacks_of

    def spy(self: Any, items: Any, rows: Any = None) -> Any:
        alive_at_chunk.append(first() is not None)
        return read(self, items, rows)

    monkeypatch.setattr(mod, "TRACE_CHUNK", 100)
    monkeypatch.setattr(mod.Interner, "stacks_of", spy)
    kept = snapshot_from_data(raw, "s")  # by default the caller's data is left as it was
    assert len(trace) == len(kept.trace_columns(0)) and first() is not None
    alive_at_chunk.clear()
    snap = snapshot_from_data(raw, "s", consume=True)
    assert alive_at_chunk[:2] == [True, False]  # then segments' blocks and segments
    assert first() is None and trace == [] and raw["device_traces"] == [[]]
    for a, b in zip(snapshot_columns(kept), snapshot_columns(snap), strict=True):
        np.testing.assert_array_equal(a, b)


def test_bad_entry_in_a_later_chunk_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    import gpuviz.trace.allocator_trace as mod

    monkeypatch.setattr(mod, "TRACE_CHUNK", 100)
    for key, value, says in (
        ("size", -5, "'size' is -5"),
        ("time_us", "soon", "'time_us' is 'soon'"),
        ("addr", None, None),
    ):
        raw, _ = make_snapshot(400, seed=2)
        raw["device_traces"][0][250][key] = value
        if says is None:  # None reads as the default, 0
            assert snapshot_from_data(raw, "s").trace_columns(0).addr[250] == 0
            continue
        with pytest.raises(TraceFormatError, match=r"device_traces\[0\]\[250\]") as err:
            snapshot_from_data(raw, "s")
        assert says in str(err.value)
