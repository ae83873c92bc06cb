"""Record a small multi-rank trace (gloo on the CPU, or on GPUs): collective-alignment test data.

    .venv/bin/python scripts/record_collectives.py OUT_DIR [--world 4] [--straggler 2]
        [--delay-ms 20] [--steps 4] [--device cpu|cuda] [--backend gloo|nccl]

Starts ``--world`` processes (``torch.multiprocessing``, spawn), each a rank of a gloo process
group, and profiles a few steps of a tiny DistributedDataParallel model. Each step is a forward,
a backward (DDP all-reduces the gradients) and an explicit ``all_reduce`` of the loss, so every
step holds at least two collectives of the default group. The rank ``--straggler`` computes
``--delay-ms`` longer before its backward in every step (extra matmuls, real compute): the
others wait for it in the collectives (a planted straggler; ``--straggler -1`` plants none).
Each rank uses one intra-op thread, so that ranks sharing a few cores do not oversubscribe
them. Each rank writes ``rank-N.json.gz`` into OUT_DIR (small: a few tens of KiB), with a
``ProfilerStep#N`` range per step.

With ``--device cuda`` each rank uses GPU ``rank % device_count`` and gloo still carries the
collectives (gloo copies CUDA tensors through the host): the GPU variant of the same data. With
``--backend nccl`` (CUDA only, one GPU per rank: ``--world`` at most the GPU count) NCCL carries
them, as in real DDP jobs: NCCL kernels on each rank's GPU.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path


def _rank_main(rank: int, args: argparse.Namespace, init: str) -> None:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(1)
    cuda = args.device == "cuda"
    device = torch.device(f"cuda:{rank % torch.cuda.device_count()}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(device)
    dist.init_process_group(args.backend, init_method=init, rank=rank, world_size=args.world)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 8)
    ).to(device)
    ddp = DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    x = torch.randn(32, 64, device=device)
    y = torch.randn(32, 8, device=device)
    extra = torch.randn(256, 256, device=device)

    def extra_compute(seconds: float) -> None:
        # Real work (matmuls), not a sleep: the straggler's compute per step is larger.
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            torch.mm(extra, extra)
            if cuda:
                torch.cuda.synchronize(device)

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        if rank == args.straggler:
            extra_compute(args.delay_ms / 1000.0)  # the planted straggler
        loss.backward()
        opt.step()
        total = loss.detach().clone()
        dist.all_reduce(total)

    for _ in range(2):  # warm-ups: gloo's first collectives set up their pairs
        step()
    activities = [torch.profiler.ProfilerActivity.CPU]
    if cuda:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    out = Path(args.out)
    tmp = out / f".rank-{rank}.json"
    schedule = torch.profiler.schedule(wait=0, warmup=1, active=args.steps, repeat=1)

    def ready(prof: torch.profiler.profile) -> None:
        prof.export_chrome_trace(str(tmp))

    with torch.profiler.profile(
        activities=activities, schedule=schedule, on_trace_ready=ready
    ) as prof:
        for _ in range(args.steps + 1):
            step()
            prof.step()
    with open(tmp, "rb") as src, gzip.open(out / f"rank-{rank}.json.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    tmp.unlink()
    dist.barrier()
    dist.destroy_process_group()


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, start the ranks, check that every rank wrote its file."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", help="folder that receives rank-N.json.gz")
    p.add_argument("--world", type=int, default=4)
    p.add_argument("--straggler", type=int, default=2, help="rank that sleeps (-1: none)")
    p.add_argument("--delay-ms", type=float, default=20.0)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--backend", choices=("gloo", "nccl"), default="gloo")
    args = p.parse_args(argv)
    if args.backend == "nccl" and args.device != "cuda":
        p.error("--backend nccl needs --device cuda")
    Path(args.out).mkdir(parents=True, exist_ok=True)

    import torch.multiprocessing as mp

    store = Path(tempfile.mkdtemp(prefix="gpuviz-gloo-")) / "store"
    mp.spawn(_rank_main, args=(args, f"file://{store}"), nprocs=args.world, join=True)
    for r in range(args.world):
        path = Path(args.out) / f"rank-{r}.json.gz"
        with gzip.open(path) as f:
            info = json.load(f).get("distributedInfo", {})
        print(f"{path}: {os.path.getsize(path)} bytes, distributedInfo {info}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
