"""A plain CPU training script: MLP + SGD, a DataLoader with one spawned worker."""

import argparse
import sys

import torch
from torch.utils.data import DataLoader, Dataset


class Pairs(Dataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        g = torch.Generator().manual_seed(i)
        return torch.randn(16, generator=g), torch.randn(1, generator=g)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--skip", type=int, default=0)  # the script's own, not gpuviz's
    args = parser.parse_args()
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    loader = DataLoader(
        Pairs(args.steps * 8), batch_size=8, num_workers=1, multiprocessing_context="spawn"
    )
    done = 0
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        done += 1
    print(f"trained {done} steps; argv {sys.argv[1:]}; name {__name__}")


if __name__ == "__main__":
    main()
