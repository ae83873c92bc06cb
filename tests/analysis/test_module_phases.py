"""Forward, backward and other device time of modules and lines (issue 47, item 12), checked
by hand on a GPU recording of a small training step with AdamW (tests/data/attribution).

The hand count reads the trace's JSON directly: a kernel is launched by the runtime or driver
call of its correlation id; it is *backward* when that call runs on the autograd engine's
thread, *forward* when it runs inside an ``nn.Module:`` frame of the main thread, and *other*
(optimizer, loss, ``zero_grad``) otherwise.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from gpuviz.analysis.breakdown import breakdown
from gpuviz.trace.kineto import load_trace

TINY = Path(__file__).parent.parent / "data" / "attribution" / "tinylm_train.json.gz"
ABS_US = 1.0  # the trace's µs text rounds each kernel


def _hand_phases() -> dict[str, float]:
    events: list[dict[str, Any]] = json.loads(gzip.decompress(TINY.read_bytes()))["traceEvents"]
    xs = [e for e in events if e.get("ph") == "X"]
    optim = [e for e in xs if e.get("name", "").startswith("Optimizer.step")]
    main_tid = optim[0]["tid"]
    frames = [
        (e["ts"], e["ts"] + e["dur"])
        for e in xs
        if e.get("cat") == "python_function"
        and e["name"].startswith("nn.Module: ")
        and e["tid"] == main_tid
    ]
    launches = {
        e["args"]["correlation"]: e
        for e in xs
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})
    }
    out = {"forward": 0.0, "backward": 0.0, "other": 0.0, "optimizer": 0.0}
    for k in xs:
        if k.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        call = launches[k["args"]["correlation"]]
        t = call["ts"]
        if call["tid"] != main_tid:
            out["backward"] += k["dur"]
        elif any(a <= t <= b for a, b in frames):
            out["forward"] += k["dur"]
        else:
            out["other"] += k["dur"]
        if any(o["tid"] == call["tid"] and o["ts"] <= t <= o["ts"] + o["dur"] for o in optim):
            out["optimizer"] += k["dur"]
    return out


@pytest.fixture(scope="module")
def rows() -> dict[str, list[dict[str, Any]]]:
    trace = load_trace(TINY)
    return {by: [r.to_json(by) for r in breakdown(trace, by).rows] for by in ("module", "line")}


def test_each_row_adds_up(rows: dict[str, list[dict[str, Any]]]) -> None:
    for by, table in rows.items():
        for r in table:
            parts = r["forward_device_us"] + r["backward_device_us"] + r["other_device_us"]
            assert parts == pytest.approx(r["device_total_us"], abs=0.01), (by, r["key"])


def test_optimizer_is_not_forward(rows: dict[str, list[dict[str, Any]]]) -> None:
    hand = _hand_phases()
    assert hand["optimizer"] > 100  # AdamW's kernels: the case the item is about
    step = next(r for r in rows["module"] if r["key"].startswith("Optimizer.step"))
    assert step["forward_device_us"] == 0
    assert step["backward_device_us"] == 0
    assert step["other_device_us"] == pytest.approx(hand["optimizer"], abs=ABS_US)


def test_module_table_phases_match_hand_count(rows: dict[str, list[dict[str, Any]]]) -> None:
    hand = _hand_phases()
    # The outermost module and the rows outside modules hold every kernel once.
    top = [r for r in rows["module"] if r["kind"] == "outside" or "." not in r["key"]]
    for phase in ("forward", "backward", "other"):
        ours = sum(r[f"{phase}_device_us"] for r in top)
        assert ours == pytest.approx(hand[phase], abs=ABS_US), phase
    modules = [r for r in rows["module"] if r["kind"] == "module"]
    assert all(r["other_device_us"] == 0 for r in modules)


def test_training_loop_line_shows_other(rows: dict[str, list[dict[str, Any]]]) -> None:
    hand = _hand_phases()
    # The loop's line holds the whole step: forward, backward, loss and optimizer.
    loop = max(rows["line"], key=lambda r: (r["device_total_us"], -r["cpu_total_us"]))
    assert loop["other_device_us"] == pytest.approx(hand["other"], abs=ABS_US)
    assert loop["forward_device_us"] == pytest.approx(hand["forward"], abs=ABS_US)
