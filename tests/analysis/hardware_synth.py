"""A synthetic Kineto run on an "H100" for the roofline, MFU and advisor tests (test helper).

Each step (``ProfilerStep#N``) runs ``gemms`` bf16 ``aten::mm`` calls of M×K×N, each a kernel
whose duration makes it run at ``gemm_tflops``, then ``adds`` bf16 ``aten::add`` calls of
``add_elems`` elements at ``add_tb_s``, then a gap of ``gap_us``. Every figure a test checks
follows from these numbers by hand.
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


def gemm_flops(m: int, k: int, n: int) -> int:
    return 2 * m * k * n


def add_bytes(elems: int) -> int:
    return 3 * elems * 2  # two bf16 inputs read, one written


def write_run(
    path: Path,
    *,
    steps: int = 3,
    gemms: int = 4,
    mkn: tuple[int, int, int] = (8192, 8192, 8192),
    gemm_tflops: float = 750.0,
    adds: int = 2,
    add_elems: int = 1 << 24,
    add_tb_s: float = 2.8,
    gap_us: float = 20.0,
    device: dict[str, Any] | None = None,
) -> Path:
    """Write the run to ``path`` (``.json.gz``) and return it."""
    m, k, n = mkn
    gemm_us = gemm_flops(m, k, n) / (gemm_tflops * 1e12) * 1e6
    add_us = add_bytes(add_elems) / (add_tb_s * 1e12) * 1e6
    events: list[dict[str, Any]] = []
    corr = 1
    t = 0.0

    def x(cat: str, name: str, ts: float, dur: float, **kw: Any) -> dict[str, Any]:
        return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, **kw}

    for step in range(steps):
        start = t
        body: list[dict[str, Any]] = []
        calls = [("mm", i) for i in range(gemms)] + [("add", i) for i in range(adds)]
        for kind, _ in calls:
            dur_gpu = gemm_us if kind == "mm" else add_us
            if kind == "mm":
                args = {"Input Dims": [[m, k], [k, n]], "Input type": ["c10::BFloat16"] * 2}
                kname = "nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT"
            else:
                args = {
                    "Input Dims": [[add_elems], [add_elems], []],
                    "Input type": ["c10::BFloat16", "c10::BFloat16", "Scalar"],
                }
                kname = "void at::native::vectorized_elementwise_kernel<4, add_bf16>"
            op_ts = t + 1
            body.append(x("cpu_op", f"aten::{kind}", op_ts, 8, pid=PID, tid=TID, args=args))
            body.append(
                x(
                    "cuda_runtime",
                    "cudaLaunchKernel",
                    op_ts + 2,
                    4,
                    pid=PID,
                    tid=TID,
                    args={"correlation": corr},
                )
            )
            body.append(
                x(
                    "kernel",
                    kname,
                    t + 10,
                    dur_gpu,
                    pid=0,
                    tid=STREAM,
                    args={"correlation": corr, "device": 0, "stream": STREAM},
                )
            )
            corr += 1
            t += 10 + dur_gpu  # the CPU waits for each kernel: no overlap, easy sums
        t += gap_us
        events.append(
            x("user_annotation", f"ProfilerStep#{step + 1}", start, t - start, pid=PID, tid=TID)
        )
        events += body
    doc = {
        "schemaVersion": 1,
        "deviceProperties": [device or H100],
        "traceEvents": events,
    }
    with gzip.open(path, "wt") as f:
        json.dump(doc, f)
    return path
