"""DistributedDataParallel with gloo, for torchrun: on the CPU, or with --device cuda on the GPUs
(ranks share GPU LOCAL_RANK % count, so 2 ranks run on one GPU)."""

import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("gloo")
cuda = "--device" in sys.argv and sys.argv[sys.argv.index("--device") + 1] == "cuda"
device = torch.device("cpu")
if cuda:
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
    torch.cuda.set_device(device)
torch.manual_seed(0)
model = DistributedDataParallel(torch.nn.Linear(16, 4).to(device))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(10):
    loss = model(torch.randn(8, 16, device=device)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"rank {dist.get_rank()} of {dist.get_world_size()} done on {device}")
dist.destroy_process_group()
