"""A GPT-like training loop to try ``gpuviz profile`` on: no gpuviz code in it.

    gpuviz profile examples/gpt_train.py                 # small on the CPU, bigger on a GPU
    gpuviz profile --stop examples/gpt_train.py --steps 1000 --layers 12

A decoder-only transformer (token and position embeddings, pre-norm blocks of causal
self-attention and an MLP) learns random token sequences with AdamW; on a GPU it runs in
bfloat16 autocast. ``--times FILE`` writes each step's wall time (the benchmark compares runs
with it); ``--compile`` wraps the model in ``torch.compile``. ``--turns R,W`` is for
``benchmarks/bench_profile.py``: each step waits for a byte on file descriptor R first and
writes one to W when done, so that processes take turns.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab: int, seq: int, dim: int, layers: int, heads: int) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(seq, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def parse_args() -> argparse.Namespace:
    cuda = torch.cuda.is_available()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if cuda else "cpu")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--batch", type=int, default=16 if cuda else 4)
    p.add_argument("--seq", type=int, default=256 if cuda else 32)
    p.add_argument("--dim", type=int, default=512 if cuda else 64)
    p.add_argument("--layers", type=int, default=6 if cuda else 2)
    p.add_argument("--heads", type=int, default=8 if cuda else 4)
    p.add_argument("--vocab", type=int, default=8192 if cuda else 512)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--times", metavar="FILE.json", help="write each step's wall time (ms)")
    p.add_argument("--turns", metavar="R,W", help="take turns (for benchmarks/bench_profile.py)")
    return p.parse_args()


def main() -> None:
    args = parse_args()
    device = torch.device(args.device)
    torch.manual_seed(0)
    model = GPT(args.vocab, args.seq, args.dim, args.layers, args.heads).to(device)
    if args.compile:
        model = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, fused=device.type == "cuda")
    amp = torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.type == "cuda")
    data = torch.randint(args.vocab, (64, args.batch, args.seq + 1), device=device)
    times: list[float] = []
    turns = [int(fd) for fd in args.turns.split(",")] if args.turns else []
    last = time.perf_counter()
    for step in range(args.steps):
        if turns:  # wait for this step's turn; nothing to read: the benchmark is gone
            if not os.read(turns[0], 1):
                return
            last = time.perf_counter()
        batch = data[step % len(data)]
        with amp:
            logits = model(batch[:, :-1])
            loss = F.cross_entropy(logits.flatten(0, 1).float(), batch[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0 or step == args.steps - 1:
            print(f"step {step}: loss {loss.item():.3f} (random data: ~{math.log(args.vocab):.2f})")
        if turns and device.type == "cuda":
            torch.cuda.synchronize()  # keep this step's GPU work within its turn
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
