"""The agents' overview of a serving trace: its phases, TTFT and TPOT, as ``gpuviz summary``
states them (one analysis, one text: gpuviz/report/serving.py)."""

from __future__ import annotations

from pathlib import Path

from gpuviz.agents.schemas import TraceOverview
from gpuviz.agents.server import overview_of
from gpuviz.agents.store import Store

DATA = Path(__file__).parent.parent / "data"


def test_overview_of_a_vllm_decode_trace() -> None:
    text, figures = overview_of(
        DATA / "tl__inference__vllm_decode_full__graph_execution.json.gz", "vllm", Store(), False
    )
    s = figures["serving"]
    assert s["sources"] == ["vLLM"] and "steps" not in s
    (dec,) = s["phases"]
    # execute_32_context_0(…)_generation_32(…): 32 decode requests, a token each, one graph
    assert (dec["phase"], dec["steps"], dec["tokens"], dec["graph_steps"]) == ("decode", 1, 32, 1)
    assert s["tpot_us"] == dec["mean_step_us"] and s["ttft_us"] is None
    assert "Serving steps (vLLM)" in text and "TTFT unknown (no prefill step" in text
    TraceOverview.model_validate(figures)


def test_overview_of_a_training_trace_has_no_serving() -> None:
    text, figures = overview_of(DATA / "streams_overlap.json.gz", "t", Store(), False)
    assert figures["serving"] is None and "Serving steps" not in text
