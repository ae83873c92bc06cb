"""A synthetic Kineto trace of a loop whose CPU runs ahead of the GPU (test helper).

Each ``ProfilerStep#N`` is ``cpu_us`` of CPU that launches ``gemms`` bf16 ``aten::mm`` of
M×K×N (no sync); their kernels run back to back on one stream, each ``gemm_us`` long, the
first ``latency_us`` after its launch. So, by hand: every step but the first lasts
``gemms · gemm_us`` of GPU work, the first ``latency_us`` more (its CPU start to its first
kernel), the steps add up to the wall time (first CPU start to last kernel end), and each
step's MFU is ``gemms · 2MKN / (its duration · peak)``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

H100 = {
    "id": 0,
    "name": "NVIDIA H100 80GB HBM3",
    "totalGlobalMem": 85_028_896_768,
    "computeMajor": 9,
    "computeMinor": 0,
    "numSms": 132,
}
PID, TID, STREAM = 100, 1, 7


def write_cpu_ahead(
    path: Path,
    *,
    steps: int = 5,
    gemms: int = 4,
    mkn: tuple[int, int, int] = (8192, 8192, 8192),
    gemm_us: float = 2000.0,
    cpu_us: float = 500.0,
    latency_us: float = 50.0,
) -> dict[str, Any]:
    """Write the trace (``.json.gz``) and return the figures a test checks, worked out here."""
    m, k, n = mkn
    events: list[dict[str, Any]] = []

    def x(cat: str, name: str, ts: float, dur: float, **kw: Any) -> dict[str, Any]:
        return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, **kw}

    corr, gpu_free = 1, 0.0
    first_kernel: list[float] = []
    for step in range(steps):
        c0 = step * cpu_us
        events.append(x("user_annotation", f"ProfilerStep#{step}", c0, cpu_us, pid=PID, tid=TID))
        for i in range(gemms):
            ts = c0 + 10 + 20 * i
            args = {"Input Dims": [[m, k], [k, n]], "Input type": ["c10::BFloat16"] * 2}
            events.append(x("cpu_op", "aten::mm", ts, 15, pid=PID, tid=TID, args=args))
            events.append(
                x(
                    "cuda_runtime",
                    "cudaLaunchKernel",
                    ts + 2,
                    5,
                    pid=PID,
                    tid=TID,
                    args={"correlation": corr},
                )
            )
            k0 = max(gpu_free, ts + 2 + latency_us)
            if i == 0:
                first_kernel.append(k0)
            events.append(
                x(
                    "kernel",
                    "nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT",
                    k0,
                    gemm_us,
                    pid=0,
                    tid=STREAM,
                    args={"correlation": corr, "device": 0, "stream": STREAM},
                )
            )
            gpu_free, corr = k0 + gemm_us, corr + 1
    doc = {"schemaVersion": 1, "deviceProperties": [H100], "traceEvents": events}
    with gzip.open(path, "wt") as f:
        json.dump(doc, f)
    gpu_us = gemms * gemm_us
    return {
        "duration_us": [first_kernel[0] + gpu_us] + [gpu_us] * (steps - 1),
        "wall_us": gpu_free,
        "step_flops": gemms * 2 * m * k * n,
        "gpu_us": gpu_us,
    }
