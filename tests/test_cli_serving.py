"""``gpuviz summary`` on serving traces: the ``serving`` object (docs/serving.md) and its text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuviz.cli import main

DATA = Path(__file__).parent / "data"
SGLANG = DATA / "serving" / "sglang_extend_qwen3_8b.json.gz"
VLLM = DATA / "tl__inference__vllm_decode_full__graph_execution.json.gz"


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_summary_serving_sglang(capsys: pytest.CaptureFixture[str]) -> None:
    j = _json(capsys, "summary", str(SGLANG))
    s = j["serving"]
    assert s["sources"] == ["SGLang"]
    (step,) = s["steps"]
    # step[EXTEND bs=15 toks=15360] and execute_…_context_15(sq15360…): 15 prompts, 15360 tokens
    assert (step["phase"], step["requests"], step["tokens"]) == ("prefill", 15, 15360)
    assert step["graph"] is False and step["gap_before_us"] is None
    (pre,) = s["phases"]
    assert pre["phase"] == "prefill" and s["ttft_us"] == step["duration_us"]
    assert s["tpot_us"] is None and any(n.startswith("TPOT unknown") for n in s["notes"])
    # the per-step MFU is the summary's own step figure, not another count
    assert step["mfu"] == pytest.approx(j["mfu"]["steps"][0]["mfu"], abs=1e-4)
    assert "mfu" in j and "streams" in j  # the existing fields stay


def test_summary_serving_vllm_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["summary", str(VLLM)]) == 0
    out = capsys.readouterr().out
    assert "Serving steps (vLLM): 1 step" in out
    assert "decode MBU unknown (the step replayed a graph" in out
    assert "TTFT unknown (no prefill step in the trace)" in out


def test_breakdown_by_step_has_phase_and_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    j = _json(capsys, "breakdown", str(VLLM), "--by", "step")
    (row,) = j["rows"]
    # execute_32_context_0(…)_generation_32(sq32…): 32 decode requests, one token each
    assert (row["phase"], row["requests"], row["tokens"], row["graph"]) == ("decode", 32, 32, True)
    assert main(["breakdown", str(SGLANG), "--by", "step"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "duration" in line)
    assert "phase" in header and "tokens" in header and "prefill" in out and "15360" in out


def test_training_breakdown_by_step_has_no_phase(capsys: pytest.CaptureFixture[str]) -> None:
    j = _json(capsys, "breakdown", str(DATA / "streams_overlap.json.gz"), "--by", "step")
    assert all("phase" not in r for r in j["rows"])
    assert main(["breakdown", str(DATA / "streams_overlap.json.gz"), "--by", "step"]) == 0
    assert "phase" not in capsys.readouterr().out
