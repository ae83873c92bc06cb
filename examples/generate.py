"""An inference loop to try ``gpuviz profile --step-fn`` on: no optimizer, so no step by itself.

    gpuviz profile --step-fn __main__:generate examples/generate.py
    gpuviz profile --step-fn gpt_train:GPT.forward --skip 20 --active 10 examples/generate.py

Each call of ``generate`` answers one request: greedy decoding of ``--new`` tokens from a
GPT-like model (the one of ``gpt_train.py``, untrained). With ``--step-fn __main__:generate``
one step is one request; with ``gpt_train:GPT.forward`` one step is one token.
"""

from __future__ import annotations

import argparse

import torch
from gpt_train import GPT


@torch.inference_mode()
def generate(model: GPT, prompt: torch.Tensor, new: int, seq: int) -> torch.Tensor:
    tokens = prompt
    for _ in range(new):
        logits = model(tokens[:, -seq:])
        tokens = torch.cat([tokens, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return tokens


def main() -> None:
    cuda = torch.cuda.is_available()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if cuda else "cpu")
    p.add_argument("--requests", type=int, default=20)
    p.add_argument("--batch", type=int, default=8 if cuda else 2)
    p.add_argument("--prompt", type=int, default=64 if cuda else 8)
    p.add_argument("--new", type=int, default=32 if cuda else 8)
    p.add_argument("--dim", type=int, default=512 if cuda else 64)
    p.add_argument("--layers", type=int, default=6 if cuda else 2)
    args = p.parse_args()
    device = torch.device(args.device)
    torch.manual_seed(0)
    seq = args.prompt + args.new
    model = GPT(4096, seq, args.dim, args.layers, 8 if cuda else 4).to(device).eval()
    if device.type == "cuda":
        model = model.to(torch.bfloat16)
    for r in range(args.requests):
        prompt = torch.randint(4096, (args.batch, args.prompt), device=device)
        out = generate(model, prompt, args.new, seq)
        if r % 5 == 0:
            print(f"request {r}: {tuple(out.shape)} tokens")


if __name__ == "__main__":
    main()
