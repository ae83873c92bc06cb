"""Record the GPU test data of "every figure right or absent" (issue 47): traces with CUDA-event truth.

Plain torch only (no gpuviz), so the data does not depend on the code it tests. On a CUDA
machine::

    python3 scripts/gpu/record_truth.py OUT_DIR

and, anywhere, a quick run of the same code at tiny sizes (no figure worth keeping)::

    python3 scripts/gpu/record_truth.py OUT_DIR --device cpu --small

Writes into OUT_DIR, for each case, ``<case>.json.gz`` (a Kineto trace, ``record_shapes`` and
``with_flops`` on, ``ProfilerStep#N`` ranges from a schedule) and one ``truth.json`` with, per
case, each profiled step's CUDA-event time (an event recorded on the default stream where each
step starts its launches, so on a GPU-bound loop whose CPU runs ahead the time between two events
is the GPU's time for that step), the FLOPs of one step by ``torch.utils.flop_counter`` and by
hand, and ``key_averages()`` rows with torch's own ``flops`` column.

Cases:

- ``cpu_ahead``: per step 4 bf16 8192³ matmuls, 2 fp32 4096³ matmuls without TF32 and 2 bf16
  SDPA, no synchronization: the CPU runs ahead of the GPU by several steps;
- ``sync_layers``: an 8-layer MLP with ``torch.cuda.synchronize()`` and ``.item()`` after each
  layer: the host waits, then launches;
- ``copy_pinned`` / ``copy_pageable_item``: the same small training step fed a 64 MiB batch
  from pinned memory (``non_blocking``), then from pageable memory with a ``loss.item()`` each
  step: two runs to compare;
- ``resnet18``: torchvision's ResNet-18 (random weights) trained in fp32, batch 32, 224²:
  convolutions (cuDNN, TF32 by torch's default for convolutions) to count.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.profiler import ProfilerActivity, profile, schedule
from torch.utils.flop_counter import FlopCounterMode

WAIT, WARMUP, ACTIVE = 1, 1, 5


def _flop_counter(step: Callable[[], Any]) -> dict[str, Any]:
    counter = FlopCounterMode(display=False)
    with counter:
        step()
    by_op = {str(k): int(v) for k, v in counter.get_flop_counts().get("Global", {}).items()}
    return {"total": int(counter.get_total_flops()), "by_op": by_op}


def _key_averages(prof: Any) -> list[dict[str, Any]]:
    rows = []
    for e in prof.key_averages():
        rows.append(
            {
                "key": e.key,
                "count": int(e.count),
                "flops": int(getattr(e, "flops", 0) or 0),
                "self_device_time_total_us": float(
                    getattr(e, "self_device_time_total", getattr(e, "self_cuda_time_total", 0))
                ),
            }
        )
    return rows


def run_case(
    name: str, step: Callable[[], Any], out: Path, dev: str, steps: int = WAIT + WARMUP + ACTIVE
) -> dict[str, Any]:
    """Warm ``step`` up, count one step's FLOPs, then profile ``steps`` steps with CUDA events."""
    cuda = dev.startswith("cuda")
    for _ in range(2):
        step()
    if cuda:
        torch.cuda.synchronize()
    flops = _flop_counter(step)
    if cuda:
        torch.cuda.synchronize()
    events = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)] if cuda else []
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    trace = out / f"{name}.json.gz"
    plain = out / f"{name}.json"
    with profile(
        activities=activities,
        schedule=schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE, repeat=1),
        record_shapes=True,
        with_flops=True,
        on_trace_ready=lambda p: p.export_chrome_trace(str(plain)),
    ) as prof:
        for i in range(steps):
            if cuda:
                events[i].record()
            step()
            prof.step()
        if cuda:
            events[steps].record()
            torch.cuda.synchronize()
    with plain.open("rb") as src, gzip.open(trace, "wb") as dst:
        shutil.copyfileobj(src, dst)
    plain.unlink()
    # ProfilerStep#N is numbered from 0 over every step the schedule saw, so the active ones are
    # WAIT + WARMUP .. steps - 1.
    step_ms = [events[i].elapsed_time(events[i + 1]) for i in range(steps)] if cuda else []
    return {
        "trace": trace.name,
        "profiled_steps": list(range(WAIT + WARMUP, steps)),
        "event_ms_by_step": {str(i): ms for i, ms in enumerate(step_ms)},
        "flop_counter": flops,
        "key_averages": _key_averages(prof),
    }


