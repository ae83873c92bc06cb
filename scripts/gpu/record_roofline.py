"""Record GEMMs, a convolution and attention of known FLOPs: CUDA-event times and a trace.

Plain torch only (no gpuviz), so the data does not depend on the code it tests. On a CUDA
machine::

    PYTHONPATH=. python3 scripts/gpu/record_roofline.py OUT_DIR

and, anywhere, a quick run of the same code at tiny sizes (no timing worth keeping)::

    python3 scripts/gpu/record_roofline.py OUT_DIR --device cpu

Writes into OUT_DIR:

- ``roofline.json.gz``: a Kineto trace (``record_shapes=True``, ``with_flops=True``) of each
  case run ``--profiled-reps`` times, each run inside a ``case:<name>`` record_function range;
- ``roofline_expected.json``: per case its op, shapes, dtype, exact FLOPs by hand formula, the
  median CUDA-event time of ``--reps`` unprofiled runs after ``--warmup`` and the TFLOP/s that
  gives, the FLOPs torch's own profiler counted (``FunctionEvent.flops``) for the ops inside
  it, and the device's name.

Timing: before each timed run the GPU is kept busy with ``torch.cuda._sleep`` while the CPU
enqueues the start event, the op and the end event, so the events measure GPU time and not the
CPU's launch latency (the same is done before each profiled run, outside its range). The
profiler is off while timing: it slows launches, and tracing and timing are kept apart.
"""

from __future__ import annotations

import argparse
import gzip
import json
import platform
import shutil
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile, record_function

SLEEP_CYCLES = 2_000_000  # about 1 ms at H100 clocks: longer than any case's launch sequence


@dataclass
class Case:
    """One measured case: ``run`` does the work, ``flops`` is its exact count by hand."""

    name: str
    kind: str  # gemm, conv or attention
    op: str  # the aten op that launches its kernels (where gpuviz counts the FLOPs)
    dtype: str
    shapes: dict[str, list[int]]
    flops: int
    tolerance: float
    run: Callable[[], Any]
    tf32: bool = False
    causal: bool | None = None
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _randn(shape: list[int], dtype: torch.dtype, dev: str, grad: bool = False) -> torch.Tensor:
    return torch.randn(shape, dtype=dtype, device=dev).mul_(0.1).requires_grad_(grad)


def _gemm(name: str, m: int, k: int, n: int, dtype: torch.dtype, dev: str, tf32: bool) -> Case:
    a, b = _randn([m, k], dtype, dev), _randn([k, n], dtype, dev)

    def run() -> Any:
        # "high" lets fp32 GEMMs run on TF32 tensor cores, "highest" keeps them in fp32 (the
        # API every torch since 1.12 has; the newer fp32_precision settings follow it)
        torch.set_float32_matmul_precision("high" if tf32 else "highest")
        return torch.mm(a, b)

    return Case(
        name, "gemm", "aten::mm", str(dtype).removeprefix("torch."),
        {"a": [m, k], "b": [k, n]}, 2 * m * k * n, 0.05, run, tf32=tf32,
    )  # fmt: skip


def _linear(name: str, m: int, k: int, n: int, dtype: torch.dtype, dev: str) -> Case:
    x, w, bias = _randn([m, k], dtype, dev), _randn([n, k], dtype, dev), _randn([n], dtype, dev)
    return Case(
        name, "gemm", "aten::addmm", str(dtype).removeprefix("torch."),
        {"x": [m, k], "weight": [n, k], "bias": [n]}, 2 * m * k * n, 0.05,
        lambda: F.linear(x, w, bias), notes="F.linear: aten::linear -> aten::addmm",
    )  # fmt: skip


def _bmm(name: str, b: int, m: int, k: int, n: int, dtype: torch.dtype, dev: str) -> Case:
    x, y = _randn([b, m, k], dtype, dev), _randn([b, k, n], dtype, dev)
    return Case(
        name, "gemm", "aten::bmm", str(dtype).removeprefix("torch."),
        {"a": [b, m, k], "b": [b, k, n]}, 2 * b * m * k * n, 0.05, lambda: torch.bmm(x, y),
    )  # fmt: skip


