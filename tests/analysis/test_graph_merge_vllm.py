"""The capture-and-replay merge on vLLM's decode trace and its capture (TraceLens test data,
AMD MI300X, ROCm): one hipGraphLaunch of 421 kernels, captured in ``capture_traces/``.

The truth is read from the JSON itself, apart from gpuviz: the replay's kernels (those with the
launch's correlation, in start order), the capture's launch calls (between
``hipStreamBeginCapture`` and ``hipStreamEndCapture``, in order, each naming its kernel), and the
Python frames that enclose each launch in time on its thread.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from gpuviz.analysis.attribution import attribute
from gpuviz.analysis.breakdown import breakdown
from gpuviz.analysis.graph_merge import merge_of
from gpuviz.trace.graph_captures import capture_files, load_with_captures

RUN = (
    Path(__file__).parent.parent
    / "data"
    / "graphs"
    / "vllm_decode_full"
    / "graph_execution.json.gz"
)
RUNNER = "vllm/compilation/cuda_graph.py"


def _events(path: Path) -> list[dict[str, Any]]:
    return json.load(gzip.open(path))["traceEvents"]


@pytest.fixture(scope="module")
def truth() -> dict[str, Any]:
    run = _events(RUN)
    corr = next(e for e in run if e.get("name") == "hipGraphLaunch")["args"]["correlation"]
    kernels = sorted(
        (e for e in run if e.get("cat") == "kernel" and e["args"].get("correlation") == corr),
        key=lambda e: e["ts"],
    )
    (cap_file,) = capture_files(RUN)
    cap = _events(cap_file)
    begin = next(e["ts"] for e in cap if e.get("name") == "hipStreamBeginCapture")
    end = next(e["ts"] for e in cap if e.get("name") == "hipStreamEndCapture")
    launches = sorted(
        (
            e
            for e in cap
            if e.get("cat") == "cuda_runtime" and "Launch" in e["name"] and begin < e["ts"] < end
        ),
        key=lambda e: e["ts"],
    )
    frames = [e for e in cap if e.get("cat") == "python_function"]
    around = []
    for la in launches:
        enclosing = [
            f
            for f in frames
            if f["tid"] == la["tid"]
            and f["ts"] <= la["ts"]
            and la["ts"] + la["dur"] <= f["ts"] + f["dur"]
        ]
        around.append(sorted(enclosing, key=lambda f: (f["ts"], -f["dur"])))
    return {"kernels": kernels, "launches": launches, "around": around}


@pytest.fixture(scope="module")
def trace() -> Any:
    return load_with_captures(RUN)  # finds capture_traces/ beside the run


def test_the_pair_is_what_the_truth_says(truth: dict[str, Any]) -> None:
    k, la = truth["kernels"], truth["launches"]
    assert len(k) == len(la) == 421
    assert [e["name"] for e in k] == [e["args"]["kernel"] for e in la]


def test_every_replayed_kernel_is_matched(trace: Any) -> None:
    m = merge_of(attribute(trace))
    assert m is not None
    assert (len(m.kernel), m.graph_kernels, m.grid_mismatches) == (421, 421, 0)


def _kernel_keys(trace: Any, by: str, truth: dict[str, Any]) -> list[str | None]:
    """Each of the graph's kernels' row key in table ``by``, in start order."""
    table = breakdown(trace, by)
    assert table.unattributed_device_ns == 0
    s = trace.slices
    corr = truth["kernels"][0]["args"]["correlation"]
    mine = [i for i, kr in enumerate(table.kernel_rows.tolist()) if s.correlation[kr] == corr]
    mine.sort(key=lambda i: int(s.start_ns[table.kernel_rows[i]]))
    assert [trace.name_of(int(table.kernel_rows[i])) for i in mine] == [
        e["name"] for e in truth["kernels"]
    ]
    rows = table.kernel_row
    return [None if rows[i] < 0 else table.rows[int(rows[i])].key for i in mine]


def test_at_least_90_percent_of_the_graphs_kernels_on_a_model_module(
    trace: Any, truth: dict[str, Any]
) -> None:
    # Measure: the share of the graph's kernels (by count) whose module row is the path of the
    # module frames enclosing its capture launch (outermost to innermost, from the JSON), under
    # the model's root module.
    keys = _kernel_keys(trace, "module", truth)
    good = 0
    for key, frames in zip(keys, truth["around"], strict=True):
        mods = [
            f["name"].removeprefix("nn.Module: ")
            for f in frames
            if f["name"].startswith("nn.Module: ")
        ]
        if mods and key == ".".join(dict.fromkeys(mods)) and key.startswith("GptOssForCausalLM_0"):
            good += 1
    assert good / len(keys) >= 0.9, good


def test_at_least_90_percent_of_the_graphs_kernels_on_a_model_line(
    trace: Any, truth: dict[str, Any]
) -> None:
    # Measure: the share of the graph's kernels (by count) whose line row is one of the source
    # frames enclosing its capture launch, and not the graph runner's replay line.
    keys = _kernel_keys(trace, "line", truth)
    good = 0
    for key, frames in zip(keys, truth["around"], strict=True):
        lines = set()
        for f in frames:
            head, _, _ = f["name"].partition(": ")
            if head.endswith(")") and "(" in head:
                file, _, line = head[:-1].rpartition("(")
                lines.add(f"{file}:{line}")
        if key in lines and not key.startswith(RUNNER):
            good += 1
    assert good / len(keys) >= 0.9, good


def test_without_the_capture_the_replay_is_one_unit() -> None:
    from gpuviz.trace.kineto import load_trace

    plain = load_trace(RUN)
    ops = breakdown(plain, "op")
    assert ops.unattributed_device_ns == 0
    assert [r.key for r in ops.rows if r.kind == "graph"] == ["graph 1: 421 kernels"]


def test_timeline_details_of_a_replayed_kernel(trace: Any, truth: dict[str, Any]) -> None:
    from gpuviz.analysis.origin import kernel_origins
    from gpuviz.trace.kineto import load_trace

    s = trace.slices
    corr = truth["kernels"][0]["args"]["correlation"]
    rows = [
        i
        for i in range(len(s))
        if s.correlation[i] == corr and trace.name_of(i) != "hipGraphLaunch"
    ]
    rows.sort(key=lambda i: int(s.start_ns[i]))
    assert len(rows) == 421
    module_keys = _kernel_keys(trace, "module", truth)
    line_keys = _kernel_keys(trace, "line", truth)
    got = kernel_origins(trace, rows)
    # With the capture: the kernel's module and line are those the tables put it on.
    assert [o.module for o in got] == module_keys
    assert [o.line for o in got] == line_keys
    # Without it: the replay unit, on the replay's own line.
    plain = load_trace(RUN)
    alone = kernel_origins(plain, rows[:1])[0]
    assert alone is not None and alone.op == "graph 1: 421 kernels"
    assert alone.line == f"{RUNNER}:208"
