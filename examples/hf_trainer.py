"""A Hugging Face ``Trainer`` run of a small GPT-2 built from a config: no weights, no data sets.

    gpuviz profile --stop examples/hf_trainer.py                # needs transformers
    gpuviz breakdown gpuviz-runs/... --by module                # the time per GPT-2 block

The model is ``GPT2LMHeadModel(GPT2Config(...))`` with random weights, trained on random token
sequences, so nothing is downloaded. The framework owns the training loop: a step ends at the
Trainer's own ``optimizer.step()``, and the model's time must land on ``modeling_gpt2.py``'s
lines, not on ``trainer.train()``.
"""

from __future__ import annotations

import argparse

import torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments


class RandomTokens(Dataset):
    """``n`` random sequences of ``seq`` tokens; the labels are the inputs (causal LM)."""

    def __init__(self, n: int, seq: int, vocab: int) -> None:
        g = torch.Generator().manual_seed(0)
        self.data = torch.randint(0, vocab, (n, seq), generator=g)

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return {"input_ids": self.data[i], "labels": self.data[i]}


def main() -> None:
    cuda = torch.cuda.is_available()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--max-steps", type=int, default=30 if cuda else 8)
    p.add_argument("--layers", type=int, default=4 if cuda else 2)
    p.add_argument("--dim", type=int, default=512 if cuda else 64)
    p.add_argument("--seq", type=int, default=256 if cuda else 32)
    p.add_argument("--batch", type=int, default=16 if cuda else 2)
    p.add_argument("--out", default="/tmp/gpuviz-hf-trainer")
    a = p.parse_args()
    vocab = 8192
    config = GPT2Config(
        vocab_size=vocab, n_positions=a.seq, n_embd=a.dim, n_layer=a.layers, n_head=8
    )
    model = GPT2LMHeadModel(config)
    args = TrainingArguments(
        output_dir=a.out,
        max_steps=a.max_steps,
        per_device_train_batch_size=a.batch,
        learning_rate=3e-4,
        bf16=cuda,
        report_to="none",
        save_strategy="no",
        logging_steps=10,
        dataloader_num_workers=0,
    )
    data = RandomTokens(a.batch * a.max_steps, a.seq, vocab)
    Trainer(model=model, args=args, train_dataset=data).train()


if __name__ == "__main__":
    main()
