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


def calls(trace: Trace, case: str) -> list[list[Op]]:
    """The ops of each profiled call of ``case``, in call order."""
    s, t = trace.slices, trace.tracks
    name_id = trace.symbols.find(f"case:{case}")
    ranges = np.flatnonzero((s.kind == Kind.USER_ANNOTATION) & (s.name == name_id))
    ops = np.flatnonzero(s.kind == Kind.CPU_OP)
    runtime = np.flatnonzero(s.kind == Kind.RUNTIME)
    gpu = np.flatnonzero(trace.gpu_activity_mask())
    launch = trace.launches_of(gpu) if len(gpu) else np.zeros(0, dtype=np.int64)
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
            launches = runtime[
                (s.track[runtime] == s.track[row])
                & (s.start_ns[runtime] >= s.start_ns[row])
                & (s.start_ns[runtime] < end[row])
            ]
            device_ns = int(s.dur_ns[gpu[np.isin(launch, launches)]].sum())
            call.append(
                Op(int(row), trace.name_of(int(row)), args.get("Input Dims", []),
                   args.get("Input type", []), args, device_ns)
            )  # fmt: skip
        out.append(call)
    return out
