"""DistributedDataParallel of a small model of nested modules, with gloo, for torchrun under
``gpuviz profile --nproc-per-node 2 --record-shapes``: each rank's trace has nn.Module scopes,
Python stacks and Input Dims, so a rank folder's ``breakdown --by module`` and ``--by op-shape``
have rows on both ranks (issue 51). ``--device cuda``: ranks share GPU LOCAL_RANK % count."""

import os
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


class Block(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.up = nn.Linear(width, 4 * width)
        self.act = nn.GELU()
        self.down = nn.Linear(4 * width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x + self.down(self.act(self.up(x))))


class Net(nn.Module):
    def __init__(self, width: int = 256, depth: int = 2) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(Block(width) for _ in range(depth)))
        self.head = nn.Linear(width, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(x))


dist.init_process_group("gloo")
cuda = "--device" in sys.argv and sys.argv[sys.argv.index("--device") + 1] == "cuda"
device = torch.device("cpu")
if cuda:
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
    torch.cuda.set_device(device)
torch.manual_seed(0)
model = DistributedDataParallel(Net().to(device))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(10):
    x = torch.randn(64, 256, device=device)
    loss = nn.functional.cross_entropy(model(x), torch.randint(0, 10, (64,), device=device))
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"rank {dist.get_rank()} of {dist.get_world_size()} done on {device}")
dist.destroy_process_group()
