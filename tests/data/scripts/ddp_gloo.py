"""DistributedDataParallel on the CPU with gloo: run under torchrun."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("gloo")
torch.manual_seed(0)
model = DistributedDataParallel(torch.nn.Linear(16, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(10):
    loss = model(torch.randn(8, 16)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"rank {dist.get_rank()} of {dist.get_world_size()} done")
dist.destroy_process_group()
