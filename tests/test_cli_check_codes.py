"""``gpuviz check``: MFU across two kinds of GPU, and the exit codes of a CI gate (issue 47,
item 7). An A100 run against an H100 one printed "MFU 2.0% -> 6.3%" as a change; a crash
exited 1, the code of a regression."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from subproc import gpuviz_env
from trace_copies import load_trace_json, write_trace_json

from gpuviz.cli import main

DATA = Path(__file__).parent / "data"
ROOFLINE = DATA / "roofline" / "roofline.json.gz"  # an H100 run with shapes: MFU known
A100 = "NVIDIA A100-SXM4-80GB"
B200 = "NVIDIA B200"


@pytest.fixture
def on_a100(tmp_path: Path) -> Path:
    """The same run, its device said to be an A100: its GEMMs ran faster than an A100 can."""
    doc = load_trace_json(ROOFLINE)
    doc["deviceProperties"][0]["name"] = A100
    doc["deviceProperties"][0].update(computeMajor=8, numSms=108)
    return write_trace_json(doc, tmp_path / "a100.json.gz")


@pytest.fixture
def on_b200(tmp_path: Path) -> Path:
    """The same run, its device said to be a B200 (same FLOPs and times, higher peaks)."""
    doc = load_trace_json(ROOFLINE)
    doc["deviceProperties"][0]["name"] = B200
    doc["deviceProperties"][0].update(computeMajor=10, computeMinor=0, numSms=148)
    return write_trace_json(doc, tmp_path / "b200.json.gz")


def test_mfu_of_two_kinds_of_gpu_is_not_comparable(
    on_b200: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(ROOFLINE), "--against", str(on_b200), "--json"]) == 0
    j = json.loads(capsys.readouterr().out)
    mfu = j["mfu"]
    # Both known, against their own device's peak (the same FLOPs and time: the H100's MFU is
    # lower by the ratio of the peaks), and no change stated.
    a, b = mfu["baseline"], mfu["new"]
    assert a["peak_label"] != b["peak_label"] and "B200" in a["peak_label"]
    # The same FLOPs and times against higher peaks of every precision: a lower MFU, each
    # precision's part lower by at most its own peaks' ratio.
    ratios = [a["peak_tflops"][p] / b["peak_tflops"][p] for p in b["precisions"]]
    assert all(r > 1 for r in ratios)
    assert min(ratios) <= b["mean"] / a["mean"] <= max(ratios) * (1 + 1e-3)
    assert mfu["change"] is None and mfu["comparable"] is False
    assert mfu["not_comparable"].startswith("the peaks differ: NVIDIA B200")
    assert main(["check", str(ROOFLINE), "--against", str(on_b200)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("MFU"))
    assert "not comparable, the peaks differ: NVIDIA B200" in line and "points" not in line
    # The verdict says first that the runs are on other GPUs.
    assert j["verdict"].startswith(
        f"on other GPUs ({B200} -> NVIDIA H100 80GB HBM3); GPU work the same kernel for kernel"
    )


def test_an_h100_run_said_to_be_an_a100_is_inconsistent(
    on_a100: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Its bf16 GEMMs ran at ~790 TFLOP/s, past an A100's 312: the MFU is not a figure there.
    assert main(["check", str(ROOFLINE), "--against", str(on_a100), "--json"]) == 0
    mfu = json.loads(capsys.readouterr().out)["mfu"]
    assert mfu["baseline"] is None and mfu["baseline_unknown"].startswith("inconsistent")
    assert mfu["new"]["mean"] is not None and mfu["change"] is None


def test_mfu_of_one_gpu_is_compared(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(ROOFLINE), "--against", str(ROOFLINE), "--json"]) == 0
    mfu = json.loads(capsys.readouterr().out)["mfu"]
    assert mfu["change"] == 0.0 and mfu["comparable"] is True and mfu["not_comparable"] is None


def test_an_internal_failure_exits_3_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gpuviz.analysis import run_compare

    def boom(*_: object) -> None:
        raise RuntimeError("boom in the comparison")

    monkeypatch.setattr(run_compare, "compare_inputs", boom)  # what check calls
    monkeypatch.delenv("GPUVIZ_DEBUG", raising=False)
    assert main(["check", str(ROOFLINE), "--against", str(ROOFLINE)]) == 3
    err = capsys.readouterr().err
    assert err.startswith("gpuviz check: internal error: RuntimeError: boom in the comparison")
    assert "not a regression" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    # --debug (or GPUVIZ_DEBUG=1) adds the traceback.
    assert main(["check", str(ROOFLINE), "--against", str(ROOFLINE), "--debug"]) == 3
    assert "Traceback (most recent call last)" in capsys.readouterr().err
    monkeypatch.setenv("GPUVIZ_DEBUG", "1")
    assert main(["check", str(ROOFLINE), "--against", str(ROOFLINE)]) == 3
    assert "Traceback (most recent call last)" in capsys.readouterr().err


def test_bad_input_is_still_2_and_a_regression_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["check", str(bad), "--against", str(ROOFLINE)]) == 2


def test_the_help_states_the_exit_codes() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "gpuviz", "check", "--help"],
        capture_output=True, text=True, env=gpuviz_env(), check=True,
    ).stdout  # fmt: skip
    codes = out[out.index("exit status:") :]
    for code, said in (("0", "within the limits"), ("1", "a regression"), ("2", "bad input"),
                       ("3", "internal failure")):  # fmt: skip
        assert f"  {code}  {said}" in codes, codes
