"""gpuviz's FLOPs per step against torch's counters of the same run (issue 47, item 3).

``tests/data/truth_cpu``: ``scripts/gpu/record_truth.py --device cpu --small`` (README there).
``tests/data/truth``: the same script on a GPU (``resnet18``, ``cpu_ahead``), where recorded;
its test says so and is skipped while the recording is absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuviz.analysis.hardware import hardware
from gpuviz.analysis.op_args import ELEMENTWISE_FLOPS
from gpuviz.trace.kineto import load_trace

DATA = Path(__file__).parent.parent / "data"
CPU = DATA / "truth_cpu"
GPU = DATA / "truth"


def _truth(folder: Path) -> Path:
    """record_truth.py's truth.json (kept as truth_expected.json beside the traces, the name
    the real-trace tests skip)."""
    named = folder / "truth_expected.json"
    return named if named.exists() else folder / "truth.json"


def _case(folder: Path, name: str) -> tuple[dict[str, Any], Any]:
    truth = json.loads(_truth(folder).read_text())["cases"][name]
    return truth, hardware(load_trace(folder / truth["trace"], cache=False))


def _elementwise_per_step(truth: dict[str, Any]) -> float:
    """torch's key_averages add/mul FLOPs over the profiled steps, per step."""
    rows = [r for r in truth["key_averages"] if r["key"] in ELEMENTWISE_FLOPS]
    return sum(r["flops"] for r in rows) / len(truth["profiled_steps"])


def _elementwise_of(hw: Any) -> float:
    """gpuviz's add/mul FLOPs over the trace, per step."""
    names = [hw.shapes[j].name for j in hw.calls.shape.tolist()]
    total = sum(f for n, f in zip(names, hw.calls.flops.tolist()) if n in ELEMENTWISE_FLOPS)
    return total / len(hw.steps)


@pytest.mark.parametrize("name", ["sync_layers", "copy_pinned"])
def test_cpu_steps_flops_equal_flop_counter_mode_plus_torchs_add_mul(name: str) -> None:
    """GEMMs exactly FlopCounterMode's; add/mul as key_averages' but for one mul a step in
    copy_pinned's backward (``[[64, 1], []]`` of types float and double: a 0-d tensor) that
    torch leaves at 0 and gpuviz counts (64 FLOPs of 34 M)."""
    truth, hw = _case(CPU, name)
    assert [s.step for s in hw.steps] == truth["profiled_steps"]
    elementwise = _elementwise_of(hw)
    assert elementwise - _elementwise_per_step(truth) in (0, 64)
    for s in hw.steps:
        assert s.flops - elementwise == truth["flop_counter"]["total"], s.label
        assert s.precisions == ["fp32"]


def test_cpu_ahead_steps_flops_equal_the_hand_count() -> None:
    """4 mm of 256³, 2 of 128³ and 2 SDPA of [1, 2, 64, 32] (fp32 on the CPU): FlopCounterMode
    counts the mm (it leaves the CPU's flash attention out), the hand count all of it."""
    truth, hw = _case(CPU, "cpu_ahead")
    hand = truth["hand_flops"]
    mm = hand["bf16_mm"] + hand["fp32_mm"]
    assert truth["flop_counter"]["total"] == mm
    for s in hw.steps:
        assert s.flops == hand["total"], s.label


@pytest.mark.skipif(
    not (GPU / "truth.json").exists(), reason="no GPU recording in tests/data/truth"
)
@pytest.mark.parametrize("name", ["resnet18", "cpu_ahead"])
def test_gpu_steps_flops_within_5_percent_of_flop_counter_mode(name: str) -> None:
    truth, hw = _case(GPU, name)
    want = truth["flop_counter"]["total"]
    if name == "cpu_ahead":
        want = truth["hand_flops"]["total"]  # FlopCounterMode's SDPA figure may differ by backend
    extra = _elementwise_per_step(truth)  # torch counts add/mul in key_averages only
    steps = [s for s in hw.steps if s.step in truth["profiled_steps"]]
    assert steps
    for s in steps:
        assert s.flops - extra == pytest.approx(want, rel=0.05), s.label
        assert s.mfu is None or 0 < s.mfu <= 1
