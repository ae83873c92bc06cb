"""Graph replays on traces recorded on a GPU (brought by the lead into tests/data/graphs/gpu/;
each test skips, saying so, while its file is absent):

- ``manual_graph.json.gz``: one trace holding a ``torch.cuda.graph`` capture of a small MLP and
  5 replays of it;
- ``gpt_reduce_overhead.json.gz`` / ``gpt_eager.json.gz``: a small GPT under
  ``torch.compile(mode="reduce-overhead")`` (CUDA graphs) with its compile-info folder
  ``gpt_reduce_overhead.compile/``, and the same model eager.

The truth is read from the JSON apart from gpuviz: the capture's launch calls (between
``cudaStreamBeginCapture`` and ``cudaStreamEndCapture``), the kernels sharing each
``cudaGraphLaunch``'s correlation, and the ``nn.Module`` frames enclosing each launch.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from gpuviz.analysis.attribution import attribute
from gpuviz.analysis.breakdown import breakdown
from gpuviz.analysis.compiled_regions import attach_compile_info
from gpuviz.analysis.graph_merge import merge_of
from gpuviz.analysis.graph_replays import graph_replays
from gpuviz.analysis.inductor_provenance import read_compile_info
from gpuviz.trace.kineto import load_trace

GPU = Path(__file__).parent.parent / "data" / "graphs" / "gpu"
MANUAL = GPU / "manual_graph.json.gz"
REDUCE = GPU / "gpt_reduce_overhead.json.gz"
REDUCE_INFO = GPU / "gpt_reduce_overhead.compile"
EAGER = GPU / "gpt_eager.json.gz"
LAUNCH = re.compile(r"Launch(?:Cooperative)?Kernel|Memcpy\w*Async|Memset\w*Async")


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path.name} not recorded yet: the lead brings it from the GPU machine")
    return path


def events(path: Path) -> list[dict[str, Any]]:
    return json.load(gzip.open(path))["traceEvents"]


def capture_launches(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    begin = [e for e in ev if str(e.get("name", "")).endswith("StreamBeginCapture")]
    end = [e for e in ev if str(e.get("name", "")).endswith("StreamEndCapture")]
    assert len(begin) == len(end) == 1, "expected one capture"
    t0, t1, tid = begin[0]["ts"], end[0]["ts"], begin[0]["tid"]
    return sorted(
        (
            e
            for e in ev
            if e.get("cat") in ("cuda_runtime", "cuda_driver")
            and e.get("tid") == tid
            and t0 < e["ts"] < t1
            and LAUNCH.search(e["name"])
            and "Graph" not in e["name"]
        ),
        key=lambda e: e["ts"],
    )


def test_manual_graph_replays_match_the_capture() -> None:
    ev = events(need(MANUAL))
    launches = capture_launches(ev)
    graph_corr = [e["args"]["correlation"] for e in ev if e.get("name") == "cudaGraphLaunch"]
    assert len(graph_corr) == 5
    per_replay = [
        sum(
            1
            for e in ev
            if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
            and e.get("args", {}).get("correlation") == c
        )
        for c in graph_corr
    ]
    assert per_replay == [len(launches)] * 5
    trace = load_trace(MANUAL)
    att = attribute(trace)
    r = graph_replays(att)
    assert r.graph.tolist() == [1] * 5 and r.kernels.tolist() == per_replay
    m = merge_of(att)  # the trace holds its own capture
    assert m is not None and len(m.kernel) == sum(per_replay)


def test_manual_graph_kernels_land_on_the_mlps_modules() -> None:
    ev = events(need(MANUAL))
    launches = capture_launches(ev)
    frames = [
        e for e in ev if e.get("cat") == "python_function" and e["name"].startswith("nn.Module: ")
    ]
    assert frames, "record with with_stack=True (or with_modules=True)"
    want = []
    for la in launches:
        around = sorted(
            (
                f
                for f in frames
                if f["tid"] == la["tid"] and f["ts"] <= la["ts"] <= f["ts"] + f["dur"]
            ),
            key=lambda f: (f["ts"], -f["dur"]),
        )
        want.append(".".join(dict.fromkeys(f["name"][len("nn.Module: ") :] for f in around)))
    trace = load_trace(MANUAL)
    table = breakdown(trace, "module")
    assert table.unattributed_device_ns == 0
    att = attribute(trace)
    r = graph_replays(att)
    good = total = 0
    for replay in range(len(r)):
        order = r.kernel_order(replay, att)
        for i, k in enumerate(order.tolist()):
            row = int(table.kernel_row[k])
            total += 1
            good += row >= 0 and i < len(want) and table.rows[row].key == want[i]
    assert good / total >= 0.9, (good, total)


def test_reduce_overhead_replays_are_in_a_row() -> None:
    trace = load_trace(need(REDUCE))
    att = attribute(trace)
    r = graph_replays(att)
    assert len(r) >= 1
    ops = breakdown(trace, "op")
    graph_kernels = r.kernel_replay >= 0
    assert (ops.kernel_row[graph_kernels] >= 0).all()


def _shares(t: Any) -> dict[str, float]:
    total = sum(r.device_self_ns for r in t.rows) + t.unattributed_device_ns
    return {r.key: r.device_total_ns / total for r in t.rows if r.kind == "module"}


def test_reduce_overhead_model_work_on_model_modules() -> None:
    """The issue's check, graph part: >= 95% of the model's device time (forward and backward;
    the optimizer step and a loss outside the model are neither) on a model module, through
    the capture of both graphs inside the window."""
    reduce = breakdown(load_trace(need(REDUCE)), "module")
    assert reduce.unattributed_device_ns == 0

    def fwd_bwd(r: Any) -> int:
        return (r.forward_device_ns or 0) + (r.backward_device_ns or 0)

    # Module rows' totals nest: count the roots' and the rows outside modules.
    roots = [r for r in reduce.rows if r.kind == "module" and "." not in r.key]
    outside = [r for r in reduce.rows if r.kind != "module"]
    on_modules = sum(fwd_bwd(r) for r in roots)
    assert on_modules / (on_modules + sum(fwd_bwd(r) for r in outside)) >= 0.95


def test_reduce_overhead_blocks_as_eager() -> None:
    """The issue's check: each block's device time share within 10% of the eager run's. The
    captured launches sit in Inductor's generated code: the blocks come from its compile-info
    folder (``gpt_reduce_overhead.compile/``, module stacks by gpuviz's pass)."""
    red = load_trace(need(REDUCE))
    attach_compile_info(red, read_compile_info(need(REDUCE_INFO)))
    s_red = _shares(breakdown(red, "module"))
    s_eager = _shares(breakdown(load_trace(need(EAGER)), "module"))
    # Blocks: module paths ending in a class named like one (Block_N), in both runs.
    blocks = [k for k in s_eager if re.search(r"Block\w*_\d+$", k)]
    assert blocks
    for k in blocks:
        red = next((v for p, v in s_red.items() if p.endswith(k.split(".", 1)[-1])), None)
        assert red is not None, k
        assert abs(red - s_eager[k]) <= 0.1 * s_eager[k], k


@pytest.mark.parametrize("by", ["op", "op-shape", "module", "line", "kernel"])
def test_reduce_overhead_tables_with_compile_info_hold_every_kernel_once(by: str) -> None:
    """Every table of the reduce-overhead run, its compile info attached, holds each kernel's
    time once: the rows' self time plus the time in no row is the kernels' time in the JSON."""
    red = load_trace(need(REDUCE))
    attach_compile_info(red, read_compile_info(need(REDUCE_INFO)))
    table = breakdown(red, by)
    gpu = sum(
        e["dur"] for e in events(REDUCE) if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
    )
    held = sum(r.device_self_ns for r in table.rows) + table.unattributed_device_ns
    assert held == pytest.approx(gpu * 1000, rel=1e-3)


@pytest.mark.parametrize("path", [MANUAL, REDUCE])
def test_op_shape_rows_of_captured_ops_hold_their_replays(path: Path) -> None:
    """``--by op-shape`` places a replayed kernel on the captured op's row of its own shapes,
    as ``--by op`` places it on the op's row: each kernel's time once (the rows' self time and
    the time in no row add up to the kernels' in the JSON), no row left for the graph, and
    the manual graph's two ``aten::addmm`` rows hold their GEMMs and memset (5 replays)."""
    trace = load_trace(need(path))
    table = breakdown(trace, "op-shape")
    gpu = sum(
        e["dur"] for e in events(path) if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
    )
    held = sum(r.device_self_ns for r in table.rows) + table.unattributed_device_ns
    assert held == pytest.approx(gpu * 1000, rel=1e-3)
    assert not any(r.key.startswith("graph ") for r in table.rows)
    if path == MANUAL:
        kernels = [e for e in events(path) if e.get("cat") in ("kernel", "gpu_memset")]
        gemm = sum(
            e["dur"] for e in kernels if "gemm" in e["name"] or e["name"] == "Memset (Device)"
        )
        addmm = [r for r in table.rows if r.key == "aten::addmm"]
        assert len(addmm) == 2 and all(r.calls == 1 for r in addmm)
        assert sum(r.device_self_ns for r in addmm) == pytest.approx(gemm * 1000, rel=1e-3)
        # Called once each, at capture; run 5 times: 5 x 2·M·K·N, by hand, in both tables.
        assert all(r.flops == 5 * 2 * 32 * 1024 * 4096 for r in addmm)
        (by_op,) = [r for r in breakdown(trace, "op").rows if r.key == "aten::addmm"]
        assert by_op.calls == 2 and by_op.flops == 2 * 5 * 2 * 32 * 1024 * 4096
