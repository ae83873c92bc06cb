"""Reading the cases of ``scripts/gpu/record_roofline.py`` back from its trace (test helper).

Each case ran ``profiled_reps`` times inside a ``case:<name>`` record_function range. A call's
ops are the CPU ops of any thread of the process that start inside that range (CUDA backward
ops run on autograd's device thread, not the caller's). An op's device time is, for now, the
simple correlation the attribution module will replace: the kernels, copies and sets launched
by runtime calls on the op's own thread inside the op's range (its children included).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gpuviz.analysis.flops import COMPOSITE_OPS, composite_flops, op_flops
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import Kind, Trace


@dataclass
class Op:
    row: int
    name: str
    dims: list[Any]
    types: list[Any]
    args: dict[str, Any]
    device_ns: int

    @property
    def flops(self) -> int | None:
        return op_flops(self.name, self.dims, self.types, self.args)

    @property
    def parent_flops(self) -> int | None:
        """The figure torch's profiler would give: at the parent for composites."""
        if self.name in COMPOSITE_OPS:
            return composite_flops(self.name, self.dims, self.args)
        return self.flops


def load(folder: Path) -> tuple[Trace, dict[str, Any]]:
    trace = load_trace(folder / "roofline.json.gz")
    expected = json.loads((folder / "roofline_expected.json").read_text())
    return trace, expected


class Launches:
    """The GPU activity launched inside an op: kernels, copies and sets whose runtime launch
    (same correlation id) lies on the op's thread inside the op's range."""

    def __init__(self, trace: Trace) -> None:
        s = trace.slices
        self.trace = trace
        self.runtime = np.flatnonzero(s.kind == Kind.RUNTIME)
        self.gpu = np.flatnonzero(trace.gpu_activity_mask())
        self.launch = trace.launches_of(self.gpu) if len(self.gpu) else np.zeros(0, dtype=np.int64)

    def of(self, row: int) -> np.ndarray:
        """The GPU rows launched by op ``row`` (its children included)."""
        s = self.trace.slices
        rt = self.runtime
        inside = rt[
            (s.track[rt] == s.track[row])
            & (s.start_ns[rt] >= s.start_ns[row])
            & (s.start_ns[rt] < s.start_ns[row] + s.dur_ns[row])
        ]
        return self.gpu[np.isin(self.launch, inside)]


def calls(trace: Trace, case: str) -> list[list[Op]]:
    """The ops of each profiled call of ``case``, in call order."""
    s, t = trace.slices, trace.tracks
    name_id = trace.symbols.find(f"case:{case}")
    ranges = np.flatnonzero((s.kind == Kind.USER_ANNOTATION) & (s.name == name_id))
    ops = np.flatnonzero(s.kind == Kind.CPU_OP)
    launches = Launches(trace)
    end = s.start_ns + s.dur_ns
    out = []
    for r in ranges[np.argsort(s.start_ns[ranges])]:
        pid = t.pid[s.track[r]]
        inside = ops[
            (t.pid[s.track[ops]] == pid)
            & (s.start_ns[ops] >= s.start_ns[r])
            & (s.start_ns[ops] < end[r])
        ]
        call = []
        for row in inside:
            args = trace.args.get(int(s.args[row]))
            device_ns = int(s.dur_ns[launches.of(int(row))].sum())
            call.append(
                Op(int(row), trace.name_of(int(row)), args.get("Input Dims", []),
                   args.get("Input type", []), args, device_ns)
            )  # fmt: skip
        out.append(call)
    return out
