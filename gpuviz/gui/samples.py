"""The sample traces that ship with gpuviz (``assets/samples``), for Help → Open sample.

The samples live in the repository's ``assets/samples`` folder, next to the ``gpuviz`` package
(an editable install or a source checkout). A wheel may install them as data files under
``<prefix>/share/gpuviz/samples``. ``GPUVIZ_SAMPLES`` names another folder.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Sample:
    """One sample trace: a menu title, its file (or folder of ranks) and what it shows."""

    title: str
    path: Path
    description: str


# file name -> (menu title, what it shows); menu order
_KNOWN = {
    "streams_overlap.json.gz": (
        "Two CUDA streams and a copy (H200)",
        "matmuls on the default stream vs two side streams, with a pinned H2D copy",
    ),
    "dataparallel_seed_2gpu.json.gz": (
        "DataParallel on 2 GPUs (H200)",
        "the DataParallel tutorial: batches of 30 split 15/15, then 10 as 5/5",
    ),
    "ddp_2rank": ("DistributedDataParallel, 2 ranks (H200)", "NCCL, one trace per rank, merged"),
    "worker_thread.json.gz": (
        "Profile from a worker thread (H200)",
        "torch.profiler started on a non-main Python thread",
    ),
    "bert_small_inference_h100.json.gz": (
        "BERT-small inference (H100)",
        "a small model's inference with allocator memory events",
    ),
    "dataparallel_2gpu_h200.json.gz": (
        "DataParallel on 2 GPUs, recorded by gpuviz (H200)",
        "gpuviz run dataparallel --gpus 2: one epoch, 15/15 three times, then 5/5",
    ),
    "dataparallel_4gpu_h200.json.gz": (
        "DataParallel on 4 GPUs, recorded by gpuviz (H200)",
        "gpuviz run dataparallel --gpus 4: 8,8,8,6 three times, then 3,3,3,1",
    ),
    "ddp_4rank_h200": (
        "DistributedDataParallel, 4 ranks, recorded by gpuviz (H200)",
        "gpuviz run ddp on 4 GPUs (NCCL): one trace per rank, merged",
    ),
    "model_parallel_4gpu_h200.json.gz": (
        "Model parallel over 4 GPUs, recorded by gpuviz (H200)",
        "a Sequential cut into 4 stages, with a micro-batch pipeline",
    ),
    "event_sync_3streams_a100.json.gz": (
        "Three streams with event waits (A100)",
        "cross-stream synchronization through CUDA events",
    ),
}


def samples_dir() -> Path | None:
    """The folder of sample traces, or None when this installation has none."""
    env = os.environ.get("GPUVIZ_SAMPLES")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[2] / "assets" / "samples")
    candidates.append(Path(sys.prefix) / "share" / "gpuviz" / "samples")
    for c in candidates:
        if c.is_dir():
            return c
    return None


def list_samples() -> list[Sample]:
    """The samples that are present, known ones first in menu order, then any others by name."""
    root = samples_dir()
    if root is None:
        return []
    out = [
        Sample(title, root / name, desc)
        for name, (title, desc) in _KNOWN.items()
        if (root / name).exists()
    ]
    for p in sorted(root.iterdir()):
        if p.name not in _KNOWN and (p.name.endswith((".json", ".json.gz")) or p.is_dir()):
            out.append(Sample(p.name, p, ""))
    return out
