"""DataParallel's batch split, as arithmetic (no torch): the planner and the Splits what-if."""

from __future__ import annotations


def plan_split(batch: int, gpus: int) -> list[int]:
    """Rows per GPU when DataParallel scatters ``batch`` rows over ``gpus`` devices.

    DataParallel scatters with ``Tensor.chunk(gpus, dim=0)``: chunks of ``ceil(batch / gpus)``
    rows, the last one smaller, and fewer than ``gpus`` chunks when they run out. GPUs past
    the last chunk get nothing and are listed with 0.

    Parameters
    ----------
    batch : int
        Rows in the batch (dim 0), 0 or more.
    gpus : int
        Devices, 1 or more.

    Returns
    -------
    list of int
        One count per GPU, in device order.

    Examples
    --------
    >>> plan_split(30, 8)
    [4, 4, 4, 4, 4, 4, 4, 2]
    >>> plan_split(10, 8)
    [2, 2, 2, 2, 2, 0, 0, 0]
    """
    if gpus < 1:
        raise ValueError(f"gpus must be 1 or more, got {gpus}")
    if batch < 0:
        raise ValueError(f"batch must be 0 or more, got {batch}")
    size = -(-batch // gpus)  # ceil
    rows = []
    left = batch
    for _ in range(gpus):
        take = min(size, left)
        rows.append(take)
        left -= take
    return rows
