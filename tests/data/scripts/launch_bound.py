"""A launch-bound training loop on the GPU: each step launches many tiny kernels.

``launch_bound.py [STEPS] [KERNELS]`` (60, 400): a 16x16 Linear and SGD, and KERNELS
element-wise ops on a 256-element tensor before each optimizer step.
"""

import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 60
kernels = int(sys.argv[2]) if len(sys.argv) > 2 else 400
model = torch.nn.Linear(16, 16).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(256, device="cuda")
for _ in range(steps):
    y = x
    for _ in range(kernels):
        y = y * 1.0001
    (model(torch.randn(4, 16, device="cuda")).sum() + y.sum() * 0).backward()
    opt.step()
print(f"stepped {steps}")
