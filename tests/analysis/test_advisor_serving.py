"""The serving rules on hand-made traces whose figures are counted by hand here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuviz.analysis.advisor import advise
from gpuviz.trace.kineto import load_trace
from tests.analysis.synthetic_trace import k_annotation, k_kernel, k_launch, kineto_trace
from tests.analysis.test_serving_steps import DATA, SGLANG, VLLM, _generate_events

SERVING = ["eager_decode", "scheduler_gaps", "small_decode_batch", "mixed_step_slow"]


def _vllm_steps(phases: list[str], graph: bool, gap: float = 5.0) -> list[dict[str, Any]]:
    """vLLM steps: a decode step of 32 requests 100 µs, a mixed one 400 µs; each launches one
    kernel (or one graph) that runs all its step."""
    ev: list[dict[str, Any]] = []
    t = 10.0
    for corr, phase in enumerate(phases, start=1):
        dur = 100.0 if phase == "decode" else 400.0
        ctx = (
            "context_1(sq512sk512sqsq262144sqsk262144)"
            if phase == "mixed"
            else "context_0(sq0sk0sqsq0sqsk0)"
        )
        ev.append(
            k_annotation(f"execute_{544}_{ctx}_generation_32(sq32sk4096sqsq32sqsk4096)", t, dur)
        )
        launch = k_launch(t + 1, corr)
        if graph:
            launch["name"] = "cudaGraphLaunch"
        ev.append(launch)
        ev.append(k_kernel("fused_step", t + 3, dur - 4, corr))
        t += dur + gap
    return ev


def _kinds(trace: Any) -> dict[str, Any]:
    return {f.kind: f for f in advise(trace, kinds=SERVING).findings}


def test_generate_eager_decode_gaps_and_small_batch(tmp_path: Path) -> None:
    events, _ = _generate_events(new_tokens=3, gap=30.0)
    found = _kinds(kineto_trace(events, tmp_path))
    # each decode forward: 100 µs, its two kernels 20 µs each; no graph
    eager = found["eager_decode"]
    assert eager.saving_ns == pytest.approx(3 * 60_000)
    # 30 µs before each of the 3 later forwards, against 4 steps of 100 µs
    gaps = found["scheduler_gaps"]
    assert gaps.saving_ns == pytest.approx(3 * 30_000)
    assert gaps.share == pytest.approx(90 / 400)
    small = found["small_decode_batch"]  # 2 prompts
    assert small.severity == "info" and "2.0 requests" in small.detail
    assert "mixed_step_slow" not in found


def test_graph_replayed_decode_is_not_eager(tmp_path: Path) -> None:
    found = _kinds(kineto_trace(_vllm_steps(["decode"] * 4, graph=True), tmp_path))
    assert "eager_decode" not in found
    assert "small_decode_batch" not in found  # 32 requests a step
    assert "scheduler_gaps" not in found  # 5 µs gaps against 100 µs steps


def test_mixed_steps_much_longer_than_decode(tmp_path: Path) -> None:
    phases = ["decode", "decode", "mixed", "decode", "mixed", "decode"]
    found = _kinds(kineto_trace(_vllm_steps(phases, graph=True), tmp_path))
    slow = found["mixed_step_slow"]
    # two mixed steps of 400 µs, decode median 100 µs: 200 µs each beyond 2 decode steps
    assert slow.saving_ns == pytest.approx(2 * 200_000)
    assert "4.0x" in slow.detail


def test_real_serving_traces_and_a_training_trace_stay_quiet_where_they_should() -> None:
    vllm = _kinds(load_trace(VLLM))
    assert "eager_decode" not in vllm  # it replays a graph
    assert "small_decode_batch" not in vllm  # one step of 32 requests
    assert _kinds(load_trace(SGLANG)) == {}  # one prefill step: no decode, no gap
    assert _kinds(load_trace(DATA / "streams_overlap.json.gz")) == {}
