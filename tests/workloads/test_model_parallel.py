"""The ``model_parallel`` workload: cuts, the pipeline schedule, stage times, CPU and GPUs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuviz.engine.events import Failed, Finished
from gpuviz.engine.runner import Runner, RunRequest
from gpuviz.errors import BadInputError
from gpuviz.workloads.model_parallel import stage_bounds, wavefront

SMALL = {"layers": 6, "width": 32, "batch": 24, "micro_batches": 3}


def test_stage_bounds_cover_every_layer_once() -> None:
    for layers in range(2, 12):
        for stages in range(1, 6):
            b = stage_bounds(layers, [], stages)
            assert b[0][0] == 0 and b[-1][1] == layers
            assert all(b[i][1] == b[i + 1][0] for i in range(len(b) - 1))
            sizes = [e - s for s, e in b]
            assert max(sizes) - min(sizes) <= 1 and min(sizes) >= 1
    assert stage_bounds(10, [7, 2], 0) == [(0, 2), (2, 7), (7, 10)]


def test_wavefront_respects_dependencies() -> None:
    for stages in range(1, 5):
        for micro in range(1, 6):
            order = wavefront(stages, micro)
            assert sorted(order) == [(s, j) for s in range(stages) for j in range(micro)]
            at = {pair: i for i, pair in enumerate(order)}
            for (s, j), i in at.items():
                if s > 0:
                    assert at[(s - 1, j)] < i  # its input exists
                if j > 0:
                    assert at[(s, j - 1)] < i  # a stage takes micro-batches in order


def test_cut_model_gives_the_same_output_as_one_device() -> None:
    import torch

    from gpuviz.workloads.base import RunContext
    from gpuviz.workloads.model_parallel import build

    cpu = torch.device("cpu")
    params = {**SMALL, "cuts": [2, 5], "backward": False}
    plan = build(RunContext(cpu, [cpu], params, steps=1))
    outs = {}
    for s in plan.strategies:
        s.setup()  # type: ignore[misc]
        outs[s.name] = s.step()
    assert set(outs) == {"one_device", "split", "pipeline"}
    torch.testing.assert_close(outs["split"], outs["one_device"])
    torch.testing.assert_close(outs["pipeline"], outs["one_device"])


def run(params: dict[str, Any], tmp_path: Path, **kw: Any) -> dict[str, Any]:
    events = list(
        Runner(RunRequest("model_parallel", params, out=str(tmp_path / "mp.json.gz"), **kw))
    )
    assert isinstance(events[-1], Finished), events[-1]
    return events[-1].result  # type: ignore[no-any-return]


def test_cpu_stages_run_in_turn(tmp_path: Path) -> None:
    result = run({**SMALL, "cuts": [2, 5], "backward": True}, tmp_path, device="cpu", steps=2)
    mp = result["model_parallel"]
    assert mp["runs_in_turn"] is True
    assert [s["layers"] for s in mp["stages"]] == [[0, 1], [2, 3, 4], [5]]
    assert all(s["device"] == "cpu" for s in mp["stages"])
    by = {s["name"]: s for s in result["strategies"]}
    assert by["pipeline"]["micro_batches"] == 3 and by["split"]["micro_batches"] == 1
    for name in ("split", "pipeline"):
        assert len(by[name]["stage_ms"]) == 3 and all(t > 0 for t in by[name]["stage_ms"])
        # The stages ran inside the step: their sum cannot exceed it.
        assert sum(by[name]["stage_ms"]) <= by[name]["step_wall_ms"] * 1.01
        assert "bubble" not in by[name]  # one device: nothing idles while another works


def test_default_cut_is_two_stages_on_the_cpu(tmp_path: Path) -> None:
    result = run({**SMALL, "micro_batches": 1}, tmp_path, device="cpu", steps=1)
    stages = result["model_parallel"]["stages"]
    assert [s["layers"] for s in stages] == [[0, 1, 2], [3, 4, 5]]
    assert [s["name"] for s in result["strategies"]] == ["one_device", "split"]


def test_bad_cut_is_refused(tmp_path: Path) -> None:
    # cuts and layers are checked together when the plan is built: the run fails, naming -p cuts.
    events = list(
        Runner(RunRequest("model_parallel", {**SMALL, "cuts": [6]}, device="cpu", profile=False))
    )
    assert isinstance(events[-1], Failed) and "-p cuts=[6]" in events[-1].error
    assert BadInputError.__name__ in events[-1].error


@pytest.mark.gpu
def test_stages_on_gpus_have_a_bubble(tmp_path: Path) -> None:
    import torch

    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if n < 2:
        pytest.skip("needs 2 GPUs")
    params = {"layers": 8, "width": 4096, "batch": 2048, "micro_batches": 8}
    result = run(params, tmp_path, gpus="2", steps=3)
    mp = result["model_parallel"]
    assert [s["device"] for s in mp["stages"]] == ["cuda:0", "cuda:1"]
    by = {s["name"]: s for s in result["strategies"]}
    for name in ("split", "pipeline"):
        assert set(by[name]["bubble"]) == {"cuda:0", "cuda:1"}
    # Micro-batches let the stages overlap: less idle time than one stage at a time.
    assert by["pipeline"]["bubble_share"] < by["split"]["bubble_share"]
    assert by["split"]["bubble_share"] > 0.3


def test_recorded_4gpu_trace_runs_each_stage_on_its_gpu(data_dir: Path) -> None:
    # In a 4-GPU recording, every kernel launched inside "stage{s} mb{j} on cuda:{d}" ran on d.
    import gzip
    import json
    import re

    with gzip.open(data_dir / "model_parallel_4gpu.json.gz", "rt") as f:
        events = json.load(f)["traceEvents"]
    stages = [
        (e["ts"], e["ts"] + e["dur"], e["tid"], int(m.group(1)), int(m.group(2)))
        for e in events
        if e.get("cat") == "user_annotation"
        and (m := re.fullmatch(r"stage(\d) mb\d on cuda:(\d)", e["name"]))
    ]
    assert {(s, d) for *_, s, d in stages} == {(0, 0), (1, 1), (2, 2), (3, 3)}
    device_of = {
        e["args"]["correlation"]: e["args"]["device"]
        for e in events
        if e.get("cat") == "kernel" and "correlation" in e.get("args", {})
    }
    checked = 0
    for e in events:
        if e.get("cat") != "cuda_runtime" or "Launch" not in e["name"]:
            continue
        corr = e.get("args", {}).get("correlation")
        for t0, t1, tid, _s, d in stages:
            if tid == e["tid"] and t0 <= e["ts"] < t1 and corr in device_of:
                assert device_of[corr] == d
                checked += 1
    assert checked >= 16  # 4 stages x 4 micro-batches, each with its own matmuls
