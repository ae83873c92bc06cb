"""Small numpy helpers that the trace model and its views share."""

from __future__ import annotations

import numpy as np


def unique(a: np.ndarray) -> np.ndarray:
    """The sorted distinct values of ``a``.

    Not ``np.unique``: its first plain call imports ``numpy.ma`` (about 90 ms on the app's GUI
    thread, 20 ms of a 100k-kernel import's assembly on a 2-core box).
    """
    a = np.sort(a)
    if len(a) > 1:
        a = a[np.concatenate(([True], a[1:] != a[:-1]))]
    return a
