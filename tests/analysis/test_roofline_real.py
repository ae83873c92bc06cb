"""FLOPs and achieved TFLOP/s on recordings of ``scripts/gpu/record_roofline.py``.

``tests/data/roofline/`` is the recording on a CUDA GPU (an H100), with the CUDA-event times
measured outside the profiler: on the trace's ops, the FLOPs counted once per call must equal
the hand formula exactly, and the achieved TFLOP/s from the kernels' time must be within 5% of
the CUDA-event figure (10% for attention). ``tests/data/roofline_cpu/`` is the same script's
``--device cpu`` run (torch 2.13, tiny sizes), whose FLOPs are checked the same way; its
timings mean nothing. Where torch's own profiler counted FLOPs (``with_flops=True``) ours must
agree at the same op.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from roofline_cases import Launches, calls, load

from gpuviz.analysis.dtypes import op_precision
from gpuviz.analysis.flops import op_bytes
from gpuviz.analysis.peaks import device_peaks
from gpuviz.analysis.roofline import achieved_tflops, bound, intensity, roof_share, tf32_if_faster
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import Kind

ROOT = Path(__file__).parent.parent.parent
DATA = ROOT / "tests" / "data"
GPU = DATA / "roofline"
CPU = DATA / "roofline_cpu"


def _need(folder: Path) -> None:
    if (
        not (folder / "roofline.json.gz").exists()
        or not (folder / "roofline_expected.json").exists()
    ):
        pytest.skip(
            f"{folder.relative_to(ROOT)} is absent: record it on a CUDA machine with "
            "`PYTHONPATH=. python3 scripts/gpu/record_roofline.py OUT` and commit OUT's two files"
        )


def _check_flops(folder: Path) -> None:
    trace, expected = load(folder)
    for case in expected["cases"]:
        runs = calls(trace, case["name"])
        assert len(runs) == expected["profiled_reps"], case["name"]
        for ops in runs:
            figures = [(o.name, o.flops) for o in ops if o.flops is not None]
            assert sum(f for _, f in figures) == case["flops"], (case["name"], figures)
            assert case["op"] in [n for n, _ in figures], (case["name"], figures)
        for row in case["torch_flops"]:
            mine = {o.parent_flops for run in runs for o in run if o.name == row["op"]}
            assert mine == {row["flops"]}, (case["name"], row)


def test_kernels_of_an_op_by_correlation() -> None:
    """The helper the GPU check times ops with, on TraceLens' H100 ViT trace: each counted op
    finds its own kernels (GEMMs, cuDNN's convolution, flash attention) and nothing else."""
    trace = load_trace(DATA / "tl__h100__Falconsai_nsfw_image_detection__1016002.json.gz")
    s = trace.slices
    launches = Launches(trace)
    found: dict[str, set[str]] = {}
    for row in np.flatnonzero(s.kind == Kind.CPU_OP):
        name = trace.name_of(int(row))
        if name in ("aten::addmm", "aten::cudnn_convolution", "aten::_flash_attention_forward"):
            kernels = launches.of(int(row))
            assert len(kernels) > 0, (name, int(row))
            found.setdefault(name, set()).update(trace.name_of(int(k)) for k in kernels)
    assert all("gemm" in k for k in found["aten::addmm"]), found["aten::addmm"]
    assert any("cudnn" in k and "tensorop" in k for k in found["aten::cudnn_convolution"])
    assert all("flash_fwd" in k for k in found["aten::_flash_attention_forward"])


@pytest.mark.parametrize("folder", [CPU, GPU], ids=["cpu", "gpu"])
def test_flops_are_exact_and_agree_with_torch(folder: Path) -> None:
    _need(folder)
    _check_flops(folder)
    _, expected = load(folder)
    # torch counted mm, addmm, bmm and conv2d; we compared at each
    assert sum(len(c["torch_flops"]) for c in expected["cases"]) >= 4


def test_achieved_tflops_match_cuda_events() -> None:
    _need(GPU)
    trace, expected = load(GPU)
    assert expected["device_type"] == "cuda"
    assert (GPU / "roofline.json.gz").stat().st_size < 2_000_000
    report = []
    for case in expected["cases"]:
        flops, device_ns = 0, 0
        for ops in calls(trace, case["name"]):
            counted = [o for o in ops if o.flops is not None]
            flops += sum(o.flops or 0 for o in counted)
            device_ns += sum(o.device_ns for o in counted)
        mine = float(achieved_tflops(flops, device_ns))
        report.append((case["name"], mine, case["tflops"], mine / case["tflops"] - 1))
    bad = [r for r, c in zip(report, expected["cases"]) if not abs(r[3]) <= c["tolerance"]]
    assert not bad, "\n".join(
        f"{n}: trace {a:.1f} vs events {e:.1f} TFLOP/s ({d:+.1%})" for n, a, e, d in bad
    )


def test_bound_of_a_large_and_a_skinny_gemm() -> None:
    """On the recording's GPU, an 8192³ bf16 GEMM is compute-bound near its roof and a GEMM
    with N=64 memory-bound."""
    _need(GPU)
    trace, expected = load(GPU)
    match = device_peaks(trace)
    assert match.peaks is not None, match.reason
    assert match.device_name == expected["device"]
    peak, bw = match.peaks.tflops("bf16"), match.peaks.bandwidth_tb_s
    assert peak is not None and bw is not None
    cases = {c["name"]: c for c in expected["cases"]}
    for name, want in (("mm_bf16_8192", "compute"), ("mm_bf16_skinny", "memory")):
        op = next(o for o in calls(trace, name)[0] if o.name == "aten::mm")
        nbytes = op_bytes(op.name, op.dims, op.types, op.args)
        assert nbytes is not None
        i = intensity(op.flops, nbytes)
        assert bound(i, peak, bw)[()] == want, (name, float(i))
        share = float(roof_share(cases[name]["tflops"], i, peak, bw))
        assert 0.3 < share <= 1.05, (name, share)
    assert np.isfinite(cases["mm_bf16_8192"]["event_ms"])


def test_precision_of_the_recorded_gemms() -> None:
    """bf16 is read from the types; fp32 with TF32 on is told from fp32 by its kernels' names
    or, where cuBLAS's names don't say (nvjet), by running faster than the fp32 peak."""
    _need(GPU)
    trace, expected = load(GPU)
    match = device_peaks(trace)
    assert match.peaks is not None, match.reason
    launches = Launches(trace)
    cases = {c["name"]: c for c in expected["cases"]}
    seen = {}
    for name in ("mm_bf16_8192", "mm_fp32_8192", "mm_tf32_8192"):
        op = next(o for o in calls(trace, name)[0] if o.name == "aten::mm")
        kernels = [trace.name_of(int(k)) for k in launches.of(op.row)]
        precision = op_precision(op.types, kernels)
        seen[name] = tf32_if_faster(precision, cases[name]["tflops"], match.peaks.fp32_tflops)
    assert seen == {"mm_bf16_8192": "bf16", "mm_fp32_8192": "fp32", "mm_tf32_8192": "tf32"}, seen


@pytest.mark.slow
def test_the_recording_script_runs_on_the_cpu(tmp_path: Path) -> None:
    """The script's dry run with the torch installed here, and its FLOPs checked as above."""
    pytest.importorskip("torch")
    script = ROOT / "scripts" / "gpu" / "record_roofline.py"
    cmd = [
        sys.executable,
        str(script),
        str(tmp_path),
        "--device",
        "cpu",
        "--reps",
        "2",
        "--warmup",
        "1",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    _check_flops(tmp_path)
