"""gpuviz's FLOPs of a recorded trace against torch's own counters (issue 47, item 3).

A small model (a strided conv, a Linear, a bmm, an add and a mul) runs forward and backward
on the CPU twice: once under ``torch.utils.flop_counter.FlopCounterMode`` (conv forward and
backward, mm, addmm, bmm) and once under ``torch.profiler`` with ``record_shapes`` and
``with_flops`` (whose ``key_averages`` counts ``aten::add``/``aten::mul``, one FLOP an output
element). gpuviz reads the exported trace and must find the same figures, op by op.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpuviz.analysis.op_args import ELEMENTWISE_FLOPS
from gpuviz.analysis.op_calls import count_calls
from gpuviz.trace.kineto import load_trace

torch = pytest.importorskip("torch")


def _model() -> tuple[object, object, object]:
    torch.manual_seed(0)

    class Small(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
            self.lin = torch.nn.Linear(8 * 8 * 8, 16)

        def forward(self, x: object, y: object) -> object:
            h = self.conv(x) * 2.0
            z = self.lin(h.flatten(1)) + y
            return torch.bmm(z.unsqueeze(2), z.unsqueeze(1)).sum()

    return Small(), torch.randn(4, 3, 16, 16), torch.randn(4, 16)


def test_flops_agree_with_flop_counter_mode_and_key_averages(tmp_path: Path) -> None:
    from torch.profiler import ProfilerActivity, profile
    from torch.utils.flop_counter import FlopCounterMode

    model, x, y = _model()

    def step() -> None:
        model(x, y).backward()  # type: ignore[operator]

    with FlopCounterMode(display=False) as counter:
        step()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_flops=True) as prof:
        step()
    path = tmp_path / "small.json"
    prof.export_chrome_trace(str(path))
    elementwise = {e.key: e.flops for e in prof.key_averages() if e.key in ELEMENTWISE_FLOPS}

    trace = load_trace(path, cache=False)
    calls, _ = count_calls(trace)
    got: dict[str, float] = {}
    for row, f in zip(calls.rows.tolist(), calls.flops.tolist()):
        if np.isfinite(f):
            name = trace.symbols.strings[trace.slices.name[row]]
            got[name] = got.get(name, 0.0) + f
    work = sum(f for name, f in got.items() if name not in ELEMENTWISE_FLOPS)
    assert work == counter.get_total_flops() > 0
    # op by op: FlopCounterMode names the aten overload, the trace the op
    by_op = {str(k).split(".")[1]: v for k, v in counter.get_flop_counts()["Global"].items()}
    assert got["aten::convolution_backward"] == by_op["convolution_backward"]
    assert got["aten::mkldnn_convolution"] == by_op["convolution"]
    assert got["aten::bmm"] == by_op["bmm"] and got["aten::mm"] == by_op["mm"]
    assert {k: got[k] for k in elementwise} == elementwise
    assert set(elementwise) == {"aten::add", "aten::mul"}
