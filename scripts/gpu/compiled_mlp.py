"""A small MLP trained under torch.compile: the script of the GPU check of ``gpuviz profile
--compile-info`` (issue 49). Plain torch; run it under ``gpuviz profile``."""

import torch

dev = "cuda" if torch.cuda.is_available() else "cpu"
model = torch.nn.Sequential(
    torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256), torch.nn.LayerNorm(256)
).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
compiled = torch.compile(model)
for _ in range(8):
    loss = compiled(torch.randn(64, 256, device=dev)).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
