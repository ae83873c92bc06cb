"""Rank folders for the by-rank advisor's tests: the recorded ones of tests/data, and jobs
made of single-rank recordings (each file given a ``distributedInfo`` rank and a place on
one clock) written to a test's tmp_path."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[2] / "data"

RANK_FOLDERS = (
    "ddp_2rank",
    "gloo_2rank_h100",
    "gloo_4rank_cpu",
    "nccl_2rank_h200",
    "ddp_nccl_4rank",
    "gloo_2rank_straggler_h100",
    "whatif/gpu/gloo_even",
    "whatif/gpu/gloo_slow",
    "whatif/cpu_gloo/slow",
    "whatif/cpu_gloo/even",
)
"""Every rank folder of tests/data (one job, one file per rank)."""

T0_NS = 1_790_000_000_000_000_000


def read(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rt") if path.suffix == ".gz" else open(path) as f:
        doc: dict[str, Any] = json.load(f)
    return doc


def write(doc: dict[str, Any], path: Path) -> Path:
    with gzip.open(path, "wt") as f:
        json.dump(doc, f)
    return path


def make_job(folder: Path, files: list[Path], shift_ns: list[int], declare: bool = True) -> Path:
    """``folder`` holding ``files`` as ranks 0, 1, ... of one job: rank i's first event at
    ``T0_NS + shift_ns[i]`` (its ``baseTimeNanoseconds`` moved), declaring its rank where
    ``declare`` (else no ``distributedInfo.rank``: the folder numbers files in name order)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, (src, shift) in enumerate(zip(files, shift_ns, strict=True)):
        doc = read(src)
        first_us = min(float(e["ts"]) for e in doc["traceEvents"] if "ts" in e)
        doc["baseTimeNanoseconds"] = T0_NS + shift - round(first_us * 1000)
        info = {"backend": "nccl", "world_size": len(files)}
        if declare:
            info["rank"] = i
        doc["distributedInfo"] = info
        write(doc, folder / f"rank{i}.json.gz")
    return folder


def copies_job(folder: Path, files: list[Path], n: int) -> Path:
    """``folder`` holding ``n`` ranks, rank i a copy of ``files[i % len(files)]`` (its clock
    as recorded) declaring rank i of ``n``: a job past the replay's 16 ranks from small
    recordings."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        doc = read(files[i % len(files)])
        doc["distributedInfo"] = dict(doc["distributedInfo"], rank=i, world_size=n)
        write(doc, folder / f"rank{i}.json.gz")
    return folder


def warned_job(folder: Path, bad: list[int], names: list[str] | None = None) -> Path:
    """``folder`` holding adv_clean and adv_fp32_matmul as ranks 0 and 1 of one job, rank i's
    file with ``bad[i]`` entries the importer skips (numbers, not event objects: one warning
    each), written under ``names`` (so file order may differ from rank order), else
    ``rank0.json.gz``, ``rank1.json.gz``."""
    adv = DATA / "advisor"
    make_job(folder, [adv / "adv_clean.json.gz", adv / "adv_fp32_matmul.json.gz"], [0, 1000])
    docs = [read(folder / f"rank{i}.json.gz") for i in range(2)]
    for i, doc in enumerate(docs):
        doc["traceEvents"] += list(range(bad[i]))
        (folder / f"rank{i}.json.gz").unlink()
    for i, doc in enumerate(docs):
        write(doc, folder / (names[i] if names else f"rank{i}.json.gz"))
    return folder
