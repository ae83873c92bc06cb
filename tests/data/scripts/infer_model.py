"""The model of infer.py, in its own module (for --step-fn infer_model:Generator.forward)."""

import torch


class Generator:
    def __init__(self) -> None:
        self.layer = torch.nn.Linear(8, 8)

    def forward(self, x):
        with torch.no_grad():
            for _ in range(3):
                x = self.layer(x)
        return x
