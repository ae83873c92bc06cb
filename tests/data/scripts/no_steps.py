"""Works for a while with neither an optimizer nor gpuviz.step()."""

import sys
import time

import torch

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
layer = torch.nn.Linear(64, 64)
t0 = time.time()
calls = 0
while time.time() - t0 < seconds:
    layer(torch.randn(8, 64))
    calls += 1
print(f"ran {calls} calls")
