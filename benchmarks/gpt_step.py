"""One training step of ``examples/gpt_train.py``'s GPT, for benchmarks that time it themselves.

``window_aftermath.py`` and ``thread_time.py`` step the same model the same way: its GPU shape
(bf16 autocast, fused AdamW) on CUDA, its CPU shape elsewhere, each step synchronized;
``profile_workload.py --kind gpt`` steps it unsynchronized, as ``gpt_train.py`` does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def gpt_train_step(device: str, batches: int = 8) -> Callable[[int], Any]:
    """A function that runs training step ``k`` (on batch ``k % batches``) and returns its loss
    tensor, without waiting for the device (seeded; ``examples/gpt_train.py``'s defaults)."""
    import torch
    import torch.nn.functional as F

    sys.path.insert(0, str(ROOT / "examples"))
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


def gpt_step(device: str, batches: int = 8) -> Callable[[int], None]:
    """A function that runs training step ``k`` (on batch ``k % batches``) and waits for it."""
    import torch

    train = gpt_train_step(device, batches)

    def step(k: int) -> None:
        train(k)
        if device == "cuda":
            torch.cuda.synchronize()

    return step
