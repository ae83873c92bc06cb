"""CUDA graph replays in a rank folder read whole (issue 51): each rank's replays are its own
graphs, matched with its own rank's captures only.

The folders are built from two real single-process H100 recordings that capture and replay
graphs (``tests/data/graphs/gpu``): ``manual_graph`` (``torch.cuda.graph``, 5 replays of 5
kernels) and ``gpt_reduce_overhead`` (``torch.compile(mode="reduce-overhead")``, two graphs
of 73 and 138 kernels, 4 replays each), each file given its own ``distributedInfo.rank``. The
independent truth is each rank's file read alone (one process: right as it is); the folder
read whole must give, per rank, the same attribution and FLOPs, and its tables the sums of the
ranks' rows. A hand count checks the FLOPs too. vLLM's ROCm decode pair (TraceLens test
data) checks attached capture traces that declare a rank.

On the code before this fix, every test here failed but the op-shape decline (declined
already) and the check of the tests' own edit: two ranks' replays of equal kernels (or of
equal Kineto ``graph id``) were one graph, matched once with one rank's capture, so the
other rank's replays took that rank's ops (and counted its FLOPs once per replay of both).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from module_ranks import write_module_job

from gpuviz.analysis.attribution import attribute
from gpuviz.analysis.breakdown import breakdown
from gpuviz.analysis.breakdown_parts import MergedBreakdown, breakdown_part, merge_breakdown
from gpuviz.analysis.breakdown_table import Breakdown
from gpuviz.analysis.graph_merge import merge_of, shape_row_key
from gpuviz.analysis.graph_replays import graph_replays
from gpuviz.analysis.hardware import annotate_breakdown, hardware
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import Trace

GPU = Path(__file__).parent.parent / "data" / "graphs" / "gpu"
MANUAL = GPU / "manual_graph.json.gz"
GPT = GPU / "gpt_reduce_overhead.json.gz"

Edit = Callable[[int, dict[str, Any]], None]


def _job(tmp_path: Path, sources: tuple[Path, ...], edit: Edit | None = None) -> Path:
    return write_module_job(tmp_path / "job", sources, edit)


def _read(folder: Path) -> tuple[Trace, list[Trace]]:
    """The folder read whole, and each of its rank files read alone (rank order)."""
    whole = load_trace(folder, cache=False)
    alone = [load_trace(f, cache=False) for f in sorted(folder.glob("rank-*.json.gz"))]
    return whole, alone


def _table(trace: Trace, by: str) -> Breakdown:
    table = breakdown(trace, by)
    if by == "op-shape":  # FLOPs, as breakdown --by op-shape fills them
        annotate_breakdown(table, hardware(trace, None))
    return table


Sums = dict[str, tuple[int, int, int, float | None]]


def _sums(tables: list[Breakdown]) -> Sums:
    """Per row key (op-shape: name and shapes), calls, device self and total ns, and FLOPs,
    summed over ``tables``."""
    out: Sums = {}
    for t in tables:
        for r in t.rows:
            key = shape_row_key(r.key, r.input_shapes) if t.by == "op-shape" else r.key
            calls, self_ns, total_ns, flops = out.get(key, (0, 0, 0, None))
            if r.flops is not None:
                flops = (flops or 0.0) + r.flops
            out[key] = (
                calls + r.calls,
                self_ns + r.device_self_ns,
                total_ns + r.device_total_ns,
                flops,
            )
    return out


def _replay_kernels(doc: dict[str, Any]) -> dict[int, list[dict[str, Any]]]:
    """Per ``cudaGraphLaunch`` correlation id, the GPU events it ran (read from the JSON)."""
    events = doc["traceEvents"]
    launches = {
        e["args"]["correlation"]
        for e in events
        if e.get("name") == "cudaGraphLaunch" and "correlation" in e.get("args", {})
    }
    out: dict[int, list[dict[str, Any]]] = {}
    for e in events:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            c = e.get("args", {}).get("correlation")
            if c in launches:
                out.setdefault(c, []).append(e)
    return out


def _graph_ids(rank: int, doc: dict[str, Any]) -> None:
    """Kineto's ``graph id`` on every replayed kernel, counted per process from 1 as CUPTI
    does: a graph's id by its kernel count, smallest first (rank 0's one graph and rank 1's
    graph of 73 kernels are both "graph id 1")."""
    replays = _replay_kernels(doc)
    sizes = sorted({len(k) for k in replays.values()})
    for kernels in replays.values():
        for e in kernels:
            e["args"]["graph id"] = sizes.index(len(kernels)) + 1


def _no_capture(on: int) -> Edit:
    """An edit that hides rank ``on``'s capture (its ``cudaStreamBeginCapture`` renamed)."""

    def edit(rank: int, doc: dict[str, Any]) -> None:
        if rank == on:
            for e in doc["traceEvents"]:
                if e.get("name") == "cudaStreamBeginCapture":
                    e["name"] = "cudaStreamGetCaptureInfo"

    return edit


