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
    # Each precision at its own peak (issue 47, item 4), by hand from the recording's cases:
    # their dtype and TF32 switch, and the H100 SXM datasheet's dense peaks.
    peak = {"bf16": 989.4, "fp32": 66.9, "tf32": 494.7}
    by: dict[str, float] = {}
    for c in expected["cases"]:
        p = "bf16" if c["dtype"] == "bfloat16" else ("tf32" if c["tf32"] else "fp32")
        by[p] = by.get(p, 0.0) + c["flops"] * expected["profiled_reps"]
    assert step.by_precision == pytest.approx(by)
    assert step.precisions == ["bf16", "fp32", "tf32"] or step.precisions == [
        "bf16",
        "tf32",
        "fp32",
    ]
    at_peak_ns = sum(f / (peak[p] * 1e3) for p, f in by.items())
    assert step.mfu == pytest.approx(at_peak_ns / step.duration_ns)
    assert step.mfu > want / (step.duration_ns * 989.4e3)  # the bf16-only figure undercounted
    # one peak for every precision (--peak-tflops): the plain FLOPs over time at that peak
    one = hardware(trace, PeakOverride(peak_tflops=2 * 989.4)).steps[0]
    assert one.mfu == pytest.approx(want / (step.duration_ns * 2 * 989.4e3))
    # a peak below what the GEMMs reached (792 TFLOP/s measured): impossible, so null, flagged
    half = hardware(trace, PeakOverride(peak_tflops=989.4 / 2)).steps[0]
    assert half.mfu is None and half.inconsistent and "inconsistent" in (half.mfu_note or "")


def test_synthetic_run_figures_by_hand(tmp_path: Path) -> None:
    path = write_run(tmp_path / "run.json.gz", gemm_tflops=500.0, add_tb_s=1.675)
    trace = load_trace(path)
    hw = hardware(trace)
    mm, add = hw.shapes[0], hw.shapes[1]
    assert (mm.name, add.name) == ("aten::mm", "aten::add")
    assert mm.calls == 12 and mm.flops == 12 * gemm_flops(8192, 8192, 8192)
    assert mm.tflops == pytest.approx(500.0, rel=1e-3)
    assert mm.roof_share == pytest.approx(500.0 / 989.4, rel=1e-3)
    # aten::add: one FLOP per output element, as torch's profiler counts it
    assert add.nbytes == 6 * add_bytes(1 << 24) and add.flops == 6 * (1 << 24)
    assert add.bound == "memory" and add.intensity == pytest.approx(1 / 6)
    assert add.roof_share == pytest.approx(0.5, rel=1e-3)  # the same at its intensity's roof
    assert len(hw.steps) == 3
    for s in hw.steps:
        assert s.flops == 4 * gemm_flops(8192, 8192, 8192) + 2 * (1 << 24)
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
    assert rows["aten::add"]["bound"] == "memory" and rows["aten::add"]["flops"] == 6 * (1 << 24)
    assert rows["aten::add"]["inconsistent"] is False and rows["aten::add"]["roof_note"] is None
    steps = breakdown(trace, "step")
    annotate_breakdown(steps, hw)
    got = [r.to_json("step") for r in steps.rows]
    assert [g["mfu"] for g in got] == [round(s.mfu, 5) for s in hw.steps]
    assert all(g["flops"] == 4 * gemm_flops(8192, 8192, 8192) + 2 * (1 << 24) for g in got)
    assert all(g["precisions"] == ["bf16"] and g["inconsistent"] is False for g in got)


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
        "attribution/tinylm_train.json.gz",
    ],
)
def test_device_time_agrees_with_the_attribution(name: str) -> None:
    """Two ways to an op's kernels (launches inside the innermost counted op here; the op tree
    of gpuviz.analysis.attribution there) give each counted op-shape row the same device
    time, within 1% (cuDNN attention included: its FLOPs sit on the op that launches the
    kernels, aten::_cudnn_attention_forward/backward)."""
    trace = load_trace(DATA / name)
    hw = hardware(trace)
    rows = breakdown(trace, "op-shape").rows
    checked = 0
    for r in rows:
        s = hw.by_dims(r.key, r.input_shapes or [])
        if s is None:
            continue
        checked += 1
        assert s.device_ns == pytest.approx(r.device_self_ns, rel=0.01, abs=1000), r.key
    assert checked >= 10


