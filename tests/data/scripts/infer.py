"""An inference loop: no optimizer, so its steps need --step-fn."""

import sys

import torch
from infer_model import Generator


def generate(g, x):
    return g.forward(x)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    g = Generator()
    x = torch.randn(4, 8)
    for _ in range(n):
        generate(g, x)
    print(f"generated {n}")
