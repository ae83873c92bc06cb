"""The Kineto importer on the real traces of tests/data, checked against plain-json figures."""

from __future__ import annotations

import gzip
import json
import shutil
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from kineto_reference import GPU_ACTIVITY, read_json, reference

from gpuviz.trace import jsonscan
from gpuviz.trace.errors import ImportCancelledError, TraceFormatError
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import Kind, Trace, TrackKind

DATA = Path(__file__).parents[1] / "data"
MEMORY_TIMELINE = DATA / "hta__memory_analysis__memory_timeline.raw.gz"
SAMPLES = sorted(p for p in DATA.glob("*.gz") if p != MEMORY_TIMELINE)

KIND_NAMES = {
    Kind.KERNEL: "kernel",
    Kind.MEMCPY: "memcpy",
    Kind.MEMSET: "memset",
    Kind.RUNTIME: "runtime",
    Kind.CPU_OP: "cpu_op",
    Kind.USER_ANNOTATION: "user_annotation",
    Kind.GPU_USER_ANNOTATION: "gpu_user_annotation",
    Kind.PYTHON_FUNCTION: "python_function",
    Kind.CUDA_SYNC: "cuda_sync",
    Kind.OTHER: "other",
}
_CACHE: dict[str, Trace] = {}


def load(path: Path) -> Trace:
    """Load once per test session (the traces are read-only)."""
    key = str(path)
    if key not in _CACHE:
        _CACHE[key] = load_trace(path)
    return _CACHE[key]


def kinds(trace: Trace) -> Counter[str]:
    return Counter(KIND_NAMES[Kind(k)] for k in trace.slices.kind.tolist())


def per_stream(trace: Trace, kind: Kind) -> Counter[tuple[int, int]]:
    rows = np.flatnonzero(trace.slices.kind == kind)
    t = trace.slices.track[rows]
    return Counter(zip(trace.tracks.device[t].tolist(), trace.tracks.stream[t].tolist()))


def check_invariants(trace: Trace) -> None:
    s, t = trace.slices, trace.tracks
    assert len({len(getattr(s, f)) for f in s.__dataclass_fields__}) == 1
    key = s.track.astype(np.int64) * (1 << 40) + s.start_ns
    assert np.all(np.diff(s.track) >= 0)
    assert np.all((np.diff(s.start_ns) >= 0) | (np.diff(s.track) > 0)), "not sorted by start"
    del key
    assert np.all(s.dur_ns >= 0)
    assert s.track.max(initial=-1) < len(t)
    # No two slices of one track on one row overlap (stacked, never dropped).
    rows: dict[tuple[int, int], int] = {}
    for tr, d, a, b in zip(
        s.track.tolist(), s.depth.tolist(), s.start_ns.tolist(), s.end_ns.tolist()
    ):
        prev_end = rows.get((tr, d))
        assert prev_end is None or prev_end <= a, f"overlap on track {tr} row {d}"
        rows[(tr, d)] = max(b, prev_end or b)
    for table in (trace.flows, trace.instants, trace.memory):
        assert table.track.max(initial=-1) < len(t)
        assert table.track.min(initial=0) >= 0
    # GPU activity lives on GPU stream tracks, annotations on annotation tracks.
    gpu = trace.gpu_activity_mask()
    assert np.all(t.kind[s.track[gpu]] == TrackKind.GPU_STREAM)
    assert np.all(t.kind[s.track[~gpu]] != TrackKind.GPU_STREAM)
    starts = [
        a.min()
        for a in (s.start_ns, trace.flows.ts_ns, trace.instants.ts_ns, trace.memory.ts_ns)
        if a.size
    ]
    if starts:
        assert min(starts) == 0, "zero is the earliest event"


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name[:40])
def test_every_sample_imports_with_the_plain_json_figures(path: Path) -> None:
    trace = load(path)
    ref = reference(path)
    assert trace.event_count == ref.event_count
    assert trace.warnings.count == 0
    assert kinds(trace) == ref.slice_kinds
    assert len(trace.flows) == ref.flows
    assert len(trace.memory) == ref.memory_events
    assert len(trace.instants) == ref.instants
    assert len(trace.metadata_events) == ref.metadata_events
    for kind, name in ((Kind.KERNEL, "kernel"), (Kind.MEMCPY, "memcpy"), (Kind.MEMSET, "memset")):
        assert per_stream(trace, kind) == ref.per_stream[name], name
    assert trace.rank_values() == [ref.rank]
    assert trace.zero_ns == ref.earliest_ns
    kernel_ns = int(trace.slices.dur_ns[trace.slices.kind == Kind.KERNEL].sum())
    assert abs(kernel_ns - ref.kernel_ns_total) <= len(trace.slices)  # rounding of each dur
    check_invariants(trace)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name[:40])
