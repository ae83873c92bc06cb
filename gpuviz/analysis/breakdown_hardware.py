"""What a rank's breakdown part keeps of its hardware figures, and the peaks of a folder of
them (:mod:`gpuviz.analysis.breakdown_parts`: the step and module tables' FLOPs and MFU)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from gpuviz.analysis.hardware import Hardware
from gpuviz.analysis.peaks import PeakMatch

if TYPE_CHECKING:
    from gpuviz.analysis.breakdown_parts import BreakdownPart

_EMPTY = np.zeros(0, dtype=np.int64)


def keep_hardware(part: BreakdownPart, hw: Hardware) -> None:
    """Keep of a rank's hardware figures what the folder's report needs: its peaks, its
    steps' figures, one counted shape (its kernels left out) and its FLOP warnings."""
    part.peaks = hw.peaks
    part.step_figures = hw.steps
    part.counted = [dataclasses.replace(s, kernels=_EMPTY) for s in hw.shapes[:1]]
    part.flop_warnings = hw.warnings


def folder_peaks(parts: Sequence[BreakdownPart]) -> PeakMatch | str:
    """The peaks a folder's FLOPs count against (those of its first file with
    ``deviceProperties``, as :func:`gpuviz.analysis.hardware.hardware` takes them), or why
    the ranks' figures cannot be merged: they counted against different peaks."""
    peaks = next((p.peaks for p in parts if p.device_properties), parts[0].peaks)
    if peaks is None or any(p.peaks != peaks for p in parts):
        return "the ranks' devices have different peaks"
    return peaks


__all__ = ["folder_peaks", "keep_hardware"]
