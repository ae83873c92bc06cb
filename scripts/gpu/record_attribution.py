"""Record the GPU test data of "where in my code": a small transformer trained under the profiler.

Plain torch only (no gpuviz), so the data does not depend on the code it tests. Run on a CUDA
machine (it also runs, small, on the CPU)::

    python scripts/gpu/record_attribution.py OUT_DIR [--device cuda] [--steps 2]

Writes into OUT_DIR:

- ``tinylm_train.json.gz``: the Kineto trace of ``--steps`` profiled training steps of a tiny
  decoder-only LM (AdamW, bf16 autocast on a GPU), recorded with ``record_shapes``,
  ``with_stack``, ``with_modules`` and ``with_flops``;
- ``tinylm_train.key_averages.json``: what torch itself says about the same profiled window:
  ``prof.key_averages()`` rows (``by_name``) and ``key_averages(group_by_input_shape=True)`` rows
  (``by_shape``), each with ``key``, ``count``, ``cpu_time_total_us``,
  ``self_cpu_time_total_us``, ``device_time_total_us``, ``self_device_time_total_us``,
  ``flops`` and (by shape) ``input_shapes``; plus the device name and torch version.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.profiler import ProfilerActivity, profile, schedule


class Attn(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class Mlp(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.gelu(self.up(x)))


class Block(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = Attn(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab: int, seq: int, dim: int, layers: int, heads: int) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(seq, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def _first(e: Any, *names: str) -> Any:
    """The first of ``names`` that ``e`` has: torch renamed cuda_* to device_* in 2.4."""
    for n in names:
        if hasattr(e, n):
            return getattr(e, n)
    return 0.0


def _rows(events: Any, with_shapes: bool) -> list[dict[str, Any]]:
    rows = []
    for e in events:
        row = {
            "key": e.key,
            "count": int(e.count),
            "cpu_time_total_us": float(e.cpu_time_total),
            "self_cpu_time_total_us": float(e.self_cpu_time_total),
            "device_time_total_us": float(_first(e, "device_time_total", "cuda_time_total")),
            "self_device_time_total_us": float(
                _first(e, "self_device_time_total", "self_cuda_time_total")
            ),
            "flops": int(e.flops or 0),
            "device_type": str(e.device_type),
            "is_user_annotation": bool(getattr(e, "is_user_annotation", False)),
        }
        if with_shapes:
            row["input_shapes"] = e.input_shapes
        rows.append(row)
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=2, help="profiled steps")
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=128)
    a = p.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    torch.manual_seed(0)
    vocab = 1024
    model = TinyLM(vocab, a.seq, a.dim, a.layers, heads=4).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randint(0, vocab, (a.batch, a.seq), device=dev)
    y = torch.randint(0, vocab, (a.batch, a.seq), device=dev)

    def step() -> None:
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            logits = model(x)
            loss = F.cross_entropy(logits.view(-1, vocab), y.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(3):  # warm-up outside the profiler: cuBLAS handles, autotuning
        step()
    if cuda:
        torch.cuda.synchronize()
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(
        activities=acts,
        schedule=schedule(wait=1, warmup=1, active=a.steps, repeat=1),
        record_shapes=True,
        with_stack=True,
        with_modules=True,
        with_flops=True,
    ) as prof:
        for _ in range(2 + a.steps):
            step()
            if cuda:
                torch.cuda.synchronize()
            prof.step()
    raw = out / "tinylm_train.json"
    prof.export_chrome_trace(str(raw))
    with raw.open("rb") as f, gzip.open(out / "tinylm_train.json.gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    raw.unlink()
    table = {
        "device": torch.cuda.get_device_name(dev) if cuda else "cpu",
        "torch": torch.__version__,
        "steps": a.steps,
        "by_name": _rows(prof.key_averages(), False),
        "by_shape": _rows(prof.key_averages(group_by_input_shape=True), True),
    }
    (out / "tinylm_train.key_averages.json").write_text(json.dumps(table, indent=1))
    sort = "self_device_time_total" if cuda else "self_cpu_time_total"
    print(prof.key_averages().table(sort_by=sort, row_limit=25))
    return 0


if __name__ == "__main__":
    sys.exit(main())