def test_memory_peaks_match(path: Path) -> None:
    trace = load(path)
    ref = reference(path)
    m = trace.memory
    gpu = m.device_type == 1
    peaks: dict[int, int] = {}
    reserved: dict[int, int] = {}
    for dev in np.unique(m.device_id[gpu]).tolist():
        sel = gpu & (m.device_id == dev)
        if np.all(m.total_allocated[sel] < 0):
            peaks[dev] = int(np.cumsum(m.bytes[sel]).max())
        else:
            peaks[dev] = int(m.total_allocated[sel].max())
            reserved[dev] = int(m.total_reserved[sel].max())
    assert peaks == ref.peak_allocated
    assert reserved == ref.peak_reserved


def test_args_rows_hold_the_original_args() -> None:
    path = DATA / "streams_overlap.json.gz"
    trace = load(path)
    events = read_json(path)["traceEvents"]
    by_corr = {e["args"]["correlation"]: e["args"] for e in events if e.get("cat") == "kernel"}
    rows = np.flatnonzero(trace.slices.kind == Kind.KERNEL)
    assert len(rows) == len(by_corr) == 8
    for r in rows.tolist():
        args = trace.args.get(int(trace.slices.args[r]))
        assert args == by_corr[int(trace.slices.correlation[r])]
        assert trace.slices.external_id[r] == args["External id"]


def test_streams_overlap_streams_and_copies() -> None:
    trace = load(DATA / "streams_overlap.json.gz")
    assert per_stream(trace, Kind.KERNEL) == {(0, 7): 4, (0, 14): 4}
    assert per_stream(trace, Kind.MEMCPY) == {(0, 7): 1, (0, 18): 1}
    copies = trace.slices.bytes[trace.slices.kind == Kind.MEMCPY]
    assert sorted(copies.tolist()) == [64 << 20, 64 << 20]
    names = {trace.symbols[i] for i in trace.slices.name[trace.slices.kind == Kind.USER_ANNOTATION]}
    assert names == {"sequential", "two_streams"}


def test_p2p_copies_take_their_device_from_in_device() -> None:
    path = DATA / "dataparallel_seed_2gpu.json.gz"
    trace = load(path)
    events = read_json(path)["traceEvents"]
    p2p = [e for e in events if e.get("cat") == "gpu_memcpy" and "device" not in e["args"]]
    assert p2p, "the sample has peer-to-peer copies without args.device"
    expected = Counter((e["args"]["inDevice"], e["args"]["stream"]) for e in p2p)
    names = np.asarray(trace.symbols.lookup(trace.slices.name))
    rows = np.flatnonzero(
        (trace.slices.kind == Kind.MEMCPY) & (names == "Memcpy PtoP (Device -> Device)")
    )
    got = Counter(
        zip(
            trace.tracks.device[trace.slices.track[rows]].tolist(),
            trace.tracks.stream[trace.slices.track[rows]].tolist(),
        )
    )
    assert got == expected
    assert {d for d, _ in got} == {0, 1}


