"""A rank folder's ``--by module`` table from its ranks' parts (``breakdown DIR --by module
--cluster``, issue 51), as the folder read whole gives it, to the last digit.

A module row's calls, host and device times are sums over its frames, and every frame is one
rank's: :func:`gpuviz.analysis.breakdown_parts.merge_breakdown` sums them by path as it sums
op rows. Its FLOPs and MFU (:mod:`gpuviz.analysis.module_flops`) are joined from its calls
through the attribution: each rank keeps, per row, the FLOPs per precision of the calls it
holds and how many calls of known FLOPs those are (:class:`~gpuviz.analysis.module_flops.RowFlops`,
made by :func:`~gpuviz.analysis.module_flops.row_flops` on the rank's own trace), and the
folder's rows are filled from their sums by :func:`~gpuviz.analysis.module_flops.fill_row`,
the code that fills them for the folder read whole. So:

- FLOPs: every FLOP count is a whole number (each formula's and Kineto's), and a row's FLOPs
  are summed exactly, as ints, in the folder read whole as in each rank
  (``exact_sums.parts``: a float64 sum would depend on the order of its terms past 2**53,
  about 9 PFLOP, which a 1,000-rank job passes). So the folder's are the ranks' sums, at any
  size. Where some count is not a whole number (no formula gives one today) both are float64
  sums, and the merge declines (:attr:`ModuleFlopsPart.exact`).
- MFU: each precision's FLOPs over its own peak, over the row's device time: the same formula
  on the same exact sums. The peaks are the folder's (its first file's with
  ``deviceProperties``); where the ranks' differ the merge declines, as the step table's does.
- notes: a row is unknown for ``NO_FORMULA`` only where no rank holds a call of known FLOPs
  in it, and every row is ``NO_SHAPES`` only where no rank has a call of known FLOPs at all.
- the peaks line and stderr: the precisions the steps do FLOPs in (each rank's steps), one
  counted shape (whether a missing peak is worth a line) and the calls skipped or flagged,
  their counts summed (:func:`gpuviz.analysis.op_calls.sum_call_warnings`).

Declined (the caller reads the folder whole): graph launches in a rank (a replay's kernels
and FLOPs are placed through its capture: ``GRAPH_FLOPS`` rows), a server's steps, and a
compiled model's row whose FLOPs are of three precisions or more (the whole trace sums their
time at peak in the order its kernels come, which the ranks' parts do not keep; two add up
the same either way round).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from gpuviz.analysis.breakdown_hardware import folder_peaks, keep_hardware
from gpuviz.analysis.breakdown_table import Breakdown
from gpuviz.analysis.hardware import Hardware
from gpuviz.analysis.module_flops import (
    RowFlops,
    exact_flops,
    fill_row,
    row_flops,
    unknown_flops,
)
from gpuviz.analysis.op_calls import sum_call_warnings
from gpuviz.analysis.step_flops import NO_SHAPES

if TYPE_CHECKING:
    from gpuviz.analysis.breakdown_parts import BreakdownPart
    from gpuviz.analysis.peaks import PeakOverride
    from gpuviz.trace.model import Trace


@dataclass
class ModuleFlopsPart:
    """What one rank's module rows' FLOPs are made of.

    Attributes
    ----------
    rows : dict of str to RowFlops
        By row key.
    any_flops : bool
        Some call of the rank has known FLOPs.
    exact : bool
        Its rows' FLOPs are exact ints (every count a whole number:
        :func:`~gpuviz.analysis.module_flops.exact_flops`).
    """

    rows: dict[str, RowFlops] = field(default_factory=dict)
    any_flops: bool = False
    exact: bool = True


def module_part(
    part: BreakdownPart, table: Breakdown, trace: Trace, override: PeakOverride | None
) -> None:
    """Fill ``part`` (a ``module`` table's rows, from ``trace``) with what the folder's FLOPs,
    MFU and peaks line are merged from, or say why it cannot be (``part.unmergeable``)."""
    from gpuviz.analysis.attribution import attribute
    from gpuviz.analysis.hardware import hardware
    from gpuviz.analysis.names import graph_launch_mask
    from gpuviz.analysis.serving_steps import is_serving
    from gpuviz.analysis.steps import find_steps

    if graph_launch_mask(trace.symbols)[trace.slices.name].any():
        part.unmergeable = "graph launches (their FLOPs are placed through the capture)"
        return
    steps = find_steps(trace)
    if is_serving(steps):
        part.unmergeable = "serving steps (their phases are made over all ranks)"
        return
    hw = hardware(trace, override, steps)
    keep_hardware(part, hw)
    part.modules = ModuleFlopsPart(
        rows={
            r.key: f
            for r, f in zip(table.rows, row_flops(table, hw, attribute(trace)), strict=True)
        },
        any_flops=bool(np.isfinite(hw.calls.flops).any()),
        exact=exact_flops(hw.calls),
    )


def merge_module_flops(table: Breakdown, parts: Sequence[BreakdownPart]) -> Hardware | str:
    """Fill the folder's module rows (``table``, summed from ``parts``) with their FLOPs and
    MFU, as :func:`~gpuviz.analysis.module_flops.annotate_modules` fills the folder read
    whole's.

    Returns
    -------
    Hardware or str
        The folder's peaks, its steps' figures (for the precisions the peaks line names), one
        counted shape and the FLOP warnings; or why the ranks' FLOPs cannot be merged exactly.
    """
    peaks = folder_peaks(parts)
    if isinstance(peaks, str):
        return peaks
    mods = [p.modules for p in parts if p.modules is not None]
    if len(mods) != len(parts):
        return "a rank's module FLOPs are missing"
    if not all(m.exact for m in mods):
        return "FLOP counts that are not whole numbers (their float64 sums depend on order)"
    warnings = sum_call_warnings([p.flop_warnings for p in parts])
    if warnings is None:
        return "FLOP warnings of several kinds (their order is the whole trace's)"
    hw = Hardware(
        peaks,
        [s for p in parts for s in p.counted][:1],
        [f for p in parts for f in p.step_figures],  # the peaks line reads their precisions
        warnings=warnings,
    )
    if not any(m.any_flops for m in mods):
        for row in table.rows:
            unknown_flops(row, NO_SHAPES)  # shapes left out on import: the part declined
        return hw
    for row in table.rows:
        f = _sum([m.rows[row.key] for m in mods if row.key in m.rows])
        if isinstance(f, str):
            return f"{row.key!r}: {f}"
        fill_row(row, f, peaks.peaks)
    return hw


def _sum(rows: list[RowFlops]) -> RowFlops | str:
    """One row's FLOPs over the ranks that have it; why not, where they cannot be summed."""
    known = {f.known is None for f in rows}
    if len(known) > 1 or len({f.compiled for f in rows}) > 1:
        return "its FLOPs are counted differently on different ranks"
    by: dict[str, int] = {}
    for f in rows:
        for p, v in f.by.items():
            by[p] = by.get(p, 0) + int(v)  # exact ints (merge_module_flops declined floats)
    if rows[0].compiled and len(by) > 2:
        # Two floats add the same either way round; three or more in the order they come.
        return "a compiled row's FLOPs of three precisions or more"
    # The whole trace lists a row's precisions sorted (module_flops.node_flops).
    ordered = by if rows[0].compiled else {p: by[p] for p in sorted(by)}
    n = None if rows[0].known is None else sum(f.known or 0 for f in rows)
    return RowFlops(ordered, n, rows[0].compiled)


__all__ = ["ModuleFlopsPart", "merge_module_flops", "module_part"]
