"""A torchvision ResNet training step to try ``gpuviz profile`` on: no gpuviz code in it.

    gpuviz profile examples/resnet_train.py              # ResNet-18, small images on the CPU
    gpuviz profile --memory-snapshot examples/resnet_train.py --model resnet50 --batch 128

Synthetic images and labels, SGD with momentum; on a GPU, channels-last memory and bfloat16
autocast. Needs torchvision.
"""

from __future__ import annotations

import argparse
import sys

import torch
import torch.nn.functional as F


def main() -> int:
    try:
        import torchvision
    except ImportError:
        print("resnet_train.py needs torchvision: pip install torchvision", file=sys.stderr)
        return 2
    cuda = torch.cuda.is_available()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if cuda else "cpu")
    p.add_argument("--model", default="resnet18", help="a torchvision classification model")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch", type=int, default=64 if cuda else 4)
    p.add_argument("--size", type=int, default=224 if cuda else 64, help="image side, pixels")
    args = p.parse_args()
    device = torch.device(args.device)
    model = torchvision.models.get_model(args.model, num_classes=100).to(device)
    if device.type == "cuda":
        model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    amp = torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.type == "cuda")
    images = torch.randn(args.batch, 3, args.size, args.size, device=device)
    if device.type == "cuda":
        images = images.to(memory_format=torch.channels_last)
    labels = torch.randint(100, (args.batch,), device=device)
    model.train()
    for step in range(args.steps):
        with amp:
            loss = F.cross_entropy(model(images), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step}: loss {loss.item():.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
