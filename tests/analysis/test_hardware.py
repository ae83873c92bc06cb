"""Roofline columns and MFU of a trace (:mod:`gpuviz.analysis.hardware`): on the H100
recording of ``tests/data/roofline`` against its CUDA-event figures, and on synthetic runs whose
figures follow by hand from how they were written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hardware_synth import add_bytes, gemm_flops, write_run

from gpuviz.analysis.breakdown import breakdown
from gpuviz.analysis.hardware import annotate_breakdown, hardware
from gpuviz.analysis.peaks import PeakOverride
from gpuviz.trace.kineto import load_trace

DATA = Path(__file__).parent.parent / "data"
GPU = DATA / "roofline"


def _cases() -> dict[str, dict]:
    return {c["name"]: c for c in json.loads((GPU / "roofline_expected.json").read_text())["cases"]}


def test_recorded_gemms_against_cuda_events() -> None:
    trace = load_trace(GPU / "roofline.json.gz")
    hw = hardware(trace)
    assert hw.peaks.peaks is not None and hw.peaks.peaks.key == "h100-sxm"
    cases = _cases()
    big = hw.shape("aten::mm", [[8192, 8192], [8192, 8192]], ["c10::BFloat16", "c10::BFloat16"])
    assert big is not None and big.calls == 3
    assert big.flops == 3 * cases["mm_bf16_8192"]["flops"]
    assert big.tflops == pytest.approx(cases["mm_bf16_8192"]["tflops"], rel=0.05)
    assert big.precision == "bf16" and big.bound == "compute"
    assert big.roof_share == pytest.approx(big.tflops / 989.4)
    assert len(big.kernels) >= 3
    skinny = hw.shape("aten::mm", [[65536, 8192], [8192, 64]], ["c10::BFloat16", "c10::BFloat16"])
    assert skinny is not None and skinny.bound == "memory"
    assert skinny.tflops == pytest.approx(cases["mm_bf16_skinny"]["tflops"], rel=0.05)
    # roof of a memory-bound op: intensity x bandwidth
    assert skinny.roof_share == pytest.approx(skinny.tflops / (skinny.intensity * 3.35))


def test_recorded_fp32_and_tf32_calls_of_one_shape() -> None:
    """fp32 and TF32 GEMMs share a shape and types: each precision is a row of its own, at
    its own roof; merged, they are one row of 6 calls."""
    hw = hardware(load_trace(GPU / "roofline.json.gz"))
    dims, types = [[8192, 8192], [8192, 8192]], ["float", "float"]
    cases = _cases()
    fp32 = hw.shape("aten::mm", dims, types, "fp32")
    tf32 = hw.shape("aten::mm", dims, types, "tf32")
    assert fp32 is not None and tf32 is not None and fp32.calls == tf32.calls == 3
    assert fp32.tflops == pytest.approx(cases["mm_fp32_8192"]["tflops"], rel=0.05)
    assert tf32.tflops == pytest.approx(cases["mm_tf32_8192"]["tflops"], rel=0.05)
    assert fp32.roof_share == pytest.approx(fp32.tflops / 66.9)
    assert tf32.roof_share == pytest.approx(tf32.tflops / 494.7)
    both = hw.shape("aten::mm", dims, types)
    assert both is not None and both.calls == 6
    assert len(both.kernels) == len(fp32.kernels) + len(tf32.kernels)


def test_recorded_step_flops_are_every_counted_call() -> None:
    trace = load_trace(GPU / "roofline.json.gz")
    expected = json.loads((GPU / "roofline_expected.json").read_text())
    hw = hardware(trace)
    assert len(hw.steps) == 1
    want = sum(c["flops"] for c in expected["cases"]) * expected["profiled_reps"]
    step = hw.steps[0]
    assert step.flops == want
    assert step.precision == "bf16" and step.peak_tflops == 989.4
    assert step.mfu == pytest.approx(want / (step.duration_ns * 989.4e3))
    half = hardware(trace, PeakOverride(peak_tflops=989.4 / 2)).steps[0]
    assert half.mfu == pytest.approx(2 * step.mfu)


def test_synthetic_run_figures_by_hand(tmp_path: Path) -> None:
    path = write_run(tmp_path / "run.json.gz", gemm_tflops=500.0, add_tb_s=1.675)
    trace = load_trace(path)
    hw = hardware(trace)
    mm, add = hw.shapes[0], hw.shapes[1]
    assert (mm.name, add.name) == ("aten::mm", "aten::add")
    assert mm.calls == 12 and mm.flops == 12 * gemm_flops(8192, 8192, 8192)
    assert mm.tflops == pytest.approx(500.0, rel=1e-3)
    assert mm.roof_share == pytest.approx(500.0 / 989.4, rel=1e-3)
    assert add.nbytes == 6 * add_bytes(1 << 24) and add.flops is None
    assert add.bound == "memory" and add.intensity is None
    assert add.roof_share == pytest.approx(0.5, rel=1e-3)
    assert len(hw.steps) == 3
    for s in hw.steps:
        assert s.flops == 4 * gemm_flops(8192, 8192, 8192)
        assert s.mfu == pytest.approx(s.flops / (s.duration_ns * 989.4e3))
        assert 0 < s.mfu < 500.0 / 989.4


def test_unknown_device_gives_null_peaks_and_override_fills_them(tmp_path: Path) -> None:
    odd = {"id": 0, "name": "Imaginary GPU 9000", "numSms": 7, "computeMajor": 12}
    trace = load_trace(write_run(tmp_path / "odd.json.gz", device=odd))
    hw = hardware(trace)
    assert hw.peaks.peaks is None and "Imaginary GPU 9000" in hw.peaks.reason
    assert all(s.mfu is None and s.flops > 0 for s in hw.steps)
    assert hw.shapes[0].tflops == pytest.approx(750.0, rel=1e-3)
    assert hw.shapes[0].roof_share is None and hw.shapes[0].bound is None
    given = hardware(trace, PeakOverride(1000.0, 4.0))
    assert given.shapes[0].roof_share == pytest.approx(0.75, rel=1e-3)
    assert given.steps[0].mfu is not None
    assert given.mfu_json()["peak"]["tflops"]["bf16"] == 1000.0


def test_breakdown_rows_gain_the_columns(tmp_path: Path) -> None:
    trace = load_trace(write_run(tmp_path / "run.json.gz"))
    hw = hardware(trace)
    shapes = breakdown(trace, "op-shape")
    annotate_breakdown(shapes, hw)
    rows = {r.key: r.to_json("op-shape") for r in shapes.rows}
    mm = rows["aten::mm"]
    assert mm["flops"] == 12 * gemm_flops(8192, 8192, 8192)
    assert mm["bound"] == "compute" and mm["tflops"] == pytest.approx(750.0, rel=1e-3)
    assert set(mm) >= {"bytes", "intensity", "roof_share"}
    assert rows["aten::add"]["bound"] == "memory" and rows["aten::add"]["tflops"] is None
    steps = breakdown(trace, "step")
    annotate_breakdown(steps, hw)
    got = [r.to_json("step") for r in steps.rows]
    assert [g["mfu"] for g in got] == [round(s.mfu, 5) for s in hw.steps]
    assert all(g["flops"] == 4 * gemm_flops(8192, 8192, 8192) for g in got)


def test_nested_counted_ops_are_counted_once_at_the_innermost(tmp_path: Path) -> None:
    """zero_ around fill_: the fill_ alone (its kernel, its bytes); an mm inside an op that
    also has a FLOP figure (Kineto's flops arg): the inner mm alone, with its own kernel."""
    from synthetic_trace import k_kernel, k_launch, k_op, kineto_trace

    bf16 = "c10::BFloat16"
    mm = {"Input Dims": [[64, 64], [64, 64]], "Input type": [bf16, bf16]}
    events = [
        k_op("aten::zero_", 0, 50, **{"Input Dims": [[1024]], "Input type": [bf16]}),
        k_op("aten::fill_", 5, 40, **{"Input Dims": [[1024], []], "Input type": [bf16, "Scalar"]}),
        k_launch(10, 1),
        k_kernel("fill", 100, 5, 1),
        k_op("aten::mm", 200, 50, **mm, flops=999),  # an outer op with a FLOP figure
        k_op("aten::mm", 205, 40, **mm),
        k_launch(210, 2),
        k_kernel("gemm", 300, 7, 2),
        k_launch(246, 3),  # after the inner mm: the outer mm's own kernel
        k_kernel("gemm_tail", 320, 3, 3),
    ]
    trace = kineto_trace(events, tmp_path)
    hw = hardware(trace)
    fill = hw.shape("aten::fill_", [[1024], []], [bf16, "Scalar"])
    assert fill is not None and fill.calls == 1 and fill.device_ns == 5000
    assert fill.nbytes == 1024 * 2
    assert hw.shape("aten::zero_", [[1024]], [bf16]) is None
    mms = [s for s in hw.shapes if s.name == "aten::mm"]
    assert len(mms) == 1 and mms[0].calls == 1 and mms[0].flops == 2 * 64**3
    assert mms[0].device_ns == 7000


@pytest.mark.parametrize(
    "name",
    [
        "roofline/roofline.json.gz",
        "tl__h100__Falconsai_nsfw_image_detection__1016002.json.gz",
        "attribution/gpt_stack.json.gz",
    ],
)
def test_device_time_agrees_with_the_attribution(name: str) -> None:
    """Two ways to an op's kernels (launches inside the innermost counted op here; the op tree
    of gpuviz.analysis.attribution there) give each counted op-shape row the same device
    time, within 1%. cuDNN attention is the known exception: torch launches its kernels under
    aten::_cudnn_attention_forward/backward, which the FLOP tables lack, so its counted parent
    keeps them here and has no self time there."""
    trace = load_trace(DATA / name)
    hw = hardware(trace)
    rows = breakdown(trace, "op-shape").rows
    checked = 0
    for r in rows:
        s = hw.by_dims(r.key, r.input_shapes or [])
        if s is None or "cudnn_attention" in r.key:
            continue
        checked += 1
        assert s.device_ns == pytest.approx(r.device_self_ns, rel=0.01, abs=1000), r.key
    assert checked >= 10