def test_legacy_2021_trace() -> None:
    path = DATA / "kineto__tb_plugin__resnet50_num_workers_4__worker0.pt.trace.json.gz"
    trace = load(path)
    events = read_json(path)["traceEvents"]
    cats = Counter(e.get("cat") for e in events if e.get("ph") == "X")
    k = kinds(trace)
    assert k["kernel"] == cats["Kernel"] and k["memcpy"] == cats["Memcpy"]
    assert k["memset"] == cats["Memset"] and k["runtime"] == cats["Runtime"]
    assert k["cpu_op"] == cats["Operator"]
    # Original category strings are kept for export.
    assert {trace.symbols[c] for c in np.unique(trace.slices.cat)} >= {"Kernel", "Operator"}
    # "stream 7" tids become stream 7; lower-case "external id" fills external_id.
    gpu_tracks = np.flatnonzero(trace.tracks.kind == TrackKind.GPU_STREAM)
    assert trace.tracks.stream[gpu_tracks].tolist() == [7]
    kern = trace.slices.kind == Kind.KERNEL
    ext = Counter(e["args"]["external id"] for e in events if e.get("cat") == "Kernel")
    assert Counter(trace.slices.external_id[kern].tolist()) == ext
    # [memory] events carry only Bytes deltas: totals are -1.
    assert len(trace.memory) > 0 and np.all(trace.memory.total_allocated == -1)
    assert int(trace.memory.bytes.sum()) == sum(
        e["args"]["Bytes"] for e in events if e.get("name") == "[memory]"
    )
    # flows of the 2021 era ("async")
    assert {trace.symbols[c] for c in np.unique(trace.flows.cat)} == {"async"}
    # String tids of CPU threads: "5555" is the same thread as 5555.
    cpu = trace.tracks.kind == TrackKind.CPU_THREAD
    assert 5555 in trace.tracks.tid[cpu].tolist()


def test_string_pids_and_tids_get_labels() -> None:
    trace = load(DATA / "worker_thread.json.gz")
    labels = {trace.track_label(i) for i in range(len(trace.tracks))}
    assert "Spans / PyTorch Profiler" in labels
    assert any(label.startswith("stream 7") for label in labels)
    # thread names from ph:M events
    assert any("(python3)" in label for label in labels)


RANK_FOLDERS = sorted(d for d in DATA.iterdir() if d.is_dir() and any(d.glob("rank-*.json*")))


@pytest.mark.parametrize("folder", RANK_FOLDERS, ids=lambda p: p.name)
def test_rank_folder_is_one_trace_aligned_on_absolute_time(folder: Path) -> None:
    trace = load(folder)
    files = sorted(
        folder.glob("rank-*.json*"), key=lambda p: int(p.name.split("-")[1].split(".")[0])
    )
    refs = [reference(f) for f in files]
    assert trace.rank_values() == [r.rank for r in refs] == list(range(len(files)))
    assert trace.event_count == sum(r.event_count for r in refs)
    zero = min(r.earliest_ns for r in refs if r.earliest_ns is not None)
    assert trace.zero_ns == zero
    for r, ref in enumerate(refs):
        tracks = np.flatnonzero(trace.tracks.rank == r)
        first = min(
            int(table.min())
            for table in (
                trace.slices.start_ns[np.isin(trace.slices.track, tracks)],
                trace.flows.ts_ns[np.isin(trace.flows.track, tracks)],
                trace.instants.ts_ns[np.isin(trace.instants.track, tracks)],
                trace.memory.ts_ns[np.isin(trace.memory.track, tracks)],
            )
            if table.size
        )
        assert first == ref.earliest_ns - zero
        sel = np.isin(trace.slices.track, tracks)
        got = Counter(KIND_NAMES[Kind(k)] for k in trace.slices.kind[sel].tolist())
        assert got == ref.slice_kinds
    assert {d["rank"] for d in trace.metadata_events} == set(range(len(files)))
    assert [info.source for info in trace.ranks] == [str(f) for f in files]
    check_invariants(trace)


def test_folder_without_distributed_info_uses_natural_file_order(tmp_path: Path) -> None:
    a, b = DATA / "streams_overlap.json.gz", DATA / "worker_thread.json.gz"
    shutil.copy(a, tmp_path / "trace-10.json.gz")
    shutil.copy(b, tmp_path / "trace-2.json.gz")
    (tmp_path / "notes.txt").write_text("not a trace")
    trace = load_trace(tmp_path)
    assert trace.rank_values() == [0, 1]
    assert [Path(s).name for s in trace.sources] == ["trace-2.json.gz", "trace-10.json.gz"]
    k1 = per_stream(trace, Kind.KERNEL)
    assert (
        sum(k1.values()) == reference(a).slice_kinds["kernel"] + reference(b).slice_kinds["kernel"]
    )


