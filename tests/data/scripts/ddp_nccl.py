"""DDP with NCCL on one GPU per rank, for torchrun: an MLP, 30 steps, rank 1 a little slower."""

import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("nccl")
rank = dist.get_rank()
device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
torch.cuda.set_device(device)
torch.manual_seed(0)
model = DistributedDataParallel(
    torch.nn.Sequential(
        torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096)
    ).to(device)
)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(256, 4096, device=device)
for _ in range(30):
    if rank == 1:
        time.sleep(0.01)
    loss = model(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
torch.cuda.synchronize()
print(f"rank {rank} of {dist.get_world_size()} done on {device}")
dist.destroy_process_group()
