"""Training steps for ``benchmarks/bench_profile.py``: no gpuviz code in it, like ``examples/``.

    python benchmarks/profile_workload.py --kind launch --steps 300 --times t.json
    gpuviz profile benchmarks/profile_workload.py --kind gemm --steps 40

- ``--kind launch``: launch-bound. Each step runs ``--ops`` small elementwise ops on 4096
  values and a tiny MLP's forward, backward and ``Adam.step()``: many tiny kernels, each
  costing more to launch than to run (about 5 ms a step on an H100 at the defaults, about 700
  launches).
- ``--kind gpt``: ``examples/gpt_train.py``'s GPT and step at that script's defaults (its
  model class, bf16 autocast and fused AdamW on CUDA, 64 batches of random tokens), so that
  the ``--window-*`` variants below, which ``gpt_train.py`` has no flags for, run on its step
  (:func:`gpt_train_step`).
- ``--kind gemm``: compute-bound. Two bias-free ``--dim`` x ``--dim`` layers in bfloat16
  autocast on a ``--dim`` x ``--dim`` batch, forward and backward, then ``SGD.step()``: five
  large GEMMs a step (about 8 ms on an H100 at ``--dim 8192``; the batch needs no gradient).

Steps end at ``optimizer.step()``, as ``gpuviz profile`` counts them. ``--times FILE`` writes
each step's wall time in ms (``perf_counter`` at each step's end), the format of
``examples/gpt_train.py``. The host syncs with the GPU every ``--sync-every`` steps (a loss
read), as a training loop that logs does. ``--turns R,W`` is for ``benchmarks/bench_profile.py``
(its lockstep mode): before each step the script waits for a byte on file descriptor R, and
after it (device synchronized) writes one to W; each step is then timed from its turn's start.
``--window-kind cuda|cpu`` opens a plain ``torch.profiler`` window over ``--window-len`` steps
from ``--window-at`` (its results stay in memory): what a profiler leaves behind, without
gpuviz. ``cuda`` records CPU and CUDA activity, ``cpu`` CPU activity alone. It records shapes
and memory as gpuviz's window does. ``--window-warmup N`` drives it by a schedule as gpuviz
drives its own, ``--window-save`` saves it as it ends.
``--window-early`` also records the set-up (the model and optimizer built) in a CPU and CUDA
window started before CUDA is, its results dropped: ``gpuviz profile``'s recording before the
first step, which ends when the script makes its optimizer.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn


def launch_step(
    x: torch.Tensor, mlp: nn.Module, opt: torch.optim.Optimizer, ops: int
) -> torch.Tensor:
    """One launch-bound step; returns the loss (not read: no sync)."""
    y = x
    for _ in range(ops // 3):
        y = torch.sin(y * 1.0001 + 0.0001)
    loss = mlp(y.view(64, 64)).square().mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


def make_launch(
    device: torch.device,
) -> tuple[torch.Tensor, nn.Module, torch.optim.Optimizer]:
    """The launch-bound step's input, tiny MLP and optimizer on ``device`` (seeded)."""
    torch.manual_seed(0)
    mlp = nn.Sequential(
        nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64)
    ).to(device)
    opt = torch.optim.Adam(mlp.parameters(), lr=1e-4, foreach=False)
    return torch.randn(4096, device=device), mlp, opt


