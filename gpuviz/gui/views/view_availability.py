"""Which views of a trace have something to show, and why the others have not. No Qt.

A tab with nothing for the trace (Splits without DataParallel, Memory without memory events,
Ranks of one process, the code views of an allocator snapshot) is disabled with one line that
says why, instead of opening on an empty page.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuviz.trace.model import GPU_ACTIVITY_KINDS, Kind

SNAPSHOT_VIEWS = ("memory",)
"""The views of an allocator snapshot opened alone (it has no timeline, ops or kernels)."""


def unavailable_views(analyses: Any) -> dict[str, str]:
    """View name -> why it has nothing for this trace (views not named have something).

    Parameters
    ----------
    analyses : TraceAnalyses

    Returns
    -------
    dict of str to str
        One line per disabled view.
    """
    from gpuviz.gui.view_names import VIEWS

    if getattr(analyses, "snapshot_only", False):
        why = "an allocator snapshot holds memory only: no timeline, ops or kernels"
        return {v: why for v in VIEWS if v not in SNAPSHOT_VIEWS}
    reduced = getattr(analyses, "reduced", None)
    if reduced is not None:
        why = (
            f"opened from the reductions of {len(reduced.sources)} ranks, without their "
            "events: open a rank from the Ranks view (click a cell, or Open rank)"
        )
        return {v: why for v in VIEWS if v != "ranks"}
    trace = analyses.trace
    kind = np.asarray(trace.slices.kind)
    out: dict[str, str] = {}
    errors = analyses.errors
    if analyses.splits is not None and not analyses.splits and "splits" not in errors:
        out["splits"] = (
            "no DataParallel steps in this trace (the split planner: gpuviz split --help)"
        )
    if not len(trace.memory) and not analyses.snapshots and "memory" not in errors:
        out["memory"] = "no memory events: record with profile_memory=True"
    if len(trace.ranks) < 2 and "ranks" not in errors:
        out["ranks"] = "one process: open a folder of per-rank traces to compare ranks"
    if not np.isin(kind, GPU_ACTIVITY_KINDS).any():
        out["kernels"] = "no GPU kernels, copies or sets in this trace"
        out["roofline"] = "no GPU kernels in this trace"
    if not (kind == Kind.CPU_OP).any():
        out["operators"] = "no ops (cpu_op events) in this trace"
    if not (kind == Kind.PYTHON_FUNCTION).any():
        why = "no Python stacks: record with with_stack=True"
        out["modules"] = why
        out["source"] = why
    return out
