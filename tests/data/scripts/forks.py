"""A script whose work is split across a fork, as argv[1] says (argv[2]: the device, cpu).

- ``fork``: 3 optimizer steps, then ``os.fork()``; parent and child each step 12 more times
  (a child of a CUDA parent steps a CPU model of its own, with gradients it sets itself: CUDA
  does not survive a fork, and torch refuses backward in the child of a process whose autograd
  ran on a GPU, "Unable to handle autograd's threading in combination with fork").
  The child prints ``child stepped 12``, registers an atexit line, and ends with
  ``sys.exit(4)``; the parent waits and exits with the child's status.
- ``loader``: 12 steps fed by a DataLoader with 2 fork-start workers; prints
  ``loader stepped 12``.
"""

import atexit
import os
import sys

import torch

mode = sys.argv[1]
device = sys.argv[2] if len(sys.argv) > 2 else "cpu"
model = torch.nn.Linear(4, 4).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


manual_grads = False


def step(x):
    if manual_grads:
        for p in model.parameters():
            p.grad = torch.ones_like(p)
    else:
        model(x.to(device)).sum().backward()
    opt.step()


if mode == "fork":
    for _ in range(3):
        step(torch.randn(2, 4))
    pid = os.fork()
    if pid == 0 and device != "cpu":
        device, manual_grads = "cpu", True
        model = torch.nn.Linear(4, 4)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(12):
        step(torch.randn(2, 4))
    if pid == 0:
        print("child stepped 12", flush=True)
        atexit.register(print, "child atexit ran")
        sys.exit(4)
    _, status = os.waitpid(pid, 0)
    print(f"parent saw the child end with {os.waitstatus_to_exitcode(status)}", flush=True)
    sys.exit(os.waitstatus_to_exitcode(status))

if mode == "loader":
    data = torch.utils.data.TensorDataset(torch.randn(48, 4))
    loader = torch.utils.data.DataLoader(
        data, batch_size=4, num_workers=2, multiprocessing_context="fork"
    )
    n = 0
    for (x,) in loader:
        step(x)
        n += 1
    print(f"loader stepped {n}")
