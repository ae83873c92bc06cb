"""What costs a profiled script outside its window? Experiments on a small GPT (H100/H200).

Interleaved, in one process, median step time of 120 steps per configuration, 3 rounds:

- ``none``: no sampler; ``sampler``: gpuviz's memory sampler at 20 Hz on the GPU (RSS,
  allocator, NVML); ``no_nvml``: the same without NVML; ``rss_only``: a CPU-only sampler;
  ``sampler_10hz``: the full sampler at 10 Hz.

Then, with ``TEARDOWN_CUPTI=1``: steps before and after a profiled window, after a second
window (CUPTI re-attached), and a CUDA graph replayed across both windows (Kineto's teardown
once crashed with graphs).

Usage: ``python scripts/gpu/overhead_experiments.py``
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

os.environ["TEARDOWN_CUPTI"] = "1"
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from gpt_train import GPT  # noqa: E402

from gpuviz.engine import sampler as sampler_mod  # noqa: E402


def main() -> None:
    dev = torch.device("cuda", 0)
    model = GPT(8192, 256, 512, 6, 8).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    idx = torch.randint(0, 8192, (16, 256), device=dev)

    def step() -> float:
        t = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(idx).flatten(0, 1).float()
            loss = torch.nn.functional.cross_entropy(out, idx.flatten())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return (time.perf_counter() - t) * 1e3

    def run(n: int = 120) -> float:
        torch.cuda.synchronize()
        times = [step() for _ in range(n)]
        torch.cuda.synchronize()
        return statistics.median(times)

    class NoNvml(sampler_mod._Nvml):
        def __init__(self, cuda_indices: list[int]) -> None:
            self.handles = {}

    def with_sampler(devices: list[torch.device], interval: float, nvml: bool = True) -> float:
        saved = sampler_mod._Nvml
        if not nvml:
            sampler_mod._Nvml = NoNvml  # type: ignore[misc]
        s = sampler_mod.MemorySampler(
            devices, time.perf_counter(), emit=lambda e: None, interval_s=interval
        )
        s.start()
        try:
            return run()
        finally:
            s.stop()
            sampler_mod._Nvml = saved

    for _ in range(40):
        step()
    configs = {
        "none": run,
        "sampler": lambda: with_sampler([dev], 0.05),
        "no_nvml": lambda: with_sampler([dev], 0.05, nvml=False),
        "rss_only": lambda: with_sampler([torch.device("cpu")], 0.05),
        "sampler_10hz": lambda: with_sampler([dev], 0.1),
    }
    got: dict[str, list[float]] = {k: [] for k in configs}
    for r in range(3):
        names = list(configs)[r:] + list(configs)[:r]
        for name in names:
            got[name].append(configs[name]())
    base = statistics.median(got["none"])
    for name, v in got.items():
        m = statistics.median(v)
        print(
            f"{name:13s} {m:8.3f} ms  ({100 * (m / base - 1):+.1f}%)  rounds {[round(x, 2) for x in v]}"
        )

    # CUPTI teardown: no cost left after a window, and windows again afterwards, with a graph.
    static = torch.randn(1024, 1024, device=dev)
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            static @ static
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        y = static @ static
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    before = run()
    for window in (1, 2):
        with torch.profiler.profile(activities=acts):
            for _ in range(3):
                step()
                g.replay()
        g.replay()
        torch.cuda.synchronize()
        after = run()
        print(
            f"TEARDOWN_CUPTI=1: before {before:.3f} ms, after window {window} {after:.3f} ms "
            f"({100 * (after / before - 1):+.1f}%); graph replay ok ({float(y.sum()):.1f})"
        )


if __name__ == "__main__":
    main()
