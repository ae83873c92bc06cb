"""Shares as text: one rule for every percentage the CLI, the app and the agents print."""

from __future__ import annotations


def pct(x: float) -> str:
    """``12.3%``, or two significant digits below 1% (``0.64%``, ``0.009%``).

    A decode step's MFU of 0.009% is a figure, not zero: ``0.0%`` would read as "no work".
    """
    return f"{100 * x:.1f}%" if abs(x) >= 0.01 or x == 0 else f"{100 * x:.2g}%"
