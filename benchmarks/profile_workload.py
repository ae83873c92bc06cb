"""Training steps for ``benchmarks/bench_profile.py``: no gpuviz code in it, like ``examples/``.

    python benchmarks/profile_workload.py --kind launch --steps 300 --times t.json
    gpuviz profile benchmarks/profile_workload.py --kind gemm --steps 40

- ``--kind launch``: launch-bound. Each step runs ``--ops`` small elementwise ops on 4096
  values and a tiny MLP's forward, backward and ``Adam.step()``: many tiny kernels, each
  costing more to launch than to run (about 5 ms a step on an H100 at the defaults, about 700
  launches).
- ``--kind modules``: launch-bound too, but made of module calls: ``--blocks`` residual
  blocks (``LayerNorm``, ``Linear``, ``GELU``, ``Linear``) on a 64 x 64 batch, forward,
  backward and a fused-where-possible ``AdamW.step()``, as ``examples/gpt_train.py``'s layers
  are. ``gpuviz profile`` cost about 3% on ``gpt_train.py`` and 1.2% on ``launch``: against
  ``launch``, this tells whether the cost grows with module calls.
- ``--kind gpt``: ``examples/gpt_train.py``'s GPT and step at that script's defaults (its
  model class, bf16 autocast and fused AdamW on CUDA, 64 batches of random tokens), so that
  the ``--window-*`` variants below, which ``gpt_train.py`` has no flags for, run on its step.
- ``--kind gemm``: compute-bound. Two bias-free ``--dim`` x ``--dim`` layers in bfloat16
  autocast on a ``--dim`` x ``--dim`` batch, forward and backward, then ``SGD.step()``: five
  large GEMMs a step (about 8 ms on an H100 at ``--dim 8192``; the batch needs no gradient).

Steps end at ``optimizer.step()``, as ``gpuviz profile`` counts them. ``--times FILE`` writes
each step's wall time in ms (``perf_counter`` at each step's end), the format of
``examples/gpt_train.py``. The host syncs with the GPU every ``--sync-every`` steps (a loss
read), as a training loop that logs does. ``--turns R,W`` is for ``benchmarks/bench_profile.py``
(its lockstep mode): before each step the script waits for a byte on file descriptor R, and
after it (device synchronized) writes one to W; each step is then timed from its turn's start.
``--window-kind cuda|cpu|cuda-only`` opens a plain ``torch.profiler`` window over
``--window-len`` steps from ``--window-at`` (its results stay in memory): what a profiler leaves
behind, without gpuviz. ``cuda`` records CPU and CUDA activity, ``cpu`` CPU activity alone,
``cuda-only`` CUDA activity alone (no CPU activity: torch registers no ``RecordFunction``
callbacks for the window). It records shapes and memory as gpuviz's window does, unless
``--window-plain``; with ``--window-trim`` its results are dropped as it ends, then garbage
collected and the C heap trimmed; with ``--window-empty`` it is started and stopped at once
before step ``--window-at``, recording nothing (setting up and tearing down alone).
``--window-kind legacy`` is the autograd profiler without Kineto
(``torch.autograd.profiler.profile(use_kineto=False)``): torch's ``RecordFunction`` callbacks,
on the script's threads and the autograd engine's, with no CUPTI and no Kineto.
``--window-kind cupti`` (CUDA only) has no ``torch.profiler`` at all: CUPTI alone records the
window's kernels, copies and API calls, then is detached as Kineto's teardown does
(``benchmarks/cupti_window.py``); ``--cupti-ops push`` also pushes and pops an external id on
CUPTI's stack around every op of those steps, as a CPU and CUDA window's Kineto does, and
``--cupti-ops mode`` passes the ops through the same ``TorchDispatchMode`` without (the control);
``--cupti-kineto`` sets CUPTI up further as Kineto does (its overhead records, the records of
frequent API calls switched off, the driver's callbacks too while CUPTI waits to be finalized).
A plain window may also leave out CUPTI's external correlation (``--window-nocorr``) or, once it
has ended and Kineto has detached CUPTI, detach CUPTI once more (``--window-refinalize``).
``--window-early`` also records the set-up (the model and optimizer built) in a CPU and CUDA
window started before CUDA is, its results dropped: ``gpuviz profile``'s recording before the
first step, which ends when the script makes its optimizer.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import functools
import gc
import itertools
import json
import os
import sys
import time
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


class Residual(nn.Module):
    """``x + fc2(gelu(fc1(norm(x))))``: four module calls, as a transformer's MLP half."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, dim)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(self.act(self.fc1(self.norm(x))))