def test_lone_file_keeps_its_distributed_rank() -> None:
    assert load(DATA / "hta__df_index_resolver__df_index_resolver.json.gz").rank_values() == [1]
    assert load(DATA / "streams_overlap.json.gz").rank_values() == [None]
    trace = load(DATA / "streams_overlap.json.gz")
    assert np.all(trace.tracks.rank == -1)


def _id_strings(trace: Trace, codes: np.ndarray) -> list[object]:
    base = -(1 << 40)
    return [trace.symbols[base - c] if c <= base else c for c in codes.tolist()]


def _same(a: Trace, b: Trace) -> None:
    for table in ("slices", "tracks", "flows", "memory", "instants"):
        ta, tb = getattr(a, table), getattr(b, table)
        for f in ta.__dataclass_fields__:
            va, vb = getattr(ta, f), getattr(tb, f)
            if f in ("name", "cat", "label"):  # symbol ids depend on the order of interning
                va, vb = a.symbols.lookup(va), b.symbols.lookup(vb)
            if f in ("pid", "tid"):  # so do the codes of string pids/tids
                va, vb = _id_strings(a, va), _id_strings(b, vb)
            np.testing.assert_array_equal(va, vb, err_msg=f"{table}.{f}")
    assert a.args.text.read(0, len(a.args.text)) == b.args.text.read(0, len(b.args.text))
    np.testing.assert_array_equal(a.args.offsets, b.args.offsets)
    assert a.zero_ns == b.zero_ns and a.event_count == b.event_count


def test_json_and_json_gz_give_the_same_trace(tmp_path: Path) -> None:
    src = DATA / "dataparallel_seed_2gpu.json.gz"
    plain = tmp_path / "dp.json"
    plain.write_bytes(gzip.decompress(src.read_bytes()))
    a, b = load_trace(src), load_trace(plain)
    _same(a, b)
    assert a.ranks[0].metadata == b.ranks[0].metadata
    assert a.ranks[0].metadata["baseTimeNanoseconds"] == 1790857026000000000


def test_bare_list_file(tmp_path: Path) -> None:
    src = DATA / "streams_overlap.json.gz"
    value = read_json(src)
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(value["traceEvents"], indent=1))
    trace = load_trace(bare)
    ref = reference(src)
    assert trace.event_count == ref.event_count
    assert kinds(trace) == ref.slice_kinds
    assert trace.rank_values() == [None]
    assert trace.ranks[0].metadata == {}
    # Without baseTimeNanoseconds the times are taken as absolute µs: same relative columns.
    np.testing.assert_array_equal(
        np.sort(trace.slices.start_ns), np.sort(load(src).slices.start_ns)
    )


def test_small_blocks_give_the_same_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    src = DATA / "streams_overlap.json.gz"
    whole = load_trace(src)
    monkeypatch.setattr(jsonscan, "BLOCK_BYTES", 97)
    _same(whole, load_trace(src))


# Nested args that look like event boundaries make some of the scanner's quick guesses wrong.
NESTED = [{"name": "a", "ph": "}, {"}, {"name": "b"}]


def test_scanner_handles_escapes_at_every_block_boundary(tmp_path: Path) -> None:
    names = ['a\\"b', "c\\\\", 'x\\\\\\"}]{[', "\\u00e9", 'q"', "{[", "]}", "\\\\\\\\"]
    events = [
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": json.loads(f'"{n}"') if "\\" in n else n,
            "pid": 1,
            "tid": 1,
            "ts": i * 10,
            "dur": 5,
            "args": {"k": n, "inputs": NESTED},
        }
        for i, n in enumerate(names)
    ]
    text = json.dumps({"meta": {"x": "]}"}, "traceEvents": events, "after": [1, {"a": "["}]})
    path = tmp_path / "esc.json"
    path.write_text(text)
    expected = [e["name"] for e in events]
    for block in range(1, 120):
        chunks = jsonscan.EventChunks(str(path), block_bytes=block)
        got = []
        for c in chunks:
            try:
                got.extend(e["name"] for e in json.loads(c.json_array()))
            except json.JSONDecodeError:
                assert c.guessed, "only a guessed chunk may be wrong"
                chunks.reject()
        assert got == expected, block
        assert chunks.metadata == {"meta": {"x": "]}"}, "after": [1, {"a": "["}]}


