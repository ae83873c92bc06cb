"""Ranges left open at the trace's end are clipped to their step, and said (issue 47, item 10).

Kineto writes a range whose exit was never recorded with a duration to the trace's end: an
``Optimizer.step`` of ~5 ms read 45 ms, inflating the op table's CPU total with no warning.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from gpuviz.analysis.open_ranges import open_ranges
from gpuviz.cli import main
from gpuviz.trace.kineto import load_trace

PID, TID = 100, 1
OPT = "Optimizer.step#SGD.step"


def _x(cat: str, name: str, ts: float, dur: float) -> dict:
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": PID, "tid": TID}


def _write(path: Path, left_open: bool) -> Path:
    """3 steps of 20 ms, each with a 5 ms ``Optimizer.step`` (15-20 ms into it) around an
    ``aten::add``; then 40 ms of ops after the loop. With ``left_open`` the last optimizer
    step's exit is lost: Kineto writes it to the trace's end (100 ms)."""
    events = []
    for n in range(3):
        t = n * 20_000.0
        events.append(_x("user_annotation", f"ProfilerStep#{n}", t, 20_000))
        events.append(_x("cpu_op", "aten::mm", t + 1_000, 10_000))
        opt_dur = 100_000 - (t + 15_000) if left_open and n == 2 else 5_000
        events.append(_x("user_annotation", OPT, t + 15_000, opt_dur))
        events.append(_x("cpu_op", "aten::add", t + 16_000, 3_000))
    for i in range(4):  # after the loop: 4 ops of 10 ms
        events.append(_x("cpu_op", "aten::copy_", 60_000 + i * 10_000, 10_000))
    doc = {"schemaVersion": 1, "traceEvents": events}
    with gzip.open(path, "wt") as f:
        json.dump(doc, f)
    return path


def _row(rows: list[dict], key: str) -> dict:
    [row] = [r for r in rows if r["key"] == key]
    return row


@pytest.mark.parametrize("left_open", [False, True])
def test_an_open_optimizer_step_is_clipped_to_its_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], left_open: bool
) -> None:
    path = _write(tmp_path / "t.json.gz", left_open)
    assert main(["breakdown", str(path), "--by", "op", "--json", "--top", "0"]) == 0
    out = capsys.readouterr()
    rows = json.loads(out.out)["rows"]
    # By hand: 3 optimizer steps of 5 ms (the open one from 55 ms to its step's end, 60 ms).
    opt = _row(rows, OPT)
    assert opt["calls"] == 3
    assert opt["cpu_total_us"] == pytest.approx(15_000)
    assert opt["cpu_self_us"] == pytest.approx(15_000 - 3 * 3_000)
    # The ops after the loop are nobody's children: 4 of 10 ms, self time whole.
    copy = _row(rows, "aten::copy_")
    assert (copy["cpu_total_us"], copy["cpu_self_us"]) == (40_000, 40_000)
    said = "1 range left open at the trace's end was clipped to its step: " in out.err
    assert said == left_open, out.err
    if left_open:
        assert f"{OPT} (45.0 ms -> 5.0 ms)" in out.err


def test_the_summary_lists_it_among_the_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "t.json.gz", True)
    assert main(["summary", str(path)]) == 0
    assert "warning: 1 range left open at the trace's end" in capsys.readouterr().out


def test_a_range_that_ends_with_its_step_is_not_clipped(tmp_path: Path) -> None:
    # The last step runs to the trace's end (no ops after the loop): nothing was left open.
    path = tmp_path / "t.json.gz"
    events = [_x("user_annotation", "ProfilerStep#0", 0, 20_000)]
    events.append(_x("user_annotation", OPT, 15_000, 5_000))
    with gzip.open(path, "wt") as f:
        json.dump({"schemaVersion": 1, "traceEvents": events}, f)
    trace = load_trace(path)
    assert len(open_ranges(trace)) == 0 and open_ranges(trace).message is None
