"""A tiny model trained under torch.compile (CPU is enough): two blocks of Linear + gelu and a
head, 6 optimizer steps. Used by tests/engine/test_compile_info.py."""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return x + nn.functional.gelu(self.fc(x))


class Tiny(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d) for _ in range(2)])
        self.head = nn.Linear(d, 4)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x).sum()


model = Tiny()
step = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(6):
    opt.zero_grad()
    step(torch.randn(8, 16)).backward()
    opt.step()
