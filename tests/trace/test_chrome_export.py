"""Chrome-trace export: structure Perfetto/HTA read, and the round trip to the same figures."""

from __future__ import annotations

import gzip
import json
import re
import time
from pathlib import Path

import numpy as np
import pytest

from gpuviz.analysis.summary import summarize
from gpuviz.trace.chrome_export import export_chrome, export_per_rank
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import (
    ArgsStore,
    Flows,
    Instants,
    Kind,
    MemoryEvents,
    RankInfo,
    Slices,
    SymbolTable,
    Trace,
    TrackKind,
    Tracks,
)

DATA = Path(__file__).parent.parent / "data"
FILES = sorted(
    p.name
    for p in DATA.iterdir()
    if p.is_file() and p.name != "hta__memory_analysis__memory_timeline.raw.gz"
)
DDP = DATA / "ddp_2rank"
HTA_RANK = re.compile(r'"rank":\s+(\d+)')


def _figures(path: Path) -> dict:
    j = summarize(load_trace(path)).to_json()
    for k in ("sources", "events", "warnings"):
        j.pop(k)
    return j


def _read(path: Path) -> dict:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


@pytest.mark.parametrize("name", FILES)
def test_single_file_round_trip(name: str, tmp_path: Path) -> None:
    src = DATA / name
    out = export_chrome(load_trace(src), tmp_path / "out.json.gz")
    assert _figures(out) == _figures(src)


@pytest.mark.parametrize(
    "name", ["streams_overlap.json.gz", "hta__trace_filter__sampled_rank-0.json.gz"]
)
def test_per_rank_round_trip_of_a_single_file(name: str, tmp_path: Path) -> None:
    src = DATA / name
    (_written,) = export_per_rank(load_trace(src), tmp_path / "ranks")
    before, after = _figures(src), _figures(tmp_path / "ranks")
    if before["ranks"] == [None]:  # HTA needs a rank: a lone file's becomes 0
        assert after["ranks"] == [0]
        for table in ("streams", "devices", "memory"):
            for row in after[table]:
                assert row["rank"] == 0
                row["rank"] = None
        after["ranks"] = [None]
    assert after == before


def test_folder_per_rank_round_trip(tmp_path: Path) -> None:
    written = export_per_rank(load_trace(DDP), tmp_path / "ddp")
    assert [p.name for p in written] == ["rank-0.json.gz", "rank-1.json.gz"]
    assert _figures(tmp_path / "ddp") == _figures(DDP)


def test_per_rank_header_has_hta_rank_on_the_first_line(tmp_path: Path) -> None:
    for p in export_per_rank(load_trace(DDP), tmp_path):
        with gzip.open(p, "rt") as f:
            first = f.readline()
        m = HTA_RANK.search(first)
        assert m and int(m.group(1)) == int(p.name.split("-")[1].split(".")[0])
        data = _read(p)
        assert data["distributedInfo"]["world_size"] == 2  # the rest of distributedInfo is kept
        assert isinstance(data["baseTimeNanoseconds"], int)


def test_merged_export_is_perfetto_shaped(tmp_path: Path) -> None:
    out = export_chrome(load_trace(DDP), tmp_path / "merged.json")
    data = _read(out)
    events = data["traceEvents"]
    assert isinstance(events, list) and events
    for e in events:
        assert e["ph"] in "XMisftCI"
        assert "pid" in e and "tid" in e
        if e["ph"] != "M":
            assert isinstance(e["ts"], float | int)
        if e["ph"] == "X":
            assert isinstance(e["dur"], float | int) and e["dur"] >= 0
    names = {
        e["pid"]: e["args"]["name"]
        for e in events
        if e["ph"] == "M" and e["name"] == "process_name"
    }
    # every pid with events is named, and each name says its rank; ranks do not share pids
    used = {e["pid"] for e in events if e["ph"] != "M"}
    assert used <= set(names)
    by_rank = {r: {p for p, n in names.items() if n.startswith(f"rank {r} ")} for r in (0, 1)}
    assert by_rank[0] and by_rank[1] and not by_rank[0] & by_rank[1]
    assert {p for s in by_rank.values() for p in s} == set(names)
    # each rank keeps its kernels
    raw = [_read(p) for p in sorted(DDP.iterdir())]
    for r in (0, 1):
        expected = sum(1 for e in raw[r]["traceEvents"] if e.get("cat") == "kernel")
        assert (
            sum(1 for e in events if e.get("cat") == "kernel" and e["pid"] in by_rank[r])
            == expected
        )


