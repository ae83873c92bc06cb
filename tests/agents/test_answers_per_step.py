"""The agents' answers state savings per step and step times by launch (issue 47, items 1, 8).

An agent's ``overview`` said "could save 211.5 ms (50% of the step time)" of an 85 ms step:
211.5 ms was the sum over the trace's steps.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuviz.agents.answers import findings_answer, trace_overview
from gpuviz.analysis.advisor import advise
from gpuviz.analysis.summary import summarize
from gpuviz.trace.kineto import load_trace
from tests.cpu_ahead_trace import write_cpu_ahead

ADV = Path(__file__).parent.parent / "data" / "advisor"


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+) (ms|µs)", text).groups()  # type: ignore[union-attr]
    return float(value) / (1000.0 if unit == "µs" else 1.0)


def test_overview_states_the_main_saving_per_step() -> None:
    trace = load_trace(ADV / "adv_launch_bound.json.gz")
    advice = advise(trace)
    text = trace_overview("adv_launch_bound.json.gz", advice, summarize(trace))
    m = re.search(r"Main problem: \w+ \(\w+\), could save ([\d.]+ (?:ms|µs)) a step \(", text)
    assert m, text
    # Independent: the steps' windows, one per ProfilerStep, from the advice's own JSON.
    steps = advice.to_json()["steps"]
    mean_step_ms = sum(s["duration_us"] for s in steps) / len(steps) / 1000.0
    top = advice.findings[0]
    assert _ms(m.group(1)) == pytest.approx(min(top.share, 1) * mean_step_ms, rel=0.05, abs=0.05)
    assert _ms(m.group(1)) <= mean_step_ms
    # The sum over the trace's steps is never stated as a saving.
    assert f"could save {top.saving_ns / 1e6:.1f} ms (" not in text
    for line in text.splitlines():
        if "could save" in line:
            assert " a step (" in line, line
    answer, data = findings_answer("adv_launch_bound.json.gz", advice, None)
    # The structured figures say the same per step: saving_per_step_us is the text's figure.
    assert data["findings"][0]["saving_per_step_us"] == pytest.approx(
        _ms(m.group(1)) * 1000.0, rel=0.05
    )
    for line in answer.splitlines():
        if "could save" in line:
            assert " a step (" in line, line


def test_overview_mean_step_is_the_gpu_step_of_a_cpu_ahead_loop(tmp_path: Path) -> None:
    truth = write_cpu_ahead(tmp_path / "ahead.json.gz")
    trace = load_trace(tmp_path / "ahead.json.gz")
    text = trace_overview("ahead.json.gz", advise(trace), summarize(trace))
    m = re.search(r"Mean step ([\d.]+ (?:ms|µs))", text)
    assert m, text
    mean_ms = sum(truth["duration_us"]) / len(truth["duration_us"]) / 1000.0
    assert _ms(m.group(1)) == pytest.approx(mean_ms, rel=1e-3)
