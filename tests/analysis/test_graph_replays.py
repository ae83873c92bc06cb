"""Graph replays without a capture: each replay is one unit, "graph N: K kernels", on its own
launching op, module and line (times in µs in the events, ns in the tables)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from gpuviz.analysis.attribution import attribute
from gpuviz.analysis.breakdown import breakdown
from gpuviz.analysis.graph_replays import graph_replays
from gpuviz.trace.kineto import load_trace
from tests.analysis.synthetic_trace import (
    PID,
    k_annotation,
    k_kernel,
    k_launch,
    k_op,
    k_py,
    kineto_trace,
)

DATA = Path(__file__).parent.parent / "data"
VLLM = DATA / "tl__inference__vllm_decode_full__graph_execution.json.gz"


def graph_launch(
    ts: float, corr: int, name: str = "cudaGraphLaunch", dur: float = 5
) -> dict[str, Any]:
    return {
        "ph": "X",
        "cat": "cuda_runtime",
        "name": name,
        "pid": PID,
        "tid": 1,
        "ts": ts,
        "dur": dur,
        "args": {"correlation": corr},
    }


def two_graphs_in_turn() -> list[dict[str, Any]]:
    """Graph A (gemm, relu, add) and graph B (norm, gemm) replayed A, B, A, B, outside any op,
    under a Python frame and a record_function range; plus one eager op."""
    ev: list[dict[str, Any]] = [
        k_annotation("decode", 0, 1000),
        k_py("runner.py(10): run", 1, 998),
        k_op("aten::mul", 2, 10),
        k_launch(3, corr=1),
        k_kernel("mul_kernel", 20, 5, corr=1),
    ]
    t, corr = 100, 10
    for turn in range(4):
        graph_a = turn % 2 == 0
        names = ["gemm", "relu", "add"] if graph_a else ["norm", "gemm"]
        ev.append(graph_launch(t, corr, dur=4 if graph_a else 6))
        for i, nm in enumerate(names):
            ev.append(k_kernel(nm, t + 10 + 20 * i, 10 + i, corr=corr))
        t += 200
        corr += 1
    return ev


def test_replays_found_and_graphs_told_apart(tmp_path: Path) -> None:
    att = attribute(kineto_trace(two_graphs_in_turn(), tmp_path))
    r = graph_replays(att)
    assert len(r) == 4
    assert r.graph.tolist() == [1, 2, 1, 2]  # same kernel sequence = same graph
    assert r.kernels.tolist() == [3, 2, 3, 2]
    assert [r.label(i) for i in range(4)] == [
        "graph 1: 3 kernels",
        "graph 2: 2 kernels",
        "graph 1: 3 kernels",
        "graph 2: 2 kernels",
    ]
    # The eager kernel is no replay's.
    names = att.trace.symbols.lookup(att.trace.slices.name[att.gpu_rows])
    assert [n for n, k in zip(names, r.kernel_replay.tolist(), strict=True) if k < 0] == [
        "mul_kernel"
    ]


def test_op_table_has_a_row_per_graph_and_nothing_in_no_row(tmp_path: Path) -> None:
    t = breakdown(kineto_trace(two_graphs_in_turn(), tmp_path), "op")
    rows = {r.key: r for r in t.rows}
    a, b = rows["graph 1: 3 kernels"], rows["graph 2: 2 kernels"]
    # Hand count: graph A's kernels last 10+11+12 µs, twice; graph B's 10+11, twice.
    assert (a.kind, a.calls, a.device_self_ns, a.cpu_total_ns) == ("graph", 2, 66_000, 8_000)
    assert (b.kind, b.calls, b.device_self_ns, b.cpu_total_ns) == ("graph", 2, 42_000, 12_000)
    assert t.unattributed_device_ns == 0
    # The record_function range around them counts them in its device total.
    assert rows["decode"].device_total_ns == 66_000 + 42_000 + 5_000
    # Each graph row outlines exactly its replays' kernels.
    names = t.kernel_rows[t.kernel_row == t.rows.index(a)]
    assert len(names) == 6


def test_replay_inside_an_op_stays_that_ops(tmp_path: Path) -> None:
    ev = [
        k_op("aten::my_graph_op", 0, 100),
        graph_launch(10, corr=5),
        k_kernel("gemm", 20, 10, corr=5),
        k_kernel("relu", 40, 10, corr=5),
    ]
    t = breakdown(kineto_trace(ev, tmp_path), "op")
    assert [r.key for r in t.rows] == ["aten::my_graph_op"]
    assert t.rows[0].device_self_ns == 20_000


def test_module_and_line_tables_name_the_replay(tmp_path: Path) -> None:
    ev = [
        k_py("runner.py(10): run", 0, 1000),
        graph_launch(100, corr=7, name="hipGraphLaunch"),
        k_kernel("gemm", 200, 30, corr=7),
        k_kernel("relu", 240, 20, corr=7),
    ]
    trace = kineto_trace(ev, tmp_path)
    mod = breakdown(trace, "module")
    assert [(r.key, r.kind, r.device_total_ns) for r in mod.rows] == [
        ("graph 1: 2 kernels", "outside", 50_000)
    ]
    line = breakdown(trace, "line")
    assert [(r.key, r.device_self_ns) for r in line.rows] == [("runner.py:10", 50_000)]
    assert mod.unattributed_device_ns == line.unattributed_device_ns == 0


def test_vllm_replay_is_one_unit_and_no_device_time_is_in_no_row() -> None:
    raw = json.load(gzip.open(VLLM))["traceEvents"]
    launch = [e for e in raw if e.get("name") == "hipGraphLaunch"]
    assert len(launch) == 1
    corr = launch[0]["args"]["correlation"]
    gpu = [e for e in raw if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    mine = [e for e in gpu if e["args"].get("correlation") == corr]
    # Independent truth: the JSON's own kernels that carry the launch's correlation.
    want_ns = sum(round(e["dur"] * 1000) for e in mine)
    t = breakdown(load_trace(VLLM), "op")
    g = [r for r in t.rows if r.kind == "graph"]
    assert [r.key for r in g] == [f"graph 1: {len(mine)} kernels"]
    assert abs(g[0].device_self_ns - want_ns) <= len(mine)  # ns rounding per kernel
    assert t.unattributed_device_ns == 0
    total = sum(round(e["dur"] * 1000) for e in gpu)
    assert abs(sum(r.device_self_ns for r in t.rows) - total) <= len(gpu)


def test_advisor_evidence_names_the_replay_unit(tmp_path: Path) -> None:
    from gpuviz.analysis.advisor.findings import Evidence, Finding
    from gpuviz.analysis.advisor.where import with_code

    trace = kineto_trace(two_graphs_in_turn(), tmp_path)
    s = trace.slices
    # A GPU range over the first replay of graph 1 (its kernels start at 110 µs).
    gemm = next(i for i in range(len(s)) if trace.name_of(i) == "gemm")
    start = int(s.start_ns[gemm])
    ev = Evidence(rank=None, device=0, start_ns=start, end_ns=start + 60_000, stream=7)
    f = Finding("gpu_bound", "warning", "t", "d", "f", 1, "how", 0.5, evidence=(ev,))
    (out,) = with_code(trace, [f])
    assert out.evidence[0].ops == ("graph 1: 3 kernels",)
    assert out.evidence[0].modules == ("decode",)  # the record_function range around it
    assert out.evidence[0].lines == ("runner.py:10",)