def make_modules(
    device: torch.device, blocks: int
) -> tuple[torch.Tensor, nn.Module, torch.optim.Optimizer]:
    """The module-bound step's input, ``blocks`` residual blocks and optimizer (seeded)."""
    torch.manual_seed(0)
    model = nn.Sequential(*(Residual(64) for _ in range(blocks))).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
    return torch.randn(64, 64, device=device), model, opt


def trim_heap() -> None:
    """Collect garbage and hand the C heap's free memory back (glibc's ``malloc_trim``).

    Not ``gpuviz.trace.gcpause.release_freed_memory``: the own-window variants measure a
    process with no gpuviz in it, so this script imports none of it.
    """
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


ACTIVITIES = {
    "cuda": (torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA),
    "cpu": (torch.profiler.ProfilerActivity.CPU,),
    "cuda-only": (torch.profiler.ProfilerActivity.CUDA,),
}
"""The ``torch.profiler`` activities of each plain ``--window-kind``."""


def refinalize() -> None:
    """Let Kineto's teardown finish (it finalizes CUPTI at the exit of a runtime call, from its
    own thread's wait), then detach CUPTI once more and say how (stderr): "directly" there
    means Kineto still held CUPTI. Not ``gpuviz.engine.cupti.teardown_completed``: the
    own-window variants measure a process with no gpuviz in it."""
    from cupti_window import finalize_again, runtime_version_call  # benchmarks/

    runtime_call = runtime_version_call()
    for _ in range(10):
        runtime_call()
        time.sleep(0.002)
    win = finalize_again()
    print(f"refinalized {win.via}", file=sys.stderr)


