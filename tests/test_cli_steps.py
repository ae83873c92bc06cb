"""Per-step time in the commands on a loop whose CPU runs ahead of the GPU (issue 47, item 1).

Before, a step's time was its CPU range: 0.5 ms for an 8 ms GPU step, so its MFU read
thousands of percent, and the last step held all the GPU work. The figures below are worked
out by hand in :mod:`tests.cpu_ahead_trace`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuviz.cli import main
from tests.cpu_ahead_trace import write_cpu_ahead

PEAK = 1000.0  # TFLOP/s, given on the command line: the MFU's divisor is known here


@pytest.fixture
def ahead(tmp_path: Path) -> tuple[Path, dict]:
    path = tmp_path / "cpu_ahead.json.gz"
    return path, write_cpu_ahead(path)


def test_breakdown_by_step_gives_each_step_its_gpu_time(
    ahead: tuple[Path, dict], capsys: pytest.CaptureFixture[str]
) -> None:
    path, truth = ahead
    assert main(["breakdown", str(path), "--by", "step", "--json", "--top", "0",
                 "--peak-tflops", str(PEAK)]) == 0  # fmt: skip
    rows = json.loads(capsys.readouterr().out)["rows"]
    rows.sort(key=lambda r: r["step"])
    assert [r["duration_us"] for r in rows] == pytest.approx(truth["duration_us"])
    assert sum(r["duration_us"] for r in rows) == pytest.approx(truth["wall_us"])
    assert [r["device_self_us"] for r in rows] == pytest.approx([truth["gpu_us"]] * len(rows))
    for r, dur in zip(rows, truth["duration_us"]):
        want = truth["step_flops"] / (dur * 1e-6 * PEAK * 1e12)
        assert r["mfu"] == pytest.approx(want, rel=1e-3)
        assert r["mfu"] <= 1.0


def test_summary_mfu_is_over_the_steps_gpu_time(
    ahead: tuple[Path, dict], capsys: pytest.CaptureFixture[str]
) -> None:
    path, truth = ahead
    assert main(["summary", str(path), "--json", "--peak-tflops", str(PEAK)]) == 0
    out = json.loads(capsys.readouterr().out)
    steps = out["mfu"]["steps"]
    assert [s["duration_us"] for s in steps] == pytest.approx(truth["duration_us"])
    want = [truth["step_flops"] / (d * 1e-6 * PEAK * 1e12) for d in truth["duration_us"]]
    assert [s["mfu"] for s in steps] == pytest.approx(want, rel=1e-3)


def test_advise_steps_tile_the_wall_time(
    ahead: tuple[Path, dict], capsys: pytest.CaptureFixture[str]
) -> None:
    path, truth = ahead
    assert main(["advise", str(path), "--json"]) == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    assert [s["duration_us"] for s in steps] == pytest.approx(truth["duration_us"])
    for s in steps:  # the GPU was busy through each step but the first's launch latency
        busy = sum(d["compute_us"] for d in s["devices"])
        assert busy == pytest.approx(truth["gpu_us"])
