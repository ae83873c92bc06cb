"""The rows every breakdown table is made of (ops, modules, source lines, kernels, steps).

A :class:`Breakdown` is a list of :class:`BreakdownRow` plus, for each kernel of the trace,
the row it counts towards (``kernel_row``), so that a view can outline a row's kernels on the
Timeline without computing anything again. Times are int nanoseconds here, like the trace's
columns; :meth:`BreakdownRow.to_json` gives the CLI's microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]

#: The ``--by`` values, in the order the CLI lists them.
BY_VALUES = ("op", "op-shape", "module", "line", "kernel", "step")


@dataclass
class BreakdownRow:
    """One row: an op name, an op with its input shapes, a module path, a ``file:line``, a
    kernel name or a step.

    Attributes
    ----------
    key : str
        What the row is (see ``Breakdown.by``).
    calls : int
        Op calls, module calls, frames of the line, kernel launches, or 1 for a step.
    cpu_self_ns, cpu_total_ns : int
        Host time inside the row's ranges, without and with its children (op children for
        ops, child modules for modules, deeper lines for lines); 0 for kernels.
    device_self_ns, device_total_ns : int
        Time of the kernels, copies and sets the row launched itself, and with those of its
        children.
    forward_device_ns, backward_device_ns, other_device_ns : int or None
        Modules and lines: ``device_total_ns`` split into forward, backward (backward kernels
        counted where their forward op ran) and other (outside every module's forward and
        backward: the optimizer step, ``zero_grad``, a loss outside a module, copies).
    input_shapes, input_types : list or None
        Op-shape rows: Kineto's ``Input Dims`` and ``Input type``.
    flops : int or None
        Ops: summed floating-point operations (Kineto's ``flops`` arg, else a formula from the
        shapes where one is known), None where unknown.
    duration_ns : int or None
        Steps: the step's wall time.
    kind : str
        ``"op"``, ``"annotation"`` (a ``record_function`` range), ``"module"``, ``"outside"``
        (time outside any module: optimizer, loss, ``zero_grad``...), ``"line"``,
        ``"kernel"`` or ``"step"``.
    extra : dict
        Other figures of the row's kind (e.g. a step's ``rank``).
    flops_exact : bool
        Ops: :attr:`flops` is the exact int sum of whole-number counts
        (:mod:`gpuviz.analysis.exact_sums`), at any size. False where a call's count is not a
        whole number (Kineto's ``flops`` of 1.5 or 1e308): a float64 sum made int, so a rank
        folder's sum of its ranks' need not be it (the merge declines). Not printed.
    """

    key: str
    calls: int
    cpu_self_ns: int
    cpu_total_ns: int
    device_self_ns: int
    device_total_ns: int
    kind: str = "op"
    forward_device_ns: int | None = None
    backward_device_ns: int | None = None
    other_device_ns: int | None = None
    input_shapes: list[Any] | None = None
    input_types: list[Any] | None = None
    flops: int | None = None
    duration_ns: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    flops_exact: bool = True

    @property
    def sane_flops(self) -> int | None:
        """:attr:`flops`, or None where it is more than its calls can do (Kineto's ``flops``
        of 1e308 has been seen: past :data:`~gpuviz.analysis.op_args.MAX_CALL_FLOPS` a call)."""
        from gpuviz.analysis.op_args import MAX_CALL_FLOPS

        if self.flops is None or not 0 <= self.flops <= MAX_CALL_FLOPS * max(self.calls, 1):
            return None
        return self.flops

    def to_json(self, by: str) -> dict[str, Any]:
        """The row as ``gpuviz breakdown --json`` prints it (times in µs)."""
        out: dict[str, Any] = {
            "key": self.key,
            "kind": self.kind,
            "calls": self.calls,
            "cpu_self_us": _us(self.cpu_self_ns),
            "cpu_total_us": _us(self.cpu_total_ns),
            "device_self_us": _us(self.device_self_ns),
            "device_total_us": _us(self.device_total_ns),
        }
        if by == "op-shape":
            out["input_shapes"] = self.input_shapes
            out["input_types"] = self.input_types
        if by in ("op", "op-shape"):
            out["flops"] = self.sane_flops
            if self.flops is not None and self.sane_flops is None:
                out["inconsistent"] = True
                out["flops_note"] = "inconsistent: a recorded FLOP count no op does"
        if by in ("module", "line"):
            out["forward_device_us"] = _us(self.forward_device_ns or 0)
            out["backward_device_us"] = _us(self.backward_device_ns or 0)
            out["other_device_us"] = (
                None if self.other_device_ns is None else _us(self.other_device_ns)
            )
        if by == "step":
            out["duration_us"] = _us(self.duration_ns or 0)
        out.update(self.extra)
        return out


def empty_row(
    key: str, kind: str, phases: bool = True, extra: dict[str, Any] | None = None
) -> BreakdownRow:
    """A row with no calls and no time yet, for a table to fill in (rows that merges and
    refinements add).

    Parameters
    ----------
    key, kind : str
    phases : bool
        The table splits device time by phase (module and line tables): forward, backward
        and other device time start at 0; elsewhere they are None.
    extra : dict, optional
        The row's extra columns.
    """
    zero = 0 if phases else None
    return BreakdownRow(
        key=key,
        calls=0,
        cpu_self_ns=0,
        cpu_total_ns=0,
        device_self_ns=0,
        device_total_ns=0,
        kind=kind,
        forward_device_ns=zero,
        backward_device_ns=zero,
        other_device_ns=zero,
        extra=dict(extra or {}),
    )


@dataclass
class Breakdown:
    """A breakdown table of one trace.

    Attributes
    ----------
    by : str
        One of :data:`BY_VALUES`.
    rows : list of BreakdownRow
        Largest ``device_total_ns`` first (lines: largest ``device_self_ns``).
    kernel_rows : int64
        The trace's kernel, copy and set slice rows (``Attribution.gpu_rows``).
    kernel_row : int64
        For each of them, the index in ``rows`` it counts towards as *self* time (its op,
        innermost module, innermost line...), -1 for none.
    unattributed_device_ns : int
        Device time of kernels counted in no row (no launch in the trace, or launched outside
        any op).
    """

    by: str
    rows: list[BreakdownRow]
    kernel_rows: I64
    kernel_row: I64
    unattributed_device_ns: int = 0

    def kernels_of(self, index: int) -> I64:
        """The slice rows of the kernels that row ``index`` launched itself."""
        return self.kernel_rows[self.kernel_row == index]

    def sorted(self, by_self: bool = False) -> Breakdown:
        """The same table, largest device total first (then CPU total, then key); with
        ``by_self``, largest device self time first (lines: the innermost line that launched
        the kernels, not the ``main()`` around everything)."""
        order = sorted(
            range(len(self.rows)),
            key=lambda i: (
                -(self.rows[i].device_self_ns if by_self else 0),
                -self.rows[i].device_total_ns,
                -self.rows[i].cpu_total_ns,
                self.rows[i].key,
            ),
        )
        remap = np.full(len(self.rows) + 1, -1, dtype=np.int64)
        remap[np.asarray(order, dtype=np.int64)] = np.arange(len(order))
        return Breakdown(
            by=self.by,
            rows=[self.rows[i] for i in order],
            kernel_rows=self.kernel_rows,
            kernel_row=remap[self.kernel_row],  # -1 stays -1 (remap[-1] is the spare slot)
            unattributed_device_ns=self.unattributed_device_ns,
        )


def _us(ns: float) -> float:
    return round(float(ns) / 1000.0, 3)
