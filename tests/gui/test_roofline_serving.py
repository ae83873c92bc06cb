"""The Roofline view of a serving trace (issue 50): its prefill (MFU, TFLOP/s) and decode (MBU,
bandwidth read) phases beside the op-shapes, checked against a hand count of GPT-2's weights
and KV cache and the recording's CUDA-event times; unknown phases say why."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from gpuviz.gui.qt_load_worker import analyze
from gpuviz.gui.views.qt_trace_view import QtTraceView
from gpuviz.trace.kineto import load_trace

DATA = Path(__file__).parent.parent / "data"
GENERATE = DATA / "serving" / "gpu" / "hf_generate.json.gz"  # GPT-2 small, bf16, on an H100
SGLANG = DATA / "serving" / "sglang_extend_qwen3_8b.json.gz"
VLLM = DATA / "tl__inference__vllm_decode_full__graph_execution.json.gz"

# GPT-2 small by hand: 12 layers of c_attn 768x2304, c_proj 768x768, c_fc 768x3072, mlp c_proj
# 3072x768; the LM head 768x50257 (tied to wte); heads 12 x 64; bf16 (2 bytes).
LAYERS, D, VOCAB, HEADS, HEAD_DIM, BF16 = 12, 768, 50257, 12, 64, 2
LAYER_PARAMS = D * 3 * D + D * D + 2 * D * 4 * D
WEIGHT_BYTES = (LAYERS * LAYER_PARAMS + D * VOCAB) * BF16


KEEP: list[QtTraceView] = []
"""The trace views of the test that runs: a Roofline view lives only as long as its parent."""


@pytest.fixture(autouse=True)
def _keep() -> Iterator[None]:
    yield
    KEEP.clear()


def _view(qtbot, path: Path):
    view = QtTraceView(analyze(load_trace(path)), "t", "roofline")
    qtbot.addWidget(view)
    KEEP.append(view)
    view.set_view("roofline")
    return view.roofline_view


def test_generate_phases_against_a_hand_count_and_cuda_events(qtbot) -> None:
    truth = json.loads((GENERATE.parent / "hf_generate.truth.json").read_text())
    batch, prompt = truth["batch"], truth["prompt"]
    roof = _view(qtbot, GENERATE)
    marks = {m.phase: m for m in roof.phase_marks}
    assert set(marks) == {"prefill", "decode"}
    pre, dec = marks["prefill"], marks["decode"]

    # decode step k reads every weight once and the KV cache of 128 + k positions: per layer
    # keys and values [batch, heads, 128 + k, 64] (eager attention's matmuls)
    steps = range(1, truth["new_tokens"])
    kv = sum(LAYERS * 2 * batch * HEADS * HEAD_DIM * (prompt + k) * BF16 for k in steps)
    assert dec.steps == len(steps)
    assert dec.nbytes == len(steps) * WEIGHT_BYTES + kv
    # the bandwidth it read at, against the forwards' CUDA-event times of the recording
    event_s = sum(f["cuda_event_ms"] for f in truth["forwards"][1:]) / 1e3
    assert dec.tb_s == pytest.approx(dec.nbytes / event_s / 1e12, rel=0.05)
    assert dec.mbu == pytest.approx(dec.tb_s / 3.35, rel=1e-3)  # H100 SXM: 3.35 TB/s

    # prefill FLOPs: the layers' GEMMs over 4 x 128 tokens and the LM head over each
    # sequence's last token, plus attention (causal: at most the full QK^T and PV)
    gemms = 2 * batch * prompt * LAYERS * LAYER_PARAMS + 2 * batch * D * VOCAB
    attention = LAYERS * 2 * (2 * batch * HEADS * prompt * prompt * HEAD_DIM)
    assert pre.flops is not None and gemms <= pre.flops <= gemms + attention
    prefill_s = truth["forwards"][0]["cuda_event_ms"] / 1e3
    assert pre.tflops == pytest.approx(pre.flops / prefill_s / 1e12, rel=0.05)

    # both placed at their intensity and TFLOP/s, and said in a line each
    assert len(roof.phase_items) == 2
    for m, item in zip(roof.phase_marks, roof.phase_items, strict=True):
        x, y = item.getData()
        assert 10 ** x[0] == pytest.approx(m.flops / m.nbytes)
        assert 10 ** y[0] == pytest.approx(m.tflops)
    lines = roof.phases.text().splitlines()
    assert lines[0].startswith("prefill (1 step): MFU >= ") and "TFLOP/s" in lines[0]
    assert lines[1].startswith("decode (15 steps): MBU >= ")
    assert "GB/s of 3.35 TB/s" in lines[1]
    assert not roof.phases.isHidden()


def test_sglang_prefill_mfu_beside_the_roofline(qtbot) -> None:
    roof = _view(qtbot, SGLANG)
    (pre,) = roof.phase_marks
    assert pre.phase == "prefill" and len(roof.phase_items) == 1
    # its MFU is its TFLOP/s over the MI300X's bf16 peak (all its counted FLOPs are bf16)
    assert pre.mfu == pytest.approx(pre.tflops / 1307.4, rel=1e-3)
    assert "MFU >= 16.5%" in roof.phases.text()
    # the roofs reach the phase's intensity
    assert all(r.x[-1] >= pre.intensity for r in roof.roofs)


def test_a_graph_replayed_decode_has_no_marker_and_says_why(qtbot) -> None:
    roof = _view(qtbot, VLLM)
    (dec,) = roof.phase_marks
    assert dec.phase == "decode" and dec.mbu is None and dec.nbytes is None
    assert roof.phase_items == []
    assert "MBU unknown (the step replayed a graph" in roof.phases.text()


def test_a_training_trace_has_no_phases(qtbot) -> None:
    roof = _view(qtbot, DATA / "roofline" / "roofline.json.gz")
    assert roof.phase_marks == [] and roof.phase_items == []
    assert roof.phases.isHidden() and roof.point_count() > 0
    assert np.all(np.isfinite(roof.scatter.data["x"]))


def test_new_peaks_move_the_decode_mbu(qtbot) -> None:
    from gpuviz.analysis.peaks import PeakOverride

    _view(qtbot, GENERATE)
    view = KEEP[-1]
    before = {m.phase: m for m in view.roofline_view.phase_marks}["decode"]
    view.set_peaks(PeakOverride(peak_bandwidth_tb_s=1.0))  # the Peaks dialog's
    after = {m.phase: m for m in view.roofline_view.phase_marks}["decode"]
    assert after.nbytes == before.nbytes and after.mbu == pytest.approx(before.mbu * 3.35)
    assert "GB/s of 1 TB/s" in view.roofline_view.phases.text()


def test_a_graph_replayed_decode_with_its_capture_is_placed(qtbot) -> None:
    from gpuviz.trace.graph_captures import load_with_captures

    run = DATA / "graphs" / "vllm_decode_full" / "graph_execution.json.gz"
    view = QtTraceView(analyze(load_with_captures(run)), "t", "roofline")
    qtbot.addWidget(view)
    KEEP.append(view)
    view.set_view("roofline")
    roof = view.roofline_view
    (dec,) = roof.phase_marks
    # the capture's 72 addmm weights (24 layers: qkv, o_proj, router; bf16) and the LM head
    # around the replay (tests/analysis/test_mbu_graphs.py counts them from the JSON)
    weights = 24 * (2880 * 5120 + 4096 * 2880 + 2880 * 32) * 2 + 2880 * 201088 * 2
    assert dec.nbytes == weights and len(roof.phase_items) == 1
    assert dec.tb_s == pytest.approx(weights / dec.time_ns / 1e3)
    assert roof.phases.text().startswith("decode (1 step): MBU >= 2.4%")


def test_phases_that_fail_say_why_and_the_roofline_stays(qtbot, monkeypatch) -> None:
    from gpuviz.analysis import serving_phases
    from gpuviz.analysis.peaks import PeakOverride

    _view(qtbot, SGLANG)
    view = KEEP[-1]

    def boom(*_a, **_k):
        raise RuntimeError("boom")

    monkeypatch.setattr(serving_phases, "serving_report", boom)
    view.set_peaks(PeakOverride(peak_bandwidth_tb_s=1.0))  # phases made again: they fail
    roof = view.roofline_view
    assert roof.phase_marks == [] and roof.point_count() > 0
    assert roof.phases.text() == "serving phases unknown (RuntimeError: boom)"