def test_overlapping_gpu_slices_are_stacked_not_dropped(tmp_path: Path) -> None:
    k = {"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "args": {"device": 0, "stream": 7}}
    events = [
        dict(k, name="a", ts=0, dur=10),
        dict(k, name="b", ts=5, dur=20),
        dict(k, name="c", ts=12, dur=3),
        dict(k, name="d", ts=26, dur=1),
    ]
    path = tmp_path / "overlap.json"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = load_trace(path)
    s = trace.slices
    assert len(s) == 4
    depth = dict(zip(trace.symbols.lookup(s.name), s.depth.tolist()))
    assert depth == {"a": 0, "b": 1, "c": 0, "d": 0}
    check_invariants(trace)


def test_cpu_nesting_depth(tmp_path: Path) -> None:
    op = {"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 2}
    events = [
        dict(op, name="root", ts=0, dur=100),
        dict(op, name="child", ts=10, dur=50),
        dict(op, name="grandchild", ts=10, dur=20),
        dict(op, name="sibling", ts=70, dur=10),
        dict(op, name="next", ts=100, dur=5),
    ]
    path = tmp_path / "nest.json"
    path.write_text(json.dumps(events))
    trace = load_trace(path)
    depth = dict(zip(trace.symbols.lookup(trace.slices.name), trace.slices.depth.tolist()))
    assert depth == {"root": 0, "child": 1, "grandchild": 2, "sibling": 1, "next": 0}


def test_odd_cpu_events_are_skipped_and_counted(tmp_path: Path) -> None:
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "ok", "pid": 1, "tid": 1, "ts": 1, "dur": 2},
        {"ph": "X", "cat": "cpu_op", "name": "no dur", "pid": 1, "tid": 1, "ts": 1},
        {"ph": "X", "cat": "cpu_op", "name": "bad ts", "pid": 1, "tid": 1, "ts": "x", "dur": 1},
        {"ph": "i", "name": "instant", "pid": 1, "tid": 1, "ts": 3},
        {"ph": "f", "name": "flow", "cat": "ac2g", "pid": 1, "tid": 1, "ts": 3, "id": 5, "bp": "e"},
        {"name": "no phase"},
        7,
    ]
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = load_trace(path)
    assert trace.event_count == 7
    assert trace.warnings.count == 4
    assert len(trace.slices) == 1 and len(trace.instants) == 1 and len(trace.flows) == 1
    assert trace.flows.enclosing.tolist() == [1]
    assert any("event 2" in s for s in trace.warnings.samples)


def test_metadata_only_trace_is_valid(tmp_path: Path) -> None:
    events = [{"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "p"}}]
    path = tmp_path / "meta.json"
    path.write_text(json.dumps({"traceEvents": events, "schemaVersion": 1}))
    trace = load_trace(path)
    assert len(trace.slices) == 0 and trace.event_count == 1
    assert trace.metadata_events == [dict(events[0], rank=None)]
    assert trace.ranks[0].metadata == {"schemaVersion": 1}
    empty = tmp_path / "empty_list.json"
    empty.write_text("[]")
    assert load_trace(empty).event_count == 0


def test_begin_end_pairs_become_slices(tmp_path: Path) -> None:
    events = [
        {"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 0},
        {"ph": "B", "name": "inner", "pid": 1, "tid": 1, "ts": 2},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 5},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 9},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 12},
    ]
    path = tmp_path / "be.json"
    path.write_text(json.dumps(events))
    trace = load_trace(path)
    got = sorted(
        zip(
            trace.symbols.lookup(trace.slices.name),
            trace.slices.dur_ns.tolist(),
            trace.slices.depth.tolist(),
        )
    )
    assert got == [("inner", 3000, 1), ("outer", 9000, 0)]
    assert len(trace.instants) == 1  # the unpaired E