def gpt_train_step(device: str, batches: int = 8) -> Callable[[int], Any]:
    """A function that runs training step ``k`` of ``examples/gpt_train.py``'s GPT (on batch
    ``k % batches``) and returns its loss tensor, without waiting for the device (seeded;
    ``gpt_train.py``'s defaults: bf16 autocast and fused AdamW on CUDA, a small model on CPU)."""
    import torch.nn.functional as F

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    from gpt_train import GPT

    cuda = device == "cuda"
    dims = (8192, 256, 512, 6, 8) if cuda else (512, 32, 64, 2, 4)
    batch = 16 if cuda else 4
    torch.manual_seed(0)
    model = GPT(*dims).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=cuda)
    amp = torch.autocast("cuda", dtype=torch.bfloat16, enabled=cuda)
    data = torch.randint(dims[0], (batches, batch, dims[1] + 1), device=device)

    def step(k: int) -> Any:
        b = data[k % len(data)]
        with amp:
            logits = model(b[:, :-1])
            loss = F.cross_entropy(logits.flatten(0, 1).float(), b[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    return step


ACTIVITIES = {
    "cuda": (torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA),
    "cpu": (torch.profiler.ProfilerActivity.CPU,),
}
"""The ``torch.profiler`` activities of each plain ``--window-kind``."""


def main() -> None:
    cuda = torch.cuda.is_available()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kind", choices=("launch", "gpt", "gemm"), default="launch")
    p.add_argument("--device", default="cuda" if cuda else "cpu")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--ops", type=int, default=600, help="elementwise ops a launch step (600)")
    p.add_argument("--dim", type=int, default=8192 if cuda else 256, help="GEMM size (gemm)")
    p.add_argument("--sync-every", type=int, default=20, metavar="N")
    p.add_argument("--times", metavar="FILE.json", help="write each step's wall time (ms)")
    p.add_argument("--turns", metavar="R,W", help="take turns (for benchmarks/bench_profile.py)")
    p.add_argument(
        "--window-kind",
        choices=tuple(ACTIVITIES),
        help="open a torch.profiler window of this kind (no gpuviz: bench_profile's variants): "
        "CPU and CUDA activity, or CPU only",
    )
    p.add_argument("--window-at", type=int, default=60, help="its first step (60)")
    p.add_argument("--window-len", type=int, default=7, help="its steps (7)")
    p.add_argument(
        "--window-warmup",
        type=int,
        metavar="N",
        help="drive the window by a torch.profiler.schedule: N warm-up steps, then the rest "
        "recorded, prof.step() at each of its steps (as gpuviz does)",
    )
    p.add_argument(
        "--window-save",
        metavar="FILE.json",
        help="save the window's trace there when it ends (Kineto's own save, as a user would)",
    )
    p.add_argument(
        "--window-early",
        action="store_true",
        help="also record the script's set-up (model, optimizer) in a CPU and CUDA window whose "
        "results are dropped, as gpuviz profile's recording before the first step",
    )
    args = p.parse_args()
    device = torch.device(args.device)
    if args.window_warmup is not None and args.window_kind is None:
        p.error("--window-warmup: a schedule drives a torch.profiler window (--window-kind)")
    early = None
    if args.window_early:  # started before CUDA is, as gpuviz profile starts its own
        early = torch.profiler.profile(
            activities=list(ACTIVITIES["cuda" if cuda else "cpu"]),
            record_shapes=True,
            profile_memory=True,
        )
        early.start()
    torch.manual_seed(0)
    if args.kind == "launch":
        x, mlp, opt = make_launch(device)

        def step() -> torch.Tensor:
            return launch_step(x, mlp, opt, args.ops)

    elif args.kind == "gpt":
        train = gpt_train_step(device.type, batches=64)
        count = itertools.count()

        def step() -> torch.Tensor:
            return train(next(count))
    else:
        layers = nn.Sequential(
            nn.Linear(args.dim, args.dim, bias=False), nn.Linear(args.dim, args.dim, bias=False)
        ).to(device)
        opt = torch.optim.SGD(layers.parameters(), lr=1e-6)
        amp = torch.autocast(device.type, dtype=torch.bfloat16)
        batch = torch.randn(args.dim, args.dim, device=device)

        def step() -> torch.Tensor:
            with amp:
                loss = layers(batch).float().square().mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            return loss

    if early is not None:  # the set-up is built: stopped, its results dropped
        early.stop()
        early = None
    window: Any = None  # torch.profiler.profile
    sched = None
    window_end = args.window_at + args.window_len - 1
    if args.window_kind is not None:
        if args.window_warmup is not None:  # schedule-driven, as gpuviz drives its window
            sched = torch.profiler.schedule(
                wait=0,
                warmup=args.window_warmup,
                active=args.window_len - args.window_warmup,
                repeat=1,  # one window, then NONE (repeat=0 would prepare another)
            )
        window = torch.profiler.profile(
            activities=list(ACTIVITIES[args.window_kind]),
            record_shapes=True,
            profile_memory=True,
            schedule=sched,
            on_trace_ready=(
                (lambda p: p.export_chrome_trace(args.window_save))
                if sched is not None and args.window_save
                else None
            ),
        )
    times: list[float] = []
    turns = [int(fd) for fd in args.turns.split(",")] if args.turns else []
    last = time.perf_counter()
    for k in range(args.steps):
        if turns:
            if not os.read(turns[0], 1):
                return  # the benchmark is gone
            last = time.perf_counter()
        if window is not None and k == args.window_at:
            window.start()
        loss = step()
        if window is not None and args.window_at <= k <= window_end:
            if sched is not None:
                window.step()  # ProfilerStep#N ranges; the last one ends the trace and saves it
            if k == window_end:
                window.stop()  # no step() after: torch's would open ranges nothing records
                if sched is None and args.window_save:  # else on_trace_ready saved it
                    window.export_chrome_trace(args.window_save)
        if (k + 1) % args.sync_every == 0:
            loss.item()
        if turns and device.type == "cuda":
            torch.cuda.synchronize()  # the step's GPU work stays within its turn
        now = time.perf_counter()
        times.append((now - last) * 1e3)
        last = now
        if turns:
            os.write(turns[1], b"x")
    if args.times:
        with open(args.times, "w") as f:
            json.dump(times, f)


if __name__ == "__main__":
    main()
