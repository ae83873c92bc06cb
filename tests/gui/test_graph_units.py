"""The app's view of graph replays (Qt-free parts): the loader finds the capture beside the run
(or takes one named), and a replay unit's row outlines exactly its kernels on the Timeline."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from gpuviz.gui.qt_load_worker import load_and_analyze
from gpuviz.gui.views.ops.breakdown_model import compute_breakdowns, row_kernels

PAIR = Path(__file__).parents[1] / "data" / "graphs" / "vllm_decode_full"
RUN = PAIR / "graph_execution.json.gz"


def _graph_corr() -> int:
    ev = json.load(gzip.open(RUN))["traceEvents"]
    return next(e for e in ev if e.get("name") == "hipGraphLaunch")["args"]["correlation"]


def test_the_unit_row_outlines_its_replays_kernels(tmp_path: Path) -> None:
    run = tmp_path / "run.json.gz"
    shutil.copy(RUN, run)  # no capture_traces/ beside it
    trace = load_and_analyze(str(run)).trace
    bd = compute_breakdowns(trace)
    assert bd.op is not None
    index = next(i for i, r in enumerate(bd.op.rows) if r.kind == "graph")
    rows = row_kernels(bd, "op", index)
    # Truth: the kernels that carry the hipGraphLaunch's correlation in the JSON.
    corr = _graph_corr()
    assert len(rows) == 421
    assert set(trace.slices.correlation[rows].tolist()) == {corr}


def test_the_loader_finds_the_capture_beside_the_run(tmp_path: Path) -> None:
    trace = load_and_analyze(str(RUN)).trace
    bd = compute_breakdowns(trace)
    assert bd.op is not None and bd.module is not None
    assert not [r for r in bd.op.rows if r.kind == "graph"]
    module = {r.key: r for r in bd.module.rows}
    assert module["GptOssForCausalLM_0.GraphModule_0"].device_self_ns > 10_000_000
    # Named explicitly, from elsewhere.
    run = tmp_path / "run.json.gz"
    shutil.copy(RUN, run)
    named = load_and_analyze(str(run), capture_trace=str(PAIR / "capture_traces")).trace
    bd2 = compute_breakdowns(named)
    assert bd2.module is not None
    assert {r.key for r in bd2.module.rows} == set(module)
