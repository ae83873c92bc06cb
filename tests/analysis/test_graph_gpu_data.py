"""Graph replays on traces recorded on a GPU (brought by the lead into tests/data/graphs/gpu/;
each test skips, saying so, while its file is absent):

- ``manual_graph.json.gz``: one trace holding a ``torch.cuda.graph`` capture of a small MLP and
  5 replays of it;
- ``gpt_reduce_overhead.json.gz`` / ``gpt_eager.json.gz``: a small GPT under
  ``torch.compile(mode="reduce-overhead")`` (CUDA graphs) and the same model eager.

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
from gpuviz.analysis.graph_merge import merge_of
from gpuviz.analysis.graph_replays import graph_replays
from gpuviz.trace.kineto import load_trace

GPU = Path(__file__).parent.parent / "data" / "graphs" / "gpu"
MANUAL = GPU / "manual_graph.json.gz"
REDUCE = GPU / "gpt_reduce_overhead.json.gz"
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


def test_reduce_overhead_device_time_on_model_modules_as_eager() -> None:
    """The issue's check, of the graph and the compile parts together: >= 95% of device time
    on a model module, each block within 10% of the eager run's share."""
    reduce = breakdown(load_trace(need(REDUCE)), "module")
    eager = breakdown(load_trace(need(EAGER)), "module")

    def shares(t: Any) -> dict[str, float]:
        total = sum(r.device_self_ns for r in t.rows) + t.unattributed_device_ns
        return {r.key: r.device_total_ns / total for r in t.rows if r.kind == "module"}

    s_red, s_eager = shares(reduce), shares(eager)
    on_modules = sum(r.device_self_ns for r in reduce.rows if r.kind == "module")
    total = sum(r.device_self_ns for r in reduce.rows) + reduce.unattributed_device_ns
    assert on_modules / total >= 0.95
    # Blocks: module paths ending in a class named like one (GPT's Block_N), in both runs.
    blocks = [k for k in s_eager if re.search(r"Block\w*_\d+$", k) and k in s_red]
    assert blocks, "no block path in both runs"
    for k in blocks:
        assert abs(s_red[k] - s_eager[k]) <= 0.1 * s_eager[k], k
