"""100 optimizer steps that end early at step 8, as argv[1] says."""

import sys
import time

import torch

mode = sys.argv[1]
model = torch.nn.Linear(4, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def fail_here():
    raise ValueError("the script failed at step 8")


for i in range(100):
    model(torch.randn(2, 4)).sum().backward()
    opt.step()
    if i == 8:
        if mode == "exit":
            sys.exit(3)
        if mode == "raise":
            fail_here()
        if mode == "sleep":
            print("waiting for Ctrl-C", flush=True)
            time.sleep(120)
        if mode == "own-profiler":
            prof = torch.profiler.profile()
            prof.start()
if mode == "own-profiler":
    prof.stop()
    print(f"own profiler saw {len(prof.events()) > 0}")
print(f"reached the end ({mode})")