def _track_rank(trace: Trace, rows: Any) -> Any:
    return trace.tracks.rank[trace.slices.track[rows]]


def _assert_own_captures(whole: Trace) -> None:
    """Every replayed kernel the merge paired is paired with a launch of its own rank."""
    att = attribute(whole)
    merge = merge_of(att)
    assert merge is not None and len(merge.kernel)
    assert merge.own(att).all()
    kernel_rank = _track_rank(whole, att.gpu_rows[merge.kernel])
    launch_rank = _track_rank(whole, att.forest.rows[merge.launch_node])
    assert set(np.unique(kernel_rank).tolist()) == {0, 1}
    assert (kernel_rank == launch_rank).all()


@pytest.mark.parametrize("by", ["op", "op-shape", "module", "line"])
def test_two_ranks_replaying_the_same_graph_each_count_their_own(tmp_path: Path, by: str) -> None:
    """Two ranks of ``manual_graph``: the same kernels, two processes' graphs. Before: rank 1's
    replays took rank 0's capture, whose ``aten::addmm`` then counted 10 executions (2.95
    GFLOP a shape) and rank 1's own capture one eager call; the folder's FLOPs were 5.91
    GFLOP, the ranks' 5.37."""
    folder = _job(tmp_path, (MANUAL, MANUAL))
    whole, alone = _read(folder)
    got = _sums([_table(whole, by)])
    assert got == _sums([_table(a, by) for a in alone])
    _assert_own_captures(whole)
    if by == "op-shape":
        # By hand: addmm [32, 1024] x [1024, 4096] (and its transpose) is 2*32*1024*4096 FLOPs,
        # captured once per rank and replayed 5 times on each of 2 ranks.
        per_call = 2 * 32 * 1024 * 4096
        addmm = {k: v for k, v in got.items() if k.startswith("aten::addmm")}
        assert len(addmm) == 2
        assert all(v[3] == 10 * per_call for v in addmm.values())


def test_graph_numbers_are_per_rank(tmp_path: Path) -> None:
    """Each rank's graph is a graph of its own, numbered in order of first replay over the
    folder; each rank's replays number their graphs alike read alone (a relabelling)."""
    folder = _job(tmp_path, (MANUAL, MANUAL))
    whole, alone = _read(folder)
    att = attribute(whole)
    replays = graph_replays(att)
    rank = _track_rank(whole, att.forest.rows[replays.launch_node])
    per_rank = {r: sorted(set(replays.graph[rank == r].tolist())) for r in (0, 1)}
    assert per_rank == {0: [1], 1: [2]}
    assert (replays.rank == rank).all()
    for r, a in enumerate(alone):
        mine = graph_replays(attribute(a))
        assert mine.kernels.tolist() == replays.kernels[rank == r].tolist()
        assert set(mine.graph.tolist()) == {1}