def _conv(n: int, c: int, hw: int, dtype: torch.dtype, dev: str, conv_op: str) -> list[Case]:
    """A ResNet-like 3x3 convolution (stride 1, padding 1, no bias), forward and backward."""
    x = _randn([n, c, hw, hw], dtype, dev, grad=True)
    w = _randn([c, c, 3, 3], dtype, dev, grad=True)
    if dev == "cuda":  # what a tuned ResNet uses: NHWC lets cuDNN skip layout transposes
        x = x.detach().to(memory_format=torch.channels_last).requires_grad_(True)
        w = w.detach().to(memory_format=torch.channels_last).requires_grad_(True)
    forward = 2 * n * hw * hw * c * c * 9  # 2 · N · output positions · weight elements
    y = F.conv2d(x, w, padding=1)
    g = torch.randn_like(y)
    shapes = {"input": [n, c, hw, hw], "weight": [c, c, 3, 3]}
    dt = str(dtype).removeprefix("torch.")
    return [
        Case("conv3x3_fwd", "conv", conv_op, dt, shapes, forward, 0.05,
             lambda: F.conv2d(x, w, padding=1), extra={"padding": 1, "stride": 1}),
        Case("conv3x3_bwd", "conv", "aten::convolution_backward", dt, shapes, 2 * forward, 0.05,
             lambda: torch.autograd.grad(y, (x, w), g, retain_graph=True),
             notes="grad input and grad weight: 2x the forward"),
    ]  # fmt: skip


def _attention(
    b: int, h: int, s: int, d: int, dtype: torch.dtype, dev: str, causal: bool, ops: tuple[str, str]
) -> list[Case]:
    q, k, v = (_randn([b, h, s, d], dtype, dev, grad=True) for _ in range(3))
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    g = torch.randn_like(out)
    forward = 4 * b * h * s * s * d // (2 if causal else 1)
    backward = 10 * b * h * s * s * d // (2 if causal else 1)  # 2.5x the forward

    def fwd() -> Any:
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    tag = "causal" if causal else "full"
    shapes = {"q": [b, h, s, d], "k": [b, h, s, d], "v": [b, h, s, d]}
    dt = str(dtype).removeprefix("torch.")
    return [
        Case(f"sdpa_{tag}_fwd", "attention", ops[0], dt, shapes, forward, 0.10, fwd,
             causal=causal, notes="flash backend"),
        Case(f"sdpa_{tag}_bwd", "attention", ops[1], dt, shapes, backward, 0.10,
             lambda: torch.autograd.grad(out, (q, k, v), g, retain_graph=True), causal=causal,
             notes="flash backend; 2.5x the forward"),
    ]  # fmt: skip


def build_cases(dev: str) -> list[Case]:
    """The cases at full size on CUDA, at tiny sizes on the CPU (a dry run of the same code)."""
    bf16, fp32 = torch.bfloat16, torch.float32
    if dev == "cuda":
        return [
            _gemm("mm_bf16_8192", 8192, 8192, 8192, bf16, dev, False),
            _gemm("mm_bf16_4096", 4096, 4096, 4096, bf16, dev, False),
            _gemm("mm_bf16_skinny", 65536, 8192, 64, bf16, dev, False),
            _gemm("mm_fp32_8192", 8192, 8192, 8192, fp32, dev, False),
            _gemm("mm_tf32_8192", 8192, 8192, 8192, fp32, dev, True),
            _linear("linear_bf16", 16384, 4096, 4096, bf16, dev),
            _bmm("bmm_bf16", 64, 1024, 1024, 1024, bf16, dev),
            *_conv(64, 256, 56, bf16, dev, "aten::cudnn_convolution"),
            *_attention(8, 16, 2048, 128, bf16, dev, False, _FLASH_CUDA),
            *_attention(8, 16, 2048, 128, bf16, dev, True, _FLASH_CUDA),
        ]
    return [
        _gemm("mm_bf16_8192", 64, 64, 64, bf16, dev, False),
        _gemm("mm_fp32_8192", 64, 48, 32, fp32, dev, False),
        _linear("linear_bf16", 32, 16, 24, fp32, dev),
        _bmm("bmm_bf16", 4, 16, 8, 12, fp32, dev),
        *_conv(2, 8, 8, fp32, dev, "aten::mkldnn_convolution"),
        *_attention(1, 2, 16, 8, fp32, dev, False, _FLASH_CPU),
        *_attention(1, 2, 16, 8, fp32, dev, True, _FLASH_CPU),
    ]