def cpu_ahead(dev: str, small: bool) -> tuple[Callable[[], Any], dict[str, Any]]:
    n, m = (256, 128) if small else (8192, 4096)
    b, h, s, d = (1, 2, 64, 32) if small else (4, 16, 2048, 128)
    bf = torch.bfloat16 if dev.startswith("cuda") else torch.float32
    a16, b16 = torch.randn(n, n, device=dev, dtype=bf), torch.randn(n, n, device=dev, dtype=bf)
    a32, b32 = torch.randn(m, m, device=dev), torch.randn(m, m, device=dev)
    q, k, v = (torch.randn(b, h, s, d, device=dev, dtype=bf) for _ in range(3))

    def step() -> None:
        torch.backends.cuda.matmul.allow_tf32 = False
        for _ in range(4):
            torch.mm(a16, b16)
        for _ in range(2):
            torch.mm(a32, b32)
        for _ in range(2):
            F.scaled_dot_product_attention(q, k, v)

    hand = {
        "bf16_mm": 4 * 2 * n**3,
        "fp32_mm": 2 * 2 * m**3,
        "sdpa": 2 * 4 * b * h * s * s * d,
    }
    hand["total"] = sum(hand.values())
    return step, {"hand_flops": hand, "shapes": {"mm_bf16": n, "mm_fp32": m, "sdpa": [b, h, s, d]}}


def sync_layers(dev: str, small: bool) -> tuple[Callable[[], Any], dict[str, Any]]:
    width, batch = (128, 16) if small else (4096, 256)
    layers = [nn.Linear(width, width).to(dev) for _ in range(8)]
    x = torch.randn(batch, width, device=dev)

    def step() -> None:
        h = x
        with torch.no_grad():
            for layer in layers:
                h = torch.relu(layer(h))
                if dev.startswith("cuda"):
                    torch.cuda.synchronize()
                h.sum().item()

    return step, {"layers": 8, "width": width, "batch": batch}


def _copy_train(dev: str, small: bool, pinned: bool) -> tuple[Callable[[], Any], dict[str, Any]]:
    rows, width = (64, 128) if small else (4096, 4096)  # 4096 x 4096 fp32 = 64 MiB
    model = nn.Sequential(nn.Linear(width, 1024), nn.ReLU(), nn.Linear(1024, 1)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    host = torch.randn(rows, width)
    if pinned and dev.startswith("cuda"):
        host = host.pin_memory()

    def step() -> None:
        x = host.to(dev, non_blocking=pinned)
        loss = model(x).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if not pinned:
            loss.item()

    return step, {"pinned": pinned, "batch_bytes": rows * width * 4, "item_each_step": not pinned}


def resnet18(dev: str, small: bool) -> tuple[Callable[[], Any], dict[str, Any]]:
    import torchvision

    batch, size = (2, 64) if small else (32, 224)
    model = torchvision.models.resnet18(weights=None).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, 3, size, size, device=dev)
    y = torch.randint(0, 1000, (batch,), device=dev)

    def step() -> None:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    flags = {
        "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32),
        "matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
    }
    return step, {"batch": batch, "size": size, "dtype": "float32", "flags": flags}


CASES: dict[str, Callable[[str, bool], tuple[Callable[[], Any], dict[str, Any]]]] = {
    "cpu_ahead": cpu_ahead,
    "sync_layers": sync_layers,
    "copy_pinned": lambda dev, small: _copy_train(dev, small, pinned=True),
    "copy_pageable_item": lambda dev, small: _copy_train(dev, small, pinned=False),
    "resnet18": resnet18,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--small", action="store_true", help="tiny sizes (a quick check)")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    truth: dict[str, Any] = {
        "device": torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu",
        "torch": torch.__version__,
        "cases": {},
    }
    for name in args.cases.split(","):
        step, about = CASES[name](args.device, args.small)
        record = run_case(name, step, args.out, args.device)
        truth["cases"][name] = {**about, **record}
        ms = record["event_ms_by_step"]
        print(name, {k: round(v, 3) for k, v in ms.items()}, record["flop_counter"]["total"])
    (args.out / "truth.json").write_text(json.dumps(truth, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