@pytest.mark.parametrize("by", ["op", "op-shape", "module"])
def test_equal_graph_ids_of_two_ranks_are_two_graphs(tmp_path: Path, by: str) -> None:
    """Rank 0 replays ``manual_graph``'s graph, rank 1 ``gpt_reduce_overhead``'s two; both
    processes call their first graph "graph id 1". Before, rank 1's 73-kernel graph was
    rank 0's: aligned once with rank 0's 5-launch capture, its first 5 kernels took
    ``manual_graph``'s ops, and its own capture's calls counted as eager ones."""
    folder = _job(tmp_path, (MANUAL, GPT), _graph_ids)
    whole, alone = _read(folder)
    assert _sums([_table(whole, by)]) == _sums([_table(a, by) for a in alone])
    att = attribute(whole)
    replays = graph_replays(att)
    rank = _track_rank(whole, att.forest.rows[replays.launch_node])
    assert set(zip(rank.tolist(), replays.graph.tolist(), strict=True)) == {(0, 1), (1, 2), (1, 3)}
    _assert_own_captures(whole)


def test_a_rank_without_its_capture_keeps_its_replay_units(tmp_path: Path) -> None:
    """Rank 0's capture hidden: read alone, its replays stay one ``graph 1: 5 kernels`` row of
    5 calls; read whole, they must not take rank 1's capture of the same kernels (before: they
    did, and the folder had no graph row at all)."""
    folder = _job(tmp_path, (MANUAL, MANUAL), _no_capture(0))
    whole, alone = _read(folder)
    att = attribute(whole)
    merge = merge_of(att)
    assert merge is not None
    assert set(_track_rank(whole, att.gpu_rows[merge.kernel]).tolist()) == {1}
    rows = {r.key: r for r in _table(whole, "op").rows if r.kind == "graph"}
    (own,) = [r for r in _table(alone[0], "op").rows if r.kind == "graph"]
    assert own.key == "graph 1: 5 kernels" and own.calls == 5
    assert list(rows) == [own.key]
    got = rows[own.key]
    assert (got.calls, got.device_total_ns, got.cpu_total_ns) == (
        own.calls,
        own.device_total_ns,
        own.cpu_total_ns,
    )
    assert _sums([_table(whole, "op")]) == _sums([_table(a, "op") for a in alone])


@pytest.mark.parametrize("sources", [(MANUAL, MANUAL), (MANUAL, GPT)], ids=["same", "different"])
def test_the_steps_flops_of_the_folder_are_each_ranks_alone(
    tmp_path: Path, sources: tuple[Path, ...]
) -> None:
    """``summary``'s MFU per step: the folder read whole (what a cached summary of the folder
    reads) says, for each rank's steps, what that rank read alone says. Before, on two
    ``manual_graph`` ranks, rank 1's step had 3.22 GFLOP whole, 2.68 alone (and the summary
    said one or the other as the cache was warm or not)."""
    folder = _job(tmp_path, sources, _graph_ids)
    whole, alone = _read(folder)
    steps = hardware(whole, None).mfu_json()["steps"]
    want = [s for a in alone for s in hardware(a, None).mfu_json()["steps"]]
    assert [(s["rank"], s["label"], s["flops"]) for s in steps] == [
        (s["rank"], s["label"], s["flops"]) for s in want
    ]
    assert steps == want


def test_the_graph_ids_edit_sets_what_the_tests_say() -> None:
    """The edit's ids, counted from the JSON: rank 0 one graph of id 1; rank 1's 73-kernel
    replays id 1, its 138-kernel replays id 2 (so "graph id 1" is on both ranks)."""
    ids: list[dict[int, set[int]]] = []
    for rank, source in enumerate((MANUAL, GPT)):
        doc = json.loads(gzip.decompress(source.read_bytes()))
        _graph_ids(rank, doc)
        by_size: dict[int, set[int]] = {}
        for kernels in _replay_kernels(doc).values():
            by_size.setdefault(len(kernels), set()).update(e["args"]["graph id"] for e in kernels)
        ids.append(by_size)
    assert ids == [{5: {1}}, {73: {1}, 138: {2}}]


