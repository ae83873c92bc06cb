"""DataParallel's batch split, as arithmetic (no torch): the planner and the Splits what-if."""

from __future__ import annotations

MAX_GPUS = 120
"""The most devices DataParallel can scatter over: one process sees at most
``C10_COMPILE_TIME_MAX_GPUS`` (120) CUDA devices in torch. A plan is a list per GPU: an
unbounded count (``--gpus 100000000``) took 80 s and 8 GB to refuse nothing."""
MAX_BATCH = (1 << 63) - 1
"""The most rows a batch can have: a tensor's dim 0 is an int64."""


def plan_split(batch: int, gpus: int) -> list[int]:
    """Rows per GPU when DataParallel scatters ``batch`` rows over ``gpus`` devices.

    DataParallel scatters with ``Tensor.chunk(gpus, dim=0)``: chunks of ``ceil(batch / gpus)``
    rows, the last one smaller, and fewer than ``gpus`` chunks when they run out. GPUs past
    the last chunk get nothing and are listed with 0.

    Parameters
    ----------
    batch : int
        Rows in the batch (dim 0), 0 to :data:`MAX_BATCH`.
    gpus : int
        Devices, 1 to :data:`MAX_GPUS`.

    Returns
    -------
    list of int
        One count per GPU, in device order.

    Raises
    ------
    ValueError
        ``batch`` or ``gpus`` is out of its range (the message names which).

    Examples
    --------
    >>> plan_split(30, 8)
    [4, 4, 4, 4, 4, 4, 4, 2]
    >>> plan_split(10, 8)
    [2, 2, 2, 2, 2, 0, 0, 0]
    """
    why = split_input_error(batch, gpus)
    if why is not None:
        raise ValueError(why)
    size = -(-batch // gpus)  # ceil
    rows = []
    left = batch
    for _ in range(gpus):
        take = min(size, left)
        rows.append(take)
        left -= take
    return rows


def split_input_error(batch: int, gpus: int) -> str | None:
    """What is wrong with a batch and a GPU count for :func:`plan_split` (None: nothing).

    The message names the value as the CLI's options do (``--gpus 100000000: ...``).
    """
    if gpus < 1:
        return f"--gpus {gpus}: must be 1 or more"
    if gpus > MAX_GPUS:
        return (
            f"--gpus {gpus}: more than {MAX_GPUS}, the most CUDA devices one process "
            "(and so DataParallel) can use"
        )
    if batch < 0:
        return f"--batch {batch}: must be 0 or more"
    if batch > MAX_BATCH:
        return f"--batch {batch}: more than {MAX_BATCH:,} rows (a tensor's dim 0 is an int64)"
    return None