def test_cudnn_attention_flops_sit_on_the_ops_that_launch_its_kernels() -> None:
    """torch 2.11 on the H100: sdpa → _scaled_dot_product_cudnn_attention →
    _cudnn_attention_forward (and the same for backward). The FLOPs are the formula on the
    leaf's shapes (causal: half of 4·B·H·S²·D; backward 2.5×), with the leaf's kernels; the
    parent counts nothing, and each step's FLOPs are torch's own GEMM FLOPs plus attention's."""
    trace = load_trace(DATA / "attribution" / "tinylm_train.json.gz")
    hw = hardware(trace)
    att = {s.name: s for s in hw.shapes if "attention" in s.name}
    assert set(att) == {"aten::_cudnn_attention_forward", "aten::_cudnn_attention_backward"}
    b, h, sq, d = 8, 4, 128, 64  # the tiny LM: batch 8, 4 heads of 64, seq 128, causal
    forward = 4 * b * h * sq * sq * d // 2
    calls = 2 * 2  # 2 layers, 2 profiled steps
    fwd, bwd = att["aten::_cudnn_attention_forward"], att["aten::_cudnn_attention_backward"]
    assert fwd.input_dims[0] == [b, h, sq, d] and fwd.calls == calls
    assert fwd.flops == calls * forward
    assert bwd.calls == calls and bwd.flops == calls * forward * 5 // 2
    rows = {r.key: r for r in breakdown(trace, "op-shape").rows}
    for leaf in (fwd, bwd):
        assert leaf.device_ns > 0
        assert leaf.device_ns == pytest.approx(rows[leaf.name].device_self_ns, rel=0.01)
    table = breakdown(trace, "op-shape")
    annotate_breakdown(table, hw)
    outer = [r for r in table.rows if r.key.startswith("aten::_scaled_dot_product_cudnn")]
    assert len(outer) == 2 and all(r.extra["flops"] is None for r in outer)
    torch_rows = json.loads((DATA / "attribution" / "tinylm_train.key_averages.json").read_text())
    # torch's own key_averages (with_flops=True) for the GEMMs and aten::add (one FLOP an
    # output element), gpuviz's formula for the attention torch does not count
    gemm = sum(
        r["flops"]
        for r in torch_rows["by_name"]
        if r["key"] in ("aten::mm", "aten::addmm", "aten::add")
    )
    assert sum(s.flops for s in hw.steps) == gemm + fwd.flops + bwd.flops


def test_cudnn_attention_of_older_torch_counts_at_the_sdpa_op(tmp_path: Path) -> None:
    """Before aten::_cudnn_attention_forward, torch ran cuDNN's kernels in
    aten::_scaled_dot_product_cudnn_attention itself: with no leaf inside, that op is counted
    (the formula on its shapes, its kernels); with the leaf inside, only the leaf is."""
    from synthetic_trace import k_kernel, k_launch, k_op, kineto_trace

    bf16, q = "c10::BFloat16", [2, 4, 64, 32]
    outer = {
        "Input Dims": [q, q, q, [], [], [], [], [], []],
        "Input type": [bf16] * 3 + [""] * 6,
        "Concrete Inputs": ["", "", "", "", "True", "0.", "False", "False", ""],
    }
    leaf = {
        "Input Dims": [q, q, q] + [[]] * 10,
        "Input type": [bf16] * 3 + [""] * 10,
        "Concrete Inputs": ["", "", "", "", "", "", "64", "64", "True", "0.", "False", "False", ""],
    }
    events = [
        k_op("aten::_scaled_dot_product_cudnn_attention", 0, 50, **outer),
        k_launch(10, 1),
        k_kernel("cudnn_sdpa_old", 100, 6, 1),
        k_op("aten::_scaled_dot_product_cudnn_attention", 200, 50, **outer),
        k_op("aten::_cudnn_attention_forward", 205, 40, **leaf),
        k_launch(210, 2),
        k_kernel("cudnn_sdpa_new", 300, 4, 2),
    ]
    hw = hardware(kineto_trace(events, tmp_path))
    flops = 4 * 2 * 4 * 64 * 64 * 32
    got = {s.name: s for s in hw.shapes}
    assert set(got) == {
        "aten::_scaled_dot_product_cudnn_attention",
        "aten::_cudnn_attention_forward",
    }
    old, new = (
        got["aten::_scaled_dot_product_cudnn_attention"],
        got["aten::_cudnn_attention_forward"],
    )
    assert (old.calls, old.flops, old.device_ns) == (1, flops, 6000)
    assert (new.calls, new.flops, new.device_ns) == (1, flops, 4000)
    assert old.nbytes == new.nbytes == 4 * 2 * 4 * 64 * 32 * 2  # q, k, v read, output written


