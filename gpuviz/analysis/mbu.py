"""Model bandwidth utilization (MBU) of serving steps: the bytes a step must read over what
the GPU's memory could read in the step's time.

A decode step reads every weight of the layers it runs and the KV cache of its requests, and
computes little with them: it is bound by memory, not by FLOPs, and MFU says nothing of how
close it is to its limit. MBU = bytes that must be read / (step time × peak bandwidth).

The bytes are counted from the ops' recorded shapes and dtypes (``record_shapes=True``):

- each GEMM (``aten::mm``, ``addmm``, ``bmm``, ``_scaled_mm``, …; :data:`gpuviz.analysis.op_args.GEMMS`)
  reads its right operand: a weight, or, in eager attention, the cached keys or values;
- each attention op (SDPA and its flash/efficient/cuDNN forms, the outermost of a nest) reads
  its keys and values (the KV cache).

Activations are left out: so the count is a floor of what the step must read, and MBU a lower
bound (``mbu_is_lower_bound``). Ops of a graph replay are not in the trace (they were recorded
at capture), nor are a custom kernel library's operands (an mxfp4 MoE GEMM that is no aten op):
where the step holds no counted op the bytes are unknown (None, with the reason), never 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.dtypes import element_bytes
from gpuviz.analysis.names import name_mask
from gpuviz.analysis.op_args import ATTENTION_LEAVES, ATTENTION_PARENTS, GEMMS, shape_of
from gpuviz.analysis.serving_markers import by_rank, cpu_rows, outermost
from gpuviz.analysis.steps import Steps
from gpuviz.trace.arrays import unique
from gpuviz.trace.model import Kind, Trace

I64 = npt.NDArray[np.int64]

_ATTENTION = {**ATTENTION_LEAVES, **ATTENTION_PARENTS}


@dataclass
class StepBytes:
    """Bytes each step must read (one entry per step row).

    Attributes
    ----------
    nbytes : list of int or None
        None where unknown (``why``).
    weight_bytes, kv_bytes : list of int or None
        GEMMs' right operands; attention ops' keys and values.
    ops : list of int
        Ops counted.
    uncounted : list of int
        GEMM or attention ops in the step whose shapes or dtypes were not recorded.
    why : list of str
    """

    nbytes: list[int | None]
    weight_bytes: list[int | None]
    kv_bytes: list[int | None]
    ops: list[int]
    uncounted: list[int]
    why: list[str]


def operand_bytes(dims: object, types: object, i: int) -> int | None:
    """The bytes of operand ``i`` from an op's ``Input Dims`` and ``Input type``, or None."""
    if not isinstance(dims, list) or not isinstance(types, list) or i >= len(types):
        return None
    shape = shape_of(dims, i)
    size = element_bytes(str(types[i])) if isinstance(types[i], str) else None
    if shape is None or size is None:
        return None
    return int(np.prod(shape, dtype=np.int64)) * size


def op_bytes(name: str, args: dict[str, Any]) -> int | None:
    """The bytes a GEMM (its right operand) or an attention op (its keys and values) reads,
    from its ``Input Dims`` and ``Input type``; None where they are not recorded."""
    dims, types = args.get("Input Dims"), args.get("Input type")
    if name in GEMMS:
        return operand_bytes(dims, types, GEMMS[name][1])
    q = _ATTENTION[name].q
    parts = [operand_bytes(dims, types, q + 1), operand_bytes(dims, types, q + 2)]
    return None if any(p is None for p in parts) else sum(p for p in parts if p is not None)


def step_bytes(trace: Trace, steps: Steps) -> StepBytes:
    """The bytes each step must read, from the shapes of the ops in its CPU range.

    Parameters
    ----------
    trace : Trace
    steps : Steps

    Returns
    -------
    StepBytes
    """
    s = trace.slices
    wanted = name_mask(trace.symbols, lambda n: n in GEMMS or n in _ATTENTION)
    rows = by_rank(trace, cpu_rows(trace, Kind.CPU_OP, wanted))
    out = StepBytes([], [], [], [], [], [])
    for i in range(len(steps)):
        r = rows.get(int(steps.rank[i]), np.empty(0, dtype=np.int64))
        lo, hi = np.searchsorted(s.start_ns[r], [steps.cpu_start_ns[i], steps.cpu_end_ns[i]])
        mine = r[lo:hi]
        # The outermost of nested ops (SDPA over its flash kernel's op) on each thread.
        mine = np.concatenate(
            [outermost(trace, mine[s.track[mine] == t]) for t in unique(s.track[mine])]
            or [np.empty(0, dtype=np.int64)]
        )
        weight = kv = counted = missed = 0
        for row in mine.tolist():
            name = trace.symbols[int(s.name[row])]
            got = op_bytes(name, trace.args.get(int(s.args[row])))
            if got is None:
                missed += 1
                continue
            counted += 1
            if name in GEMMS:
                weight += got
            else:
                kv += got
        out.ops.append(counted)
        out.uncounted.append(missed)
        if counted == 0:
            out.nbytes.append(None)
            out.weight_bytes.append(None)
            out.kv_bytes.append(None)
            out.why.append(
                "no GEMM or attention op with shapes in the step (a graph replay records its "
                "ops at capture; record_shapes=True records them)"
            )
            continue
        out.nbytes.append(weight + kv)
        out.weight_bytes.append(weight)
        out.kv_bytes.append(kv)
        out.why.append("")
    return out


def mbu(
    nbytes: int | None, duration_ns: int, bandwidth_tb_s: float | None
) -> tuple[float | None, str]:
    """``nbytes / (duration × bandwidth)``, or None with the reason.

    A share above 1 (more bytes than the memory could move in the time) says the count or the
    peak is wrong: it is reported as inconsistent, not as a figure.
    """
    if nbytes is None:
        return None, "the bytes read are unknown"
    if bandwidth_tb_s is None or bandwidth_tb_s <= 0:
        return None, "the device's peak bandwidth is unknown (--peak-bandwidth gives it)"
    if duration_ns <= 0:
        return None, "the step has no duration"
    share = nbytes / (duration_ns * 1e-9 * bandwidth_tb_s * 1e12)
    if share > 1.0:
        return None, f"inconsistent: {share:.0%} of the peak bandwidth"
    return share, ""