def test_progress_and_cancel(tmp_path: Path) -> None:
    src = DATA / "hta__nccl_parser_config__nccl_data.json.gz"
    seen: list[float] = []
    load_trace(src, progress=seen.append)
    assert seen and seen[-1] == 1.0
    assert all(0.0 <= f <= 1.0 for f in seen) and seen == sorted(seen)
    with pytest.raises(ImportCancelledError) as err:
        load_trace(src, cancelled=lambda: True)
    assert not isinstance(err.value, TraceFormatError)


def test_memory_timeline_is_rejected() -> None:
    with pytest.raises(TraceFormatError, match="memory-timeline"):
        load_trace(MEMORY_TIMELINE)


def test_gpu_activity_kinds_only_on_gpu_tracks() -> None:
    trace = load(DATA / "tl__torch_compile_triton__trace.json.gz")  # ROCm: pid 2, tid 0
    assert per_stream(trace, Kind.KERNEL) == {
        (2, 0): reference(DATA / "tl__torch_compile_triton__trace.json.gz").slice_kinds["kernel"]
    }
    assert set(GPU_ACTIVITY) == {"kernel", "memcpy", "memset"}


def test_wrong_guesses_of_chunk_ends_are_redone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Args whose nested objects look like event boundaries: with small blocks the scanner's
    # quick guesses often fall inside them; the import must still see every event once.
    op = {"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "dur": 1}
    events = [
        dict(op, name=f"op{i}", ts=i * 2, args={"inputs": NESTED, "i": i}) for i in range(200)
    ]
    path = tmp_path / "nested.json"
    path.write_text(json.dumps({"traceEvents": events}, indent=1))
    whole = load_trace(path)
    monkeypatch.setattr(jsonscan, "BLOCK_BYTES", 211)
    small = load_trace(path)
    _same(whole, small)
    assert small.symbols.lookup(small.slices.name) == [f"op{i}" for i in range(200)]
    assert [small.args.get(int(r))["i"] for r in small.slices.args] == list(range(200))


def test_gzip_of_several_members(tmp_path: Path) -> None:
    text = gzip.decompress((DATA / "worker_thread.json.gz").read_bytes())
    half = len(text) // 2
    path = tmp_path / "members.json.gz"
    path.write_bytes(gzip.compress(text[:half]) + gzip.compress(text[half:]))
    _same(load_trace(path), load(DATA / "worker_thread.json.gz"))


@pytest.mark.parametrize(
    "name", ["hta__ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
             "kineto__tb_plugin__resnet50_num_workers_4__worker0.pt.trace.json.gz"],
)  # fmt: skip
def test_child_processes_give_the_same_trace(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    # Large files are decoded by child processes too; force them on for a small one.
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKER_MIN_BYTES", "0")
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "2")
    monkeypatch.setattr(jsonscan, "BLOCK_BYTES", 1 << 18)  # many chunks, both children busy
    _same(load_trace(DATA / name), load(DATA / name))


def test_child_processes_leave_odd_chunks_to_the_importer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    op = {"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "dur": 1}
    events = [dict(op, name=f"op{i}", ts=i * 2) for i in range(3000)]
    events[1700] = dict(op, name="no ts")  # op has no ts
    events[2500] = dict(op, name="bad", ts="x")
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"traceEvents": events}, indent=1))
    plain = load_trace(path)
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKER_MIN_BYTES", "0")
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "2")
    monkeypatch.setattr(jsonscan, "BLOCK_BYTES", 1 << 14)
    forked = load_trace(path)
    _same(plain, forked)
    assert forked.warnings.count == plain.warnings.count == 2
    assert forked.warnings.samples == plain.warnings.samples
    assert any("event 1700" in s for s in forked.warnings.samples)


