"""Write the compile-info test data (tests/data/compile/cpu_tiny) on a CPU: a tiny model of two
blocks (LayerNorm, then Mlp: fc, gelu, proj) and a Linear head, forward and backward under
``torch.compile``, with gpuviz's compile-info settings on.

    python scripts/compile_info_cpu.py OUT_DIR
"""

from __future__ import annotations

import sys

import torch
from torch import nn

from gpuviz.engine.compile_info import enable_compile_info


class Mlp(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.fc = nn.Linear(d, 4 * d)
        self.proj = nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(nn.functional.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.mlp = Mlp(d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.ln(x))


class Tiny(nn.Module):
    def __init__(self, d: int = 32) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([Block(d) for _ in range(2)])
        self.head = nn.Linear(d, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for b in self.blocks:
            x = b(x)
        return self.head(x).relu().sum()


def main(out: str) -> None:
    undo = enable_compile_info(out)
    try:
        model = torch.compile(Tiny())
        model(torch.randn(4, 16, 32)).backward()
    finally:
        undo()


if __name__ == "__main__":
    main(sys.argv[1])
