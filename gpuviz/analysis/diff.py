"""Kernel, op and module diff of two traces: count and total time per name, deltas, new and gone
names.

Like HTA's TraceDiff, but by exact name over whole traces: for each kernel name and each
PyTorch op name, how often it ran and for how long in trace A and in trace B; for each op, the
device time it launched itself (``op_device``); and where both traces have Python stacks, for
each module path (and each row outside modules) its calls and the device time its own code
launched, forward and backward (``module``: self time, so the deltas of nested modules do not
count the same kernels twice). Ops and modules come from :mod:`gpuviz.analysis.attribution`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuviz.analysis.names import is_pytorch_op, name_mask
from gpuviz.trace.model import Kind, Trace

WHAT = ("kernel", "op", "op_device", "module")


@dataclass(frozen=True)
class NameDiff:
    """One name's figures in two traces.

    Attributes
    ----------
    what : str
        ``kernel``, ``op`` (host time of the op), ``op_device`` (device time the op launched
        itself) or ``module`` (device self time of a module path, or of a row outside modules).
    name : str
    count_a, count_b : int
        How often it ran in A and in B (0 where it did not).
    total_a_ns, total_b_ns : int
        Its summed durations in A and in B.
    """

    what: str
    name: str
    count_a: int
    count_b: int
    total_a_ns: int
    total_b_ns: int

    @property
    def delta_ns(self) -> int:
        """``total_b_ns - total_a_ns``."""
        return self.total_b_ns - self.total_a_ns

    @property
    def status(self) -> str:
        """``new`` (only in B), ``gone`` (only in A) or ``both``."""
        if self.count_a == 0:
            return "new"
        if self.count_b == 0:
            return "gone"
        return "both"

    def to_json(self) -> dict[str, Any]:
        """``{what, name, status, count_a, count_b, total_a_us, total_b_us, delta_us}``."""
        return {
            "what": self.what,
            "name": self.name,
            "status": self.status,
            "count_a": self.count_a,
            "count_b": self.count_b,
            "total_a_us": self.total_a_ns / 1000.0,
            "total_b_us": self.total_b_ns / 1000.0,
            "delta_us": self.delta_ns / 1000.0,
        }


def name_totals(trace: Trace, what: str) -> dict[str, tuple[int, int]]:
    """Name -> (count, total ns) of the trace's kernels, PyTorch ops (host time), ops (device
    self time) or modules (device self time); ``{}`` for modules of a trace without stacks."""
    if what in ("op_device", "module"):
        return _attributed_totals(trace, what)
    s = trace.slices
    if what == "kernel":
        rows = np.flatnonzero(s.kind == Kind.KERNEL)
    elif what == "op":
        rows = np.flatnonzero(s.kind == Kind.CPU_OP)
        rows = rows[name_mask(trace.symbols, is_pytorch_op)[s.name[rows]]]
    else:
        raise ValueError(f"what must be one of {WHAT}, not {what!r}")
    ids, inverse = np.unique(s.name[rows], return_inverse=True)
    count = np.bincount(inverse, minlength=len(ids))
    total = np.zeros(len(ids), dtype=np.int64)
    np.add.at(total, inverse, s.dur_ns[rows])
    names = trace.symbols.lookup(ids)
    return {n: (int(c), int(t)) for n, c, t in zip(names, count, total)}


def _attributed_totals(trace: Trace, what: str) -> dict[str, tuple[int, int]]:
    from gpuviz.analysis.attribution import attribute
    from gpuviz.analysis.modules import module_table
    from gpuviz.analysis.op_table import op_table

    att = attribute(trace)
    if what == "module":
        if not att.has_stacks():
            return {}
        rows = module_table(att).rows
    else:
        rows = [r for r in op_table(att, flops_fn=None).rows if r.kind == "op"]
    return {r.key: (r.calls, r.device_self_ns) for r in rows if r.device_self_ns or r.calls}


def trace_diff(a: Trace, b: Trace) -> list[NameDiff]:
    """Every kernel and op name of either trace, largest absolute time change first.

    Parameters
    ----------
    a, b : Trace
        The baseline and the compared trace.

    Returns
    -------
    list of NameDiff
    """
    return diff_of_totals(
        {what: name_totals(a, what) for what in WHAT}, {what: name_totals(b, what) for what in WHAT}
    )


Totals = dict[str, dict[str, tuple[int, int]]]
"""Per ``what`` of :data:`WHAT`: name -> (count, total ns), as :func:`name_totals` gives them."""


def diff_of_totals(a: Totals, b: Totals) -> list[NameDiff]:
    """:func:`trace_diff` from each trace's :func:`name_totals` of every ``what`` (a rank
    folder's may be summed from its ranks': :mod:`gpuviz.analysis.compare_parts`)."""
    out = []
    for what in WHAT:
        ta, tb = a.get(what, {}), b.get(what, {})
        if what == "module" and not (ta and tb):
            continue  # one side has no Python stacks: its modules are unknown, not gone
        for name in set(ta) | set(tb):
            ca, na = ta.get(name, (0, 0))
            cb, nb = tb.get(name, (0, 0))
            out.append(NameDiff(what, name, ca, cb, na, nb))
    out.sort(key=lambda d: (-abs(d.delta_ns), d.what, d.name))
    return out