@pytest.mark.parametrize("python", ["/nonexistent/python", "/bin/true"])
def test_import_survives_children_that_cannot_start_or_die(
    monkeypatch: pytest.MonkeyPatch, python: str
) -> None:
    name = "hta__nccl_parser_config__nccl_data.json.gz"
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKER_MIN_BYTES", "0")
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "2")
    monkeypatch.setattr(jsonscan, "BLOCK_BYTES", 1 << 18)
    monkeypatch.setattr(sys, "executable", python)
    _same(load_trace(DATA / name), load(DATA / name))


@pytest.mark.parametrize("declared", [[0, 1, 2], [2, 0, 1]], ids=["file order", "other order"])
def test_args_of_every_rank_file_stay_with_their_slices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, declared: list[int]
) -> None:
    # The files' args text is appended to one buffer as they are read; ranks declared in
    # another order than the files' put the parts in another order than the text.
    monkeypatch.setattr(jsonscan, "BLOCK_BYTES", 1 << 12)  # many chunks a file
    want = {}
    for f, rank in enumerate(declared):
        events = []
        for i in range(60):
            args = {"External id": f * 1000 + i, "note": f"file {f} op {i} " + "x" * (i % 7)}
            events.append({"ph": "X", "cat": "cpu_op", "name": f"f{f}op{i}", "pid": 1,
                           "tid": 1, "ts": i * 10.0, "dur": 5.0, "args": args})  # fmt: skip
            want[f"f{f}op{i}"] = (rank, args)
        doc = {"distributedInfo": {"rank": rank}, "traceEvents": events}
        (tmp_path / f"rank-{f}.json").write_text(json.dumps(doc))
    trace = load_trace(tmp_path, cache=False)
    s = trace.slices
    assert len(s.name) == len(want)
    for row in range(len(s.name)):
        rank, args = want[trace.symbols[int(s.name[row])]]
        assert trace.args.get(int(s.args[row])) == args
        assert int(trace.tracks.rank[s.track[row]]) == rank


@pytest.mark.parametrize("field", ["correlation", "device", "stream", "External id"])
def test_an_int_arg_beyond_int64_is_read_as_missing_not_a_crash(tmp_path: Path, field: str) -> None:
    # msgspec decodes ints up to 2**64 - 1; numpy's int64 columns cannot hold 2**63.
    k = {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "dur": 1}
    args = {"device": 0, "stream": 7, "correlation": 5, "External id": 9}
    events = [dict(k, ts=0, args=args), dict(k, ts=2, args=dict(args, **{field: 2**63}))]
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"traceEvents": events}))
    s = load_trace(path).slices
    assert len(s) == 2
    first = {"correlation": 5, "device": 0, "stream": 7, "External id": 9}
    col = {"correlation": s.correlation, "External id": s.external_id}.get(field)
    if col is not None:
        assert col.tolist() == [first[field], -1]
    else:  # device / stream: the slice still imports, on a lane of its own or the first's
        assert s.correlation.tolist() == [5, 5]