_FLASH_CUDA = ("aten::_flash_attention_forward", "aten::_flash_attention_backward")
_FLASH_CPU = (
    "aten::_scaled_dot_product_flash_attention_for_cpu",
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward",
)


def _busy(dev: str) -> None:
    if dev == "cuda":
        torch.cuda._sleep(SLEEP_CYCLES)


def _sync(dev: str) -> None:
    if dev == "cuda":
        torch.cuda.synchronize()


def time_case(case: Case, dev: str, reps: int, warmup: int) -> list[float]:
    """Milliseconds of each of ``reps`` runs after ``warmup`` (CUDA events; on the CPU, the
    wall clock)."""
    for _ in range(warmup):
        case.run()
    _sync(dev)
    times = []
    for _ in range(reps):
        if dev == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            _busy(dev)
            start.record()
            case.run()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        else:
            t0 = time.perf_counter()
            case.run()
            times.append((time.perf_counter() - t0) * 1e3)
    return times


def _case_of(event: Any) -> str | None:
    while event is not None:
        if event.name.startswith("case:"):
            return event.name.removeprefix("case:")
        event = event.cpu_parent
    return None


def record(out: Path, dev: str, reps: int, warmup: int, profiled_reps: int) -> dict[str, Any]:
    """Time every case, then profile them all; write the trace and return the expectations."""
    torch.manual_seed(0)
    cases = build_cases(dev)
    results = []
    for case in cases:
        times = time_case(case, dev, reps, warmup)
        ms = statistics.median(times)
        results.append((case, ms, times))
        print(f"{case.name:18s} {ms:9.3f} ms  {case.flops / ms / 1e9:8.1f} TFLOP/s", flush=True)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev == "cuda" else [])
    path = out / "roofline.json"
    with profile(activities=activities, record_shapes=True, with_flops=True) as prof:
        for case in cases:
            for _ in range(profiled_reps):
                _busy(dev)
                with record_function(f"case:{case.name}"):
                    case.run()
            _sync(dev)
    prof.export_chrome_trace(str(path))
    with open(path, "rb") as f, gzip.open(out / "roofline.json.gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    path.unlink()
    torch_flops: dict[str, list[dict[str, Any]]] = {}
    for e in prof.events():
        if getattr(e, "flops", 0):
            name = _case_of(e)
            if name is not None:
                row = {"op": e.name, "input_shapes": e.input_shapes, "flops": int(e.flops)}
                if row not in torch_flops.setdefault(name, []):
                    torch_flops[name].append(row)
    device = torch.cuda.get_device_name() if dev == "cuda" else (platform.processor() or "cpu")
    return {
        "device": device,
        "device_type": dev,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "reps": reps,
        "warmup": warmup,
        "profiled_reps": profiled_reps,
        "sleep_cycles": SLEEP_CYCLES if dev == "cuda" else 0,
        "cases": [
            {
                "name": c.name,
                "kind": c.kind,
                "op": c.op,
                "dtype": c.dtype,
                "tf32": c.tf32,
                "causal": c.causal,
                "shapes": c.shapes,
                "flops": c.flops,
                "event_ms": ms,
                "event_ms_all": times,
                "tflops": c.flops / ms / 1e9,
                "tolerance": c.tolerance,
                "torch_flops": torch_flops.get(c.name, []),
                "notes": c.notes,
                **c.extra,
            }
            for c, ms, times in results
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="output folder")
    parser.add_argument("--device", choices=["cuda", "cpu"], default=None)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--profiled-reps", type=int, default=3)
    a = parser.parse_args(argv)
    dev = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if dev == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device")
    a.out.mkdir(parents=True, exist_ok=True)
    expected = record(a.out, dev, a.reps, a.warmup, a.profiled_reps)
    (a.out / "roofline_expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    size = (a.out / "roofline.json.gz").stat().st_size
    print(f"wrote {a.out}/roofline.json.gz ({size / 1e6:.2f} MB) and roofline_expected.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
