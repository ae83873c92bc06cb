"""A 2-rank gloo job on CPUs for the what-if test (tests/data/whatif/cpu_gloo/README.md).

``python whatif_gloo_cpu.py OUT SLOW``: each step is 4 matmuls and tanh, then two all-reduces;
with SLOW=1 rank 1 also runs 4 matmuls under ``record_function("SLOW")``. Writes
``OUT/rank-{0,1}.json`` (steps 2-4 profiled) and ``OUT/times-{0,1}.json`` (20 unprofiled
steps' wall times, ms).
"""

import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.profiler import ProfilerActivity, profile, record_function, schedule


def run(rank: int, out: str, slow: int, steps: int) -> None:
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29533" if slow else "29534"
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    a, w, g = torch.randn(384, 384), torch.randn(384, 384), torch.randn(256, 256)

    def step() -> None:
        x = a
        for _ in range(4):
            x = torch.tanh(x @ w)
        if slow and rank == 1:
            with record_function("SLOW"):
                y = a
                for _ in range(4):
                    y = y @ w
        dist.all_reduce(g)
        dist.all_reduce(x)

    for _ in range(3):
        step()
    dist.barrier()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    dist.barrier()
    sched = schedule(wait=1, warmup=1, active=3)
    with profile(activities=[ProfilerActivity.CPU], schedule=sched) as prof:
        for _ in range(5):
            step()
            prof.step()
    prof.export_chrome_trace(f"{out}/rank-{rank}.json")
    with open(f"{out}/times-{rank}.json", "w") as f:
        json.dump(times, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    out_dir, slow_rank = sys.argv[1], int(sys.argv[2])
    os.makedirs(out_dir, exist_ok=True)
    mp.spawn(run, args=(out_dir, slow_rank, 20), nprocs=2)
