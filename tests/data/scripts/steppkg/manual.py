"""Run with -m steppkg.manual: marks its steps with gpuviz.step()."""

import sys

import torch

import gpuviz

print(f"name {__name__} spec {__spec__.name} argv0 {sys.argv[0]} args {sys.argv[1:]}")
print(f"path0 {sys.path[0]}")
layer = torch.nn.Linear(4, 4)
for _ in range(9):
    layer(torch.randn(2, 4)).sum().backward()
    gpuviz.step()