def test_module_flops_add_up_to_the_steps_and_mfu_is_over_device_time() -> None:
    """tinylm_train by module: the top-level module and the outside rows hold every counted
    FLOP (forward and backward), a Block holds its Attn and Mlp, an Attn holds its two Linears
    and the attention ops, and MFU is FLOPs over the row's device time at the bf16 peak."""
    from gpuviz.analysis.attribution import attribute
    from gpuviz.analysis.module_flops import annotate_modules

    trace = load_trace(DATA / "attribution" / "tinylm_train.json.gz")
    hw = hardware(trace)
    table = breakdown(trace, "module")
    annotate_modules(table, hw, attribute(trace))
    rows = {r.key: r for r in table.rows}
    flops = {k: r.extra["flops"] for k, r in rows.items()}
    tops = [r for r in table.rows if r.kind == "outside" or "." not in r.key]
    assert sum(r.extra["flops"] or 0 for r in tops) == sum(s.flops for s in hw.steps) > 0
    assert (
        flops["TinyLM_0.Block_0"]
        == flops["TinyLM_0.Block_0.Attn_0"]
        + flops["TinyLM_0.Block_0.Mlp_0"]
        + 2 * 2 * 8 * 128 * 256  # its own residual adds, x + f(x): 2 a step, 2 steps
    )
    attention = sum(s.flops for s in hw.shapes if "attention" in s.name) // 2  # of 2 layers
    attn = "TinyLM_0.Block_0.Attn_0"
    assert flops[attn] == flops[f"{attn}.Linear_0"] + flops[f"{attn}.Linear_1"] + attention
    # a Linear's forward GEMM and its two backward GEMMs: 3 · 2·M·K·N, 2 steps (MLP 256→1024)
    assert flops["TinyLM_0.Block_0.Mlp_0.Linear_2"] == 2 * 3 * 2 * (8 * 128) * 256 * 1024
    # An embedding lookup has no FLOP formula: unknown with the reason, never a 0 it did not
    # count (it printed "0.0" GFLOP).
    emb = rows["TinyLM_0.Embedding_0"].extra
    assert emb["flops"] is None and emb["mfu"] is None
    assert emb["mfu_note"].startswith("no op with a FLOP formula")
    mlp = rows["TinyLM_0.Block_0.Mlp_0"]
    assert mlp.extra["mfu"] == pytest.approx(
        mlp.extra["flops"] / (mlp.device_total_ns * 989.4e3), abs=1e-5
    )


def test_each_rank_of_a_rank_folder_gets_its_steps_together() -> None:
    """ddp_nccl_4rank (4 H200 ranks, shapes recorded): one figure per rank, its steps' FLOPs
    and windows summed, MFU at the rank's peak; so the duration-weighted mean of its steps'."""
    hw = hardware(load_trace(DATA / "ddp_nccl_4rank"))
    assert [r.rank for r in hw.ranks] == [0, 1, 2, 3]
    for r in hw.ranks:
        mine = [s for s in hw.steps if s.rank == r.rank]
        assert r.steps == len(mine) == 2
        assert r.flops == sum(s.flops for s in mine) > 0
        assert r.duration_ns == sum(s.duration_ns for s in mine)
        assert r.precision == "fp32" and r.peak_tflops == 66.9
        # a tiny Linear beside NCCL all-reduces: FLOPs known for little of the GPU time, so
        # the MFU is unknown (issue 47, item 3), and the coverage is the steps' together
        cov = sum(s.known_ns for s in mine) / sum(s.device_ns for s in mine)
        assert r.coverage == pytest.approx(cov) and cov < 0.5
        assert r.mfu is None and "FLOPs known for only" in (r.mfu_note or "")
    one = hardware(load_trace(GPU / "roofline.json.gz"))
    assert [(r.rank, r.flops) for r in one.ranks] == [(None, one.steps[0].flops)]


def test_modules_of_a_trace_without_shapes_have_no_flops(tmp_path: Path) -> None:
    """tinylm_train with its shapes taken out (stacks kept): no FLOPs, so null, not 0."""
    import gzip

    from gpuviz.analysis.attribution import attribute
    from gpuviz.analysis.module_flops import annotate_modules

    doc = json.loads(gzip.open(DATA / "attribution" / "tinylm_train.json.gz").read())
    for e in doc["traceEvents"]:
        e.get("args", {}).pop("Input Dims", None)
    path = tmp_path / "no_shapes.json.gz"
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    trace = load_trace(path, cache=False)
    table = breakdown(trace, "module")
    annotate_modules(table, hardware(trace), attribute(trace))
    assert table.rows and all(
        r.extra["flops"] is None and r.extra["mfu"] is None for r in table.rows
    )
    assert all("record shapes" in r.extra["mfu_note"] for r in table.rows)  # and why


def test_a_trace_without_shapes_is_told_by_a_sample_of_its_ops(tmp_path, monkeypatch) -> None:
    # 2,000 GEMM calls recorded without shapes: a few hundred are decoded, not all (a cached
    # `gpuviz summary` of 300k kernels spent 0.46 s of 0.7 s decoding ops that had no shapes).
    from analysis.synthetic_trace import k_op, kineto_trace

    from gpuviz.analysis import op_calls

    decoded: list[int] = []
    real = op_calls.decode_args

    def counting(trace, rows, fields):
        decoded.append(len(rows))
        return real(trace, rows, fields)

    monkeypatch.setattr(op_calls, "decode_args", counting)
    bare = [k_op("aten::mm", 10 * i, 5, **{"Sequence number": i}) for i in range(2000)]
    assert not hardware(kineto_trace(bare, tmp_path)).calls.rows.size
    assert 0 < sum(decoded) <= op_calls.SHAPE_PROBE
    decoded.clear()  # with shapes (the last op only, to test the probe's second run): all
    shaped = [*bare[:-1], k_op("aten::mm", 20_000, 5, **{"Input Dims": [[8, 8], [8, 8]]})]
    shaped[-1]["args"]["Input type"] = ["float", "float"]
    assert hardware(kineto_trace(shaped, tmp_path, "s.json")).calls.rows.size == 1
    assert sum(decoded) > 2000
