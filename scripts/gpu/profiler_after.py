"""Does torch.profiler leave a cost behind? Step times of a small GPT before and after one window.

Plain torch, no gpuviz: times 150 steps, profiles 5 steps (CPU+CUDA), times 150 more, and
prints the medians. Run on a CUDA machine: ``python scripts/gpu/profiler_after.py``.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from gpt_train import GPT


def main() -> None:
    dev = "cuda"
    model = GPT(8192, 256, 512, 6, 8).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    idx = torch.randint(0, 8192, (16, 256), device=dev)

    def step() -> float:
        t = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(
                model(idx).flatten(0, 1).float(), idx.flatten()
            )
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss.item()
        return (time.perf_counter() - t) * 1e3

    for _ in range(30):
        step()
    before = [step() for _ in range(150)]
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    ):
        for _ in range(5):
            step()
    after = [step() for _ in range(150)]
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        for _ in range(5):
            step()
    after_cpu = [step() for _ in range(150)]
    print(
        f"median step: before {statistics.median(before):.3f} ms, after a CPU+CUDA window "
        f"{statistics.median(after):.3f} ms, after a further CPU-only window "
        f"{statistics.median(after_cpu):.3f} ms"
    )


if __name__ == "__main__":
    main()