@pytest.mark.parametrize("by", ["op", "op-shape"])
def test_ranks_parts_of_matched_replays_are_not_merged(tmp_path: Path, by: str) -> None:
    """``breakdown DIR --cluster`` merges the ranks' rows only where that is the folder's
    table. A row's ``graph_device_us`` (an extra column: kept where the ranks agree, not
    summed) would be one rank's: before, ``--by op --cluster`` said 323.677 µs for
    ``aten::addmm``, the folder read whole 647.354 µs. The parts decline (op-shape: its
    shapes' sums count a captured call once, not once per replay) and the folder is read
    whole."""
    folder = _job(tmp_path, (MANUAL, MANUAL))
    parts = [breakdown_part(load_trace(f, cache=False), by) for f in sorted(folder.glob("*.gz"))]
    why = merge_breakdown(parts)
    assert isinstance(why, str) and "graph" in why
    rows = _table(load_trace(folder, cache=False), by).rows
    whole = {r.key: 0.0 for r in rows}  # op-shape: the key's rows of every shape
    for r in rows:
        whole[r.key] += r.extra.get("graph_device_us", 0.0)
    for key in ("aten::addmm", "aten::gelu"):
        mine = [r.extra["graph_device_us"] for p in parts for r in p.rows if r.key == key]
        assert len(mine) == len(parts) * (2 if key == "aten::addmm" and by == "op-shape" else 1)
        assert whole[key] == pytest.approx(sum(mine), abs=2e-3)
    if by == "op":  # past the check: the merged rows are not the folder's
        for p in parts:
            p.unmergeable = ""
        forced = merge_breakdown(parts)
        assert isinstance(forced, MergedBreakdown)
        got = {r.key: r.extra.get("graph_device_us") for r in forced.table.rows}
        assert got["aten::addmm"] == pytest.approx(whole["aten::addmm"] / 2, abs=1e-3)


VLLM = GPU.parent / "vllm_decode_full"


def _vllm_captures(tmp_path: Path) -> list[Path]:
    """vLLM's capture (it declares rank 0) and a copy declaring rank 1 whose model frame is
    renamed, as another pipeline stage's would be: the same launches, other modules."""
    (source,) = (VLLM / "capture_traces").glob("*.json.gz")
    out = []
    for rank in (0, 1):
        doc = json.loads(gzip.decompress(source.read_bytes()))
        doc["distributedInfo"] = {"rank": rank, "world_size": 2}
        if rank == 1:
            for e in doc["traceEvents"]:
                if e.get("name") == "nn.Module: GptOssForCausalLM_0":
                    e["name"] = "nn.Module: GptOssStage1_0"
        path = tmp_path / f"capture-{rank}.json.gz"
        path.write_bytes(gzip.compress(json.dumps(doc).encode()))
        out.append(path)
    return out


def test_attached_captures_that_declare_a_rank_serve_that_ranks_replays(tmp_path: Path) -> None:
    """Two ranks replaying vLLM's decode graph, each with its own attached capture (declared
    rank 0 and 1; ROCm names every kernel, so both captures pair all 421 kernels: a tie).
    Each rank alone, with its own capture, puts its kernels on its own stage's modules; the
    folder read whole with both captures must too (before, both ranks took the first)."""
    from gpuviz.trace.graph_captures import attach_captures

    folder = _job(tmp_path, (VLLM / "graph_execution.json.gz",) * 2)
    caps = [load_trace(p, cache=False) for p in _vllm_captures(tmp_path)]
    whole, alone = _read(folder)
    attach_captures(whole, caps)
    for a, c in zip(alone, caps, strict=True):
        attach_captures(a, [c])
    got = _sums([_table(whole, "module")])
    assert got == _sums([_table(a, "module") for a in alone])
    assert any(k.startswith("GptOssStage1_0") for k in got)
    assert any(k.startswith("GptOssForCausalLM_0") for k in got)
    att = attribute(whole)
    merge = merge_of(att)
    assert merge is not None and merge.matched_share == 1.0
    kernel_rank = _track_rank(whole, att.gpu_rows[merge.kernel])
    capture_rank = np.array([merge.captures[c].trace.rank_values()[0] for c in merge.capture])
    assert (kernel_rank == capture_rank).all()
