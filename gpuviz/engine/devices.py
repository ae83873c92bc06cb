"""Picking the run's device and GPU set from ``--device`` and ``--gpus`` (DESIGN.md)."""

from __future__ import annotations

import re
from typing import Any

from gpuviz.errors import BadInputError


def cuda_count() -> int:
    """Visible CUDA devices (0 on the CPU build or without a driver)."""
    import torch

    try:
        return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
    except Exception:
        return 0


def parse_gpus(text: str, count: int) -> list[int]:
    """``--gpus N`` (the first N) or ``--gpus 0,2,3`` (those), checked against ``count``."""
    t = text.strip()
    if re.fullmatch(r"\d+", t):
        n = int(t)
        if n < 1 or n > count:
            raise BadInputError(f"--gpus {text}: must be from 1 to {count} (GPUs visible: {count})")
        return list(range(n))
    try:
        ids = [int(v) for v in t.split(",") if v.strip()]
    except ValueError:
        raise BadInputError(
            f"--gpus {text}: expected a count (2) or a list of indices (0,2,3)"
        ) from None
    if not ids or len(set(ids)) != len(ids) or any(i < 0 or i >= count for i in ids):
        raise BadInputError(
            f"--gpus {text}: expected distinct indices from 0 to {count - 1} (GPUs visible: {count})"
        )
    return ids


def resolve_devices(
    device: str | None, gpus: str | None, *, multi_gpu: bool = False, workload: str = ""
) -> tuple[Any, list[Any]]:
    """The run's ``torch.device`` and all its devices.

    ``device`` None means ``cuda`` if present, else ``cpu``. A multi-GPU workload on CUDA gets
    the ``--gpus`` set (default: all visible); any other workload gets ``[device]``, and
    ``--gpus`` with one index picks that GPU.

    Raises
    ------
    BadInputError
        An unknown device, a CUDA device that is not there, or a bad ``--gpus``.
    """
    import torch

    count = cuda_count()
    text = (device or ("cuda" if count else "cpu")).strip().lower()
    m = re.fullmatch(r"(cpu|cuda)(?::(\d+))?", text)
    if not m or (m.group(1) == "cpu" and m.group(2) is not None):
        raise BadInputError(f"--device {device}: expected cpu, cuda or cuda:N")
    if m.group(1) == "cpu":
        return torch.device("cpu"), [torch.device("cpu")]
    if count == 0:
        raise BadInputError(
            f"--device {device}: no CUDA GPU here (torch {torch.__version__}); use --device cpu"
        )
    index = int(m.group(2)) if m.group(2) is not None else None
    if index is not None and index >= count:
        raise BadInputError(f"--device {device}: no such GPU (GPUs visible: {count})")
    if multi_gpu:
        ids = parse_gpus(gpus, count) if gpus else list(range(count))
        if index is not None and index not in ids:
            ids = [index, *ids]
        first = index if index is not None else ids[0]
        return torch.device("cuda", first), [torch.device("cuda", i) for i in ids]
    if gpus:
        ids = parse_gpus(gpus, count)
        if len(ids) != 1 and not re.fullmatch(r"1", gpus.strip()):
            raise BadInputError(
                f"--gpus {gpus}: {workload or 'this workload'} uses one GPU; pick it with --device cuda:N"
            )
        if index is None:
            index = ids[0]
    index = index if index is not None else torch.cuda.current_device()
    dev = torch.device("cuda", index)
    return dev, [dev]