def main() -> None:
    cuda = torch.cuda.is_available()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kind", choices=("launch", "modules", "gpt", "gemm"), default="launch")
    p.add_argument("--device", default="cuda" if cuda else "cpu")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--ops", type=int, default=600, help="elementwise ops a launch step (600)")
    p.add_argument("--blocks", type=int, default=48, help="residual blocks (modules; 48)")
    p.add_argument("--dim", type=int, default=8192 if cuda else 256, help="GEMM size (gemm)")
    p.add_argument("--sync-every", type=int, default=20, metavar="N")
    p.add_argument("--times", metavar="FILE.json", help="write each step's wall time (ms)")
    p.add_argument("--turns", metavar="R,W", help="take turns (for benchmarks/bench_profile.py)")
    p.add_argument(
        "--window-kind",
        choices=("cuda", "cpu", "cuda-only", "legacy", "cupti"),
        help="open a torch.profiler window of this kind (no gpuviz: bench_profile's variants): "
        "CPU and CUDA activity, CPU, CUDA only; legacy: the autograd profiler without Kineto; "
        "cupti: CUPTI's activity alone, no torch.profiler (benchmarks/cupti_window.py)",
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
        "--window-plain",
        action="store_true",
        help="no record_shapes, no profile_memory in that window (gpuviz records both)",
    )
    p.add_argument(
        "--window-trim",
        action="store_true",
        help="when the window ends, drop its results, collect garbage and return freed heap "
        "memory to the system (gc.collect, malloc_trim)",
    )
    p.add_argument(
        "--window-empty",
        action="store_true",
        help="start and stop the window at once before step --window-at: no step recorded",
    )
    p.add_argument(
        "--cupti-ops",
        choices=("mode", "push"),
        help="with --window-kind cupti: every op of the window's steps through a dispatch mode "
        "that pushes a CUPTI external id around it (push), or does not (mode)",
    )
    p.add_argument(
        "--cupti-kineto",
        action="store_true",
        help="with --window-kind cupti: set CUPTI up as Kineto does (overhead records, its "
        "quiet API calls, the driver's callbacks too at the close)",
    )
    p.add_argument(
        "--window-early",
        action="store_true",
        help="also record the script's set-up (model, optimizer) in a CPU and CUDA window whose "
        "results are dropped, as gpuviz profile's recording before the first step",
    )
    p.add_argument(
        "--window-nocorr",
        action="store_true",
        help="a torch.profiler window without CUPTI's external correlation "
        "(_ExperimentalConfig(disable_external_correlation=True)): kernels not linked to ops",
    )
    p.add_argument(
        "--window-refinalize",
        action="store_true",
        help="when a torch.profiler window has ended and Kineto has detached CUPTI, detach it "
        "once more (benchmarks/cupti_window.py)",
    )
    args = p.parse_args()
    device = torch.device(args.device)
    plain_kinds = tuple(ACTIVITIES)
    if args.window_kind in ("cupti", "cuda-only") and device.type != "cuda":
        p.error(
            f"--window-kind {args.window_kind}: it records CUDA activity alone; "
            f"--device is {device.type}"
        )
    if args.window_trim and args.window_kind not in plain_kinds:
        p.error("--window-trim: it trims after a torch.profiler window (cuda|cpu|cuda-only)")
    if args.cupti_ops and args.window_kind != "cupti":
        p.error("--cupti-ops: it wraps the ops of a CUPTI window (--window-kind cupti)")
    if args.cupti_kineto and args.window_kind != "cupti":
        p.error("--cupti-kineto: it sets up a CUPTI window (--window-kind cupti)")
    if args.window_nocorr and args.window_kind not in plain_kinds:
        p.error("--window-nocorr: it configures a torch.profiler window (cuda|cpu|cuda-only)")
    if args.window_refinalize and (
        args.window_kind not in plain_kinds or device.type != "cuda" or args.window_empty
    ):
        p.error(
            "--window-refinalize: it detaches CUPTI after a torch.profiler window that recorded "
            f"on CUDA (cuda|cpu|cuda-only, not empty); --device is {device.type}"
        )
    if args.window_warmup is not None and args.window_kind not in plain_kinds:
        p.error("--window-warmup: a schedule drives a torch.profiler window (cuda|cpu|cuda-only)")
    if args.window_empty and (
        args.window_kind not in plain_kinds or args.window_warmup is not None
    ):
        p.error("--window-empty: a torch.profiler window (cuda|cpu|cuda-only) with no schedule")
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

    elif args.kind == "modules":
        x, model, opt = make_modules(device, args.blocks)

        def step() -> torch.Tensor:
            loss = model(x).square().mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            return loss

    elif args.kind == "gpt":
        from gpt_step import gpt_train_step  # benchmarks/, this script's folder

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
    window: Any = None  # torch.profiler.profile, or the autograd profiler (legacy)
    begin: Any = None  # what starts the window, and what stops it
    end: Any = None
    sched = cupti = ops = None
    window_end = args.window_at + args.window_len - 1
    if args.window_kind == "legacy":
        window = torch.autograd.profiler.profile(
            use_kineto=False,
            record_shapes=not args.window_plain,
            profile_memory=not args.window_plain,
        )
        # it has no start() and stop(): its with-block's enter and exit
        begin, end = window.__enter__, functools.partial(window.__exit__, None, None, None)
    elif args.window_kind in plain_kinds:
        if args.window_warmup is not None:  # schedule-driven, as gpuviz drives its window
            sched = torch.profiler.schedule(
                wait=0,
                warmup=args.window_warmup,
                active=args.window_len - args.window_warmup,
                repeat=1,  # one window, then NONE (repeat=0 would prepare another)
            )
        window = torch.profiler.profile(
            activities=list(ACTIVITIES[args.window_kind]),
            record_shapes=not args.window_plain,
            profile_memory=not args.window_plain,
            schedule=sched,
            experimental_config=(
                torch._C._profiler._ExperimentalConfig(disable_external_correlation=True)
                if args.window_nocorr
                else None
            ),
            on_trace_ready=(
                (lambda p: p.export_chrome_trace(args.window_save))
                if sched is not None and args.window_save
                else None
            ),
        )
        begin, end = window.start, window.stop
    times: list[float] = []
    turns = [int(fd) for fd in args.turns.split(",")] if args.turns else []
    last = time.perf_counter()
    for k in range(args.steps):
        if turns:
            if not os.read(turns[0], 1):
                return  # the benchmark is gone
            last = time.perf_counter()
        if window is not None and k == args.window_at:
            begin()
            if args.window_empty:
                end()
                window = None
        if args.window_kind == "cupti" and k == args.window_at:
            from cupti_window import close_window, op_mode, open_window  # benchmarks/

            cupti = open_window(correlate=args.cupti_ops == "push", kineto=args.cupti_kineto)
            if args.cupti_ops:
                ops = op_mode(cupti, push=args.cupti_ops == "push")
                ops.__enter__()
        loss = step()
        if cupti is not None and k == window_end:
            torch.cuda.synchronize()
            if ops is not None:
                ops.__exit__(None, None, None)
                print(
                    f"cupti ops ({args.cupti_ops}): {sum(ops.threads.values())} ops on "
                    f"{len(ops.threads)} threads, {ops.failed} pushes refused",
                    file=sys.stderr,
                )
            close_window(cupti)
            print(
                f"cupti window: {cupti.recorded_bytes} bytes recorded, finalized {cupti.via}",
                file=sys.stderr,
            )
            cupti = ops = None
        if window is not None and args.window_at <= k <= window_end:
            if sched is not None:
                window.step()  # ProfilerStep#N ranges; the last one ends the trace and saves it
            if k == window_end:
                end()  # no step() after: torch's would open ranges nothing records
                if sched is None and args.window_save:  # else on_trace_ready saved it
                    window.export_chrome_trace(args.window_save)
                if args.window_trim:
                    window = None  # its results go with it
                    trim_heap()
                if args.window_refinalize:
                    refinalize()
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