def _padded_trace(path: Path) -> bytes:
    """Events with padding and odd separators between them, and args that fool the guess."""
    op = {"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "dur": 1}
    parts = [
        json.dumps(dict(op, name=f"op{i}", ts=i, args={"inputs": NESTED, "s": "}, {"}))
        for i in range(400)
    ]
    seps = [",", " ,\n ", ",\t\t", "\n,", " " * 3000 + ","]
    body = "".join(p + seps[i % len(seps)] for i, p in enumerate(parts[:-1])) + parts[-1]
    text = ('\ufeff{"meta": 1, "traceEvents": [  ' + body + '  ], "after": "]"}').encode()
    path.write_bytes(text)
    return text


@pytest.mark.parametrize(
    "name", ["padded", "worker_thread.json.gz", "ddp_nccl_4rank/rank-0.json.gz"]
)
def test_chunks_of_a_plain_file_say_where_their_text_stands(tmp_path: Path, name: str) -> None:
    # A child reads a chunk from the file by its span instead of being handed the text.
    path = tmp_path / "t.json"
    if name == "padded":
        text = _padded_trace(path)
    else:
        text = gzip.decompress((DATA / name).read_bytes())
        path.write_bytes(text)
    for block in (97, 1000, 1 << 12, 1 << 14):
        chunks = jsonscan.EventChunks(str(path), block_bytes=block)
        spans = 0
        for c in chunks:
            try:
                json.loads(c.json_array())
            except json.JSONDecodeError:
                assert c.guessed
                chunks.reject()
            if c.span is not None:
                at, n = c.span
                assert text[at : at + n] == c.text, (block, c.byte_offset)
                spans += 1
        assert spans, block
    if name != "padded":  # in a gzip file the offsets are of the text, not of the file
        gz = jsonscan.EventChunks(str(DATA / name), block_bytes=1 << 12)
        assert all(c.span is None for c in gz)


@pytest.mark.parametrize("big", [False, True], ids=["ids fit int32", "an id past int32"])
def test_correlation_and_external_ids_are_int32_where_they_fit(tmp_path: Path, big: bool) -> None:
    """Ids count from about 1 per process: held as int32 (8 bytes a slice less each), unless
    one does not fit; the values and the launch links are the same either way, also from the
    cache."""
    corr = (1 << 33) + 5 if big else 5
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 30,
         "args": {"External id": 7}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 5, "dur": 5, "args": {"External id": 7, "correlation": corr}},
        {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 20, "dur": 40,
         "args": {"External id": 7, "correlation": corr, "device": 0, "stream": 7}},
    ]  # fmt: skip
    path = tmp_path / "ids.json"
    path.write_text(json.dumps({"traceEvents": events}))
    for cache in (False, True, True):  # imported, imported and stored, read from the cache
        trace = load_trace(path, cache=cache)
        s = trace.slices
        want = np.int64 if big else np.int32
        assert s.correlation.dtype == want
        assert s.external_id.dtype == np.int32
        names = trace.symbols.lookup(s.name)
        assert sorted(zip(names, s.correlation.tolist())) == [
            ("aten::mm", -1), ("cudaLaunchKernel", corr), ("gemm", corr)
        ]  # fmt: skip
        kernel = names.index("gemm")
        assert names[int(trace.launches_of([kernel])[0])] == "cudaLaunchKernel"


@pytest.mark.parametrize("big", [False, True], ids=["all fit int32", "past int32"])
def test_copy_bytes_and_flow_ids_are_int32_where_they_fit(tmp_path: Path, big: bool) -> None:
    """A copy's byte count and a flow's id are held as int32 where every one fits, int64
    where one does not (a 3 GiB copy, an id past 2**31); the values, the bandwidth the copy
    table shows and the exported flows are the same either way, also from the cache."""
    from gpuviz.trace.chrome_export import export_chrome

    nbytes = (3 << 30) if big else 4096
    flow = (1 << 33) + 9 if big else 9
    events = [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1,
         "ts": 5, "dur": 5, "args": {"correlation": 9}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0,
         "tid": 7, "ts": 20, "dur": 40,
         "args": {"correlation": 9, "device": 0, "stream": 7, "bytes": nbytes}},
        {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": flow, "pid": 1, "tid": 1, "ts": 5},
        {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": flow, "pid": 0, "tid": 7, "ts": 20,
         "bp": "e"},
    ]  # fmt: skip
    path = tmp_path / "copy.json"
    path.write_text(json.dumps({"traceEvents": events}))
    want = np.int64 if big else np.int32
    for cache in (False, True, True):  # imported, imported and stored, read from the cache
        trace = load_trace(path, cache=cache)
        s, f = trace.slices, trace.flows
        assert s.bytes.dtype == want and f.flow_id.dtype == want
        copy = int(np.flatnonzero(s.kind == Kind.MEMCPY)[0])
        assert int(s.bytes[copy]) == nbytes
        assert sorted(zip(f.flow_id.tolist(), map(chr, f.phase.tolist()))) == [
            (flow, "f"), (flow, "s")
        ]  # fmt: skip
        out = export_chrome(trace, tmp_path / "out.json")
        back = json.loads(out.read_text())["traceEvents"]
        assert sorted(e["id"] for e in back if e.get("cat") == "ac2g") == [flow, flow]
        assert [e["args"]["bytes"] for e in back if e.get("cat") == "gpu_memcpy"] == [nbytes]
