"""Record the GPU test data of round 2: planted-problem traces, allocator snapshots, a gloo pair.

Plain torch only (no gpuviz), so the data does not depend on the code it tests. Run on a CUDA
machine::

    python scripts/gpu/record_round2.py OUT_DIR [--only NAME[,NAME]]

Writes into OUT_DIR:

- ``adv_<kind>.json.gz``: one small Kineto trace per advisor finding one GPU can show, each with
  3 ``ProfilerStep#`` ranges after unprofiled warm-ups, and ``adv_clean.json.gz``, a well-tuned
  bf16 run that must get no warning;
- ``snap_*.pickle`` with ``snap_*.json`` sidecars (what torch itself said: max_memory_allocated,
  memory_allocated, memory_reserved, the OOM's request), and ``snap_train_profile.json.gz``, a
  ``profile_memory`` trace of the same run as ``snap_train.pickle``;
- ``gloo_2rank/rank-{0,1}.json.gz``: DDP-style all_reduce over gloo with CUDA tensors on one GPU,
  rank 1 a planted straggler (3x the compute).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, schedule

DEV = "cuda"


def _gzip(src: Path) -> Path:
    dst = src.with_suffix(src.suffix + ".gz")
    with open(src, "rb") as f, gzip.open(dst, "wb", compresslevel=6) as g:
        shutil.copyfileobj(f, g)
    src.unlink()
    return dst


def profile_steps(out: Path, name: str, step, warmups: int = 3, active: int = 3, **kw) -> Path:
    """Warm up unprofiled, then profile ``active`` steps as ProfilerStep ranges."""
    for _ in range(warmups):
        step()
    torch.cuda.synchronize()
    path = out / f"{name}.json"
    # Export from on_trace_ready: once a cycle ends the profiler clears its events, so an
    # export after the ``with`` block would write an empty trace.
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=0, warmup=1, active=active, repeat=1),
        on_trace_ready=lambda p: p.export_chrome_trace(str(path)),
        **kw,
    ) as prof:
        for _ in range(active + 1):
            step()
            prof.step()
    return _gzip(path)


# ---- planted problems -------------------------------------------------------------------------


def adv_launch_bound(out: Path) -> None:
    """Many tiny layers, a per-parameter (for-loop) optimizer: the GPU waits for launches."""
    layers = []
    for _ in range(40):
        layers += [nn.Linear(64, 64), nn.ReLU()]
    model = nn.Sequential(*layers).to(DEV)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9, foreach=False)
    x = torch.randn(32, 64, device=DEV)

    def step():
        opt.zero_grad(set_to_none=True)
        model(x).square().mean().backward()
        opt.step()

    profile_steps(out, "adv_launch_bound", step)


def adv_host_sync(out: Path) -> None:
    """A logging .item() per micro-batch: the CPU waits for the GPU, then the GPU for the CPU."""
    model = nn.Sequential(nn.Linear(2048, 2048), nn.GELU(), nn.Linear(2048, 1000)).to(DEV)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)  # CPU step counters: aten::item, no sync
    xs = [torch.randn(512, 2048, device=DEV) for _ in range(8)]
    ys = [torch.randint(0, 1000, (512,), device=DEV) for _ in range(8)]
    stats = []

    def step():
        opt.zero_grad(set_to_none=True)
        for x, y in zip(xs, ys):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(x)
                loss = nn.functional.cross_entropy(logits, y)
            loss.backward()
            stats.append(loss.item())  # host sync
            stats.append((logits.argmax(1) == y).float().mean().item())  # another one
        opt.step()

    profile_steps(out, "adv_host_sync", step)


def adv_pageable_copy(out: Path) -> None:
    """A 256 MiB batch copied from pageable memory each step."""
    host = torch.randn(64 * 1024 * 1024)  # pageable
    w = torch.randn(4096, 4096, device=DEV, dtype=torch.bfloat16)

    def step():
        x = host.to(DEV)
        y = x.view(-1, 4096)[:4096].to(torch.bfloat16)
        for _ in range(4):
            y = y @ w

    profile_steps(out, "adv_pageable_copy", step)


def adv_gpu_starved(out: Path) -> None:
    """The input pipeline runs in Python on the main thread while the GPU waits."""
    import numpy as np

    w = torch.randn(4096, 4096, device=DEV, dtype=torch.bfloat16)
    rng = np.random.default_rng(0)

    def step():
        batch = rng.standard_normal((256, 4096)).astype(np.float32)  # "decode"
        batch = np.clip(batch * 1.5 + 0.1, -3, 3)  # "augment"
        time.sleep(0.015)  # "read files"
        x = torch.from_numpy(batch).to(DEV, non_blocking=False).to(torch.bfloat16)
        for _ in range(8):
            x = x @ w
        x.sum()

    profile_steps(out, "adv_gpu_starved", step)


def adv_fp32_matmul(out: Path) -> None:
    """fp32 GEMMs at the default ("highest") precision: no tensor cores on an sm_90 GPU."""
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(4096, 4096, device=DEV)
    b = torch.randn(4096, 4096, device=DEV)

    def step():
        c = a
        for _ in range(6):
            c = torch.tanh(c @ b)

    profile_steps(out, "adv_fp32_matmul", step)


def adv_copy_not_overlapped(out: Path) -> None:
    """A large pinned H2D copy on the compute stream: nothing runs beside it."""
    host = torch.randn(96 * 1024 * 1024).pin_memory()  # 384 MiB, pinned
    w = torch.randn(4096, 4096, device=DEV, dtype=torch.bfloat16)

    def step():
        x = host.to(DEV, non_blocking=True)
        y = x[: 4096 * 4096].view(4096, 4096).to(torch.bfloat16)
        for _ in range(6):
            y = y @ w

    profile_steps(out, "adv_copy_not_overlapped", step)


def adv_low_occupancy(out: Path) -> None:
    """Heavy kernels with a grid far smaller than the SM count."""
    x = torch.randn(8, 8 * 1024 * 1024, device=DEV)
    try:
        import triton
        import triton.language as tl

        @triton.jit
        def row_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            acc = tl.zeros([BLOCK], dtype=tl.float32)
            for start in range(0, n, BLOCK):
                offs = start + tl.arange(0, BLOCK)
                acc += tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
            tl.store(out_ptr + row, tl.sum(acc, axis=0))

        res = torch.empty(8, device=DEV)

        def heavy():
            row_sum[(8,)](x, res, x.shape[1], BLOCK=256)  # 8 programs on 132 SMs

    except Exception:  # no triton: a one-block-per-row scan is also narrow

        def heavy():
            torch.cumsum(x, dim=1)

    w = torch.randn(2048, 2048, device=DEV, dtype=torch.bfloat16)

    def step():
        for _ in range(4):
            heavy()
        (w @ w).sum()

    profile_steps(out, "adv_low_occupancy", step)


def adv_clean(out: Path) -> None:
    """A well-tuned step: bf16, large batch, fused AdamW, pinned async input prefetched."""
    torch.backends.cuda.matmul.allow_tf32 = True
    width = 8192
    model = nn.Sequential(
        nn.Linear(width, width),
        nn.GELU(),
        nn.Linear(width, width),
        nn.GELU(),
        nn.Linear(width, width),
        nn.GELU(),
        nn.Linear(width, width),
    ).to(DEV)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    host = [torch.randn(8192, width).pin_memory() for _ in range(2)]
    copy_stream = torch.cuda.Stream()
    state = {"i": 0, "next": None}

    def prefetch():
        with torch.cuda.stream(copy_stream):
            state["next"] = host[state["i"] % 2].to(DEV, non_blocking=True)
        state["i"] += 1

    prefetch()

    def step():
        torch.cuda.current_stream().wait_stream(copy_stream)
        x = state["next"]
        x.record_stream(torch.cuda.current_stream())
        prefetch()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x).float().square().mean()
        loss.backward()
        opt.step()

    profile_steps(out, "adv_clean", step)


# ---- allocator snapshots -----------------------------------------------------------------------


class TinyGPT(nn.Module):
    def __init__(self, vocab=8192, d=512, layers=4, seq=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(seq, d))
        layer = nn.TransformerEncoderLayer(d, 8, 4 * d, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d, vocab)

    def forward(self, idx):
        return self.head(self.blocks(self.emb(idx) + self.pos[: idx.shape[1]]))


def _train(steps: int, prof=None):
    model = TinyGPT().to(DEV)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for _ in range(steps):
        idx = torch.randint(0, 8192, (16, 256), device=DEV)
        logits = model(idx)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), idx.flatten())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if prof is not None:
            prof.step()
    torch.cuda.synchronize()
    return model, opt


def _sidecar(path: Path, **extra) -> None:
    info = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(),
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "memory_allocated": torch.cuda.memory_allocated(),
        "memory_reserved": torch.cuda.memory_reserved(),
        "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
        **extra,
    }
    path.write_text(json.dumps(info, indent=1))


def snap_train(out: Path) -> None:
    """A training loop recorded from the start, with a profile_memory trace of steps 2-4."""
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=100_000, stacks="python")
    p = out / "snap_train_profile.json"
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
        on_trace_ready=lambda prof: prof.export_chrome_trace(str(p)),
        profile_memory=True,
    ) as prof:
        _train(6, prof)
    torch.cuda.memory._dump_snapshot(str(out / "snap_train.pickle"))
    torch.cuda.memory._record_memory_history(enabled=None)
    _sidecar(out / "snap_train.json", steps=6, recorded_from_start=True)
    _gzip(p)


def snap_cpp_frames(out: Path) -> None:
    """A tiny snapshot with C++ frames too (stacks='all'), to cover that layout."""
    torch.cuda.empty_cache()
    torch.cuda.memory._record_memory_history(max_entries=200, stacks="all")
    xs = [torch.randn(1024, 1024, device=DEV) for _ in range(8)]
    del xs[::2]
    torch.cuda.memory._dump_snapshot(str(out / "snap_cpp_frames.pickle"))
    torch.cuda.memory._record_memory_history(enabled=None)
    del xs


def snap_oom(out: Path) -> None:
    """Out of memory under a per-process memory fraction; the snapshot taken at the failure."""
    torch.cuda.empty_cache()
    total = torch.cuda.get_device_properties(0).total_memory
    frac = (2 * 2**30) / total  # about 2 GiB allowed
    torch.cuda.set_per_process_memory_fraction(frac)
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=100_000, stacks="python")
    keep = []
    request = None
    try:
        for i in range(64):
            keep.append(torch.empty((64 + 32 * i) * 2**20, dtype=torch.uint8, device=DEV))
    except torch.cuda.OutOfMemoryError as exc:
        request = str(exc).splitlines()[0]
        torch.cuda.memory._dump_snapshot(str(out / "snap_oom.pickle"))
    torch.cuda.memory._record_memory_history(enabled=None)
    _sidecar(out / "snap_oom.json", fraction=frac, oom_message=request, live_tensors=len(keep))
    del keep
    torch.cuda.set_per_process_memory_fraction(1.0)
    torch.cuda.empty_cache()


def snap_wrapped(out: Path) -> None:
    """A long run through a small ring buffer: the trace keeps only its end."""
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=3000, stacks="python")
    _train(30)
    torch.cuda.memory._dump_snapshot(str(out / "snap_wrapped.pickle"))
    torch.cuda.memory._record_memory_history(enabled=None)
    _sidecar(out / "snap_wrapped.json", steps=30, max_entries=3000)


def snap_expandable(out: Path) -> None:
    """The training loop in a child with expandable segments on (the allocator reads it at init)."""
    env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True")
    code = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import record_round2 as r; from pathlib import Path;"
        f"import torch; out = Path({str(out)!r});"
        "torch.cuda.reset_peak_memory_stats();"
        "torch.cuda.memory._record_memory_history(max_entries=100000, stacks='python');"
        "r._train(4);"
        "torch.cuda.memory._dump_snapshot(str(out / 'snap_expandable.pickle'));"
        "r._sidecar(out / 'snap_expandable.json', steps=4)"
    )
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=300)


# ---- gloo pair on one GPU ----------------------------------------------------------------------


def _gloo_rank(rank: int, world: int, out: str, init: str) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    torch.cuda.set_device(0)
    w = torch.randn(2048, 2048, device=DEV)
    grad = torch.randn(4 * 1024 * 1024, device=DEV)

    def step():
        y = w
        for _ in range(6 if rank != 1 else 18):  # rank 1: 3x the compute
            y = torch.tanh(y @ w)
        torch.cuda.synchronize()
        for _ in range(3):
            dist.all_reduce(grad)
        dist.barrier()

    for _ in range(2):
        step()
    p = Path(out) / f"rank-{rank}.json"
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=0, warmup=1, active=3, repeat=1),
        on_trace_ready=lambda prof: prof.export_chrome_trace(str(p)),
    ) as prof:
        for _ in range(4):
            step()
            prof.step()
    _gzip(p)
    dist.destroy_process_group()


def gloo_2rank(out: Path) -> None:
    import torch.multiprocessing as mp

    d = out / "gloo_2rank"
    d.mkdir(exist_ok=True)
    init = f"file://{out / 'gloo_init'}"
    mp.spawn(_gloo_rank, args=(2, str(d), init), nprocs=2, join=True)


JOBS = [
    adv_launch_bound,
    adv_host_sync,
    adv_pageable_copy,
    adv_gpu_starved,
    adv_fp32_matmul,
    adv_copy_not_overlapped,
    adv_low_occupancy,
    adv_clean,
    snap_train,
    snap_cpp_frames,
    snap_oom,
    snap_wrapped,
    snap_expandable,
    gloo_2rank,
]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    only = {s for s in args.only.split(",") if s}
    print(torch.__version__, torch.cuda.get_device_name(), flush=True)
    failed = 0
    for job in JOBS:
        if only and job.__name__ not in only:
            continue
        t0 = time.perf_counter()
        try:
            job(out)
            print(f"{job.__name__}: ok in {time.perf_counter() - t0:.1f} s", flush=True)
        except Exception:
            failed += 1
            print(f"{job.__name__}: FAILED\n{traceback.format_exc()}", flush=True)
        torch.cuda.empty_cache()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
