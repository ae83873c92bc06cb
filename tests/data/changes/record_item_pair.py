"""Record the CPU pair of tests/data/changes: one training loop, without and with a
``loss.item()`` each step (torch CPU build; ``python record_item_pair.py OUT_DIR``).

``item_before.json.gz``: 6 profiled steps of a Linear(64, 64) + MSE + SGD loop;
``item_after.json.gz``: the same loop, reading ``loss.item()`` once a step. On the CPU
``.item()`` waits for nothing, so gpuviz counts it as a value read to Python, not a sync; the
per-step counts are checked against the loop's own: one more ``aten::item`` a step.
"""

import gzip
import shutil
import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, schedule

out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
torch.manual_seed(0)
for name, read in (("item_before", False), ("item_after", True)):
    model = torch.nn.Linear(64, 64)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 64), torch.randn(32, 64)
    with profile(
        activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=6)
    ) as prof:
        for _ in range(8):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            if read:
                loss.item()
            prof.step()
    raw = out / f"{name}.json"
    prof.export_chrome_trace(str(raw))
    with open(raw, "rb") as src, gzip.open(out / f"{name}.json.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    raw.unlink()