def test_2021_trace_is_normalized_and_keeps_flows_and_args(tmp_path: Path) -> None:
    src = DATA / "kineto__tb_plugin__resnet50_num_workers_4__worker0.pt.trace.json.gz"
    raw = _read(src)["traceEvents"]
    out = _read(export_chrome(load_trace(src), tmp_path / "t.json"))["traceEvents"]
    cats = {e.get("cat") for e in out if e["ph"] == "X"}
    assert {"kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cpu_op"} <= cats
    assert not cats & {"Kernel", "Memcpy", "Memset", "Runtime", "Operator"}
    # flows: same count per phase; correlations of kernels kept in args
    for ph in "sf":
        assert sum(e["ph"] == ph for e in out) == sum(e.get("ph") == ph for e in raw)
    corr_in = sorted(e["args"]["correlation"] for e in raw if e.get("cat") == "Kernel")
    corr_out = sorted(e["args"]["correlation"] for e in out if e.get("cat") == "kernel")
    assert corr_in == corr_out
    assert sum(e.get("name") == "[memory]" for e in out) == sum(
        e.get("name") == "[memory]" for e in raw
    )
    # "stream 7" tids are written as numbers
    assert all(isinstance(e["tid"], int) for e in out if e.get("cat") == "kernel")


def test_times_are_exact_microsecond_decimals(tmp_path: Path) -> None:
    out = export_chrome(load_trace(DATA / "streams_overlap.json.gz"), tmp_path / "t.json")
    text = out.read_text()
    assert re.search(r'"ts":\d+\.\d{3}[,}]', text)
    assert not re.search(r'"ts":\d+\.\d{4,}', text)


def _big_trace(n: int) -> Trace:
    sym = SymbolTable(["gemm", "kernel", "elementwise"])
    rng = np.random.default_rng(1)
    start = np.sort(rng.integers(0, 10**12, n)).astype(np.int64)
    args = [b'{"device":0,"stream":7,"correlation":%d,"grid":[1,2,3]}' % i for i in range(n)]
    offsets = np.zeros(n + 1, np.int64)
    offsets[1:] = np.cumsum([len(a) for a in args])
    return Trace(
        symbols=sym,
        slices=Slices(
            start_ns=start,
            dur_ns=rng.integers(1000, 10**6, n).astype(np.int64),
            track=np.zeros(n, np.int32),
            depth=np.zeros(n, np.int16),
            name=(np.arange(n) % 2 * 2).astype(np.int32),
            cat=np.ones(n, np.int32),
            kind=np.full(n, Kind.KERNEL, np.uint8),
            correlation=np.arange(n, dtype=np.int64),
            external_id=np.full(n, -1, np.int64),
            bytes=np.full(n, -1, np.int64),
            args=np.arange(n, dtype=np.int32),
        ),
        tracks=Tracks(
            kind=np.array([TrackKind.GPU_STREAM], np.uint8),
            rank=np.array([-1], np.int32),
            device=np.array([0], np.int32),
            stream=np.array([7], np.int64),
            pid=np.array([0], np.int64),
            tid=np.array([7], np.int64),
            label=np.array([sym.intern("stream 7")], np.int32),
        ),
        flows=Flows.empty(),
        memory=MemoryEvents.empty(),
        instants=Instants.empty(),
        args=ArgsStore(b"".join(args), offsets),
        ranks=[RankInfo(rank=None, source="big.json")],
        zero_ns=1_790_000_000_000_000_000,
        event_count=n,
    )


@pytest.mark.slow
def test_export_speed_and_round_trip_of_200k_kernels(tmp_path: Path) -> None:
    trace = _big_trace(200_000)
    t = time.perf_counter()
    out = export_chrome(trace, tmp_path / "big.json.gz")
    elapsed = time.perf_counter() - t
    assert elapsed < 10, f"{elapsed:.1f} s for 200k kernels"
    back = load_trace(out)
    # the same absolute nanoseconds (the re-import's zero is its earliest event)
    assert np.array_equal(
        back.slices.start_ns + back.zero_ns, trace.slices.start_ns + trace.zero_ns
    )
    assert np.array_equal(back.slices.dur_ns, trace.slices.dur_ns)


def test_progress_is_reported(tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    export_chrome(
        load_trace(DATA / "worker_thread.json.gz"),
        tmp_path / "t.json",
        progress=lambda d, n: seen.append((d, n)),
    )
    assert seen and seen[-1][0] == seen[-1][1]


def test_cli_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gpuviz.cli import main

    out = tmp_path / "one.json.gz"
    assert main(["export", str(DDP), "-o", str(out)]) == 0
    assert out.exists() and _read(out)["traceEvents"]
    assert main(["export", str(DDP), "--per-rank", str(tmp_path / "hta")]) == 0
    assert sorted(p.name for p in (tmp_path / "hta").iterdir()) == [
        "rank-0.json.gz",
        "rank-1.json.gz",
    ]
    capsys.readouterr()
    assert main(["export", str(DDP), "-o", str(tmp_path / "x.txt")]) == 2
    assert main(["export", str(DDP), "-o", str(tmp_path / "no" / "x.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "x.txt" in err[0] and "does not exist" in err[1]


def test_times_before_the_zero_are_kept_exactly(tmp_path: Path) -> None:
    # A hand-built trace may have slices before its zero; the header's base moves back to them.
    trace = _big_trace(1000)
    trace.slices.start_ns = trace.slices.start_ns - 5_000_123
    out = export_chrome(trace, tmp_path / "t.json")
    assert '"ts":-' not in out.read_text()
    back = load_trace(out)
    assert np.array_equal(
        back.slices.start_ns + back.zero_ns, trace.slices.start_ns + trace.zero_ns
    )
