"""The roofline and MFU figures on the command line: ``breakdown --by op-shape|step``,
``summary`` (text and ``"mfu"`` in ``--json``), ``--peak-tflops``/``--peak-bandwidth`` and the
line for an unknown device."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "analysis"))
from hardware_synth import gemm_flops, write_run

from gpuviz.cli import main

ODD = {"id": 0, "name": "Imaginary GPU 9000", "numSms": 7, "computeMajor": 12}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        rc = main(list(argv))
    except SystemExit as exc:
        rc = int(exc.code or 0)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_breakdown_op_shape_json_has_the_roofline_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_run(tmp_path / "run.json.gz", gemm_tflops=600.0)
    rc, out, err = _run(capsys, "breakdown", str(path), "--by", "op-shape", "--json")
    assert rc == 0 and err == ""
    doc = json.loads(out)
    rows = {r["key"]: r for r in doc["rows"]}
    mm = rows["aten::mm"]
    assert mm["tflops"] == pytest.approx(600.0, rel=1e-3)
    assert mm["bound"] == "compute" and mm["roof_share"] == pytest.approx(600 / 989.4, rel=1e-3)
    assert mm["bytes"] == 12 * 3 * 8192 * 8192 * 2
    assert mm["intensity"] == pytest.approx(mm["flops"] / mm["bytes"], rel=1e-3)
    assert doc["peaks"]["label"] == "NVIDIA H100 SXM5 80GB"


def test_breakdown_text_and_steps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_run(tmp_path / "run.json.gz")
    rc, out, _ = _run(capsys, "breakdown", str(path), "--by", "op-shape")
    assert rc == 0
    assert "TFLOP/s" in out and "roof" in out and "Peaks: NVIDIA H100 SXM5 80GB" in out
    assert "750.0" in out  # the GEMMs' TFLOP/s
    rc, out, _ = _run(capsys, "breakdown", str(path), "--by", "step", "--json")
    steps = json.loads(out)["rows"]
    assert len(steps) == 3
    # 4 GEMMs and 2 bf16 adds of 2**24 elements (one FLOP an element, as torch counts them)
    assert all(s["flops"] == 4 * gemm_flops(8192, 8192, 8192) + 2 * (1 << 24) for s in steps)
    assert all(0 < s["mfu"] < 750 / 989.4 for s in steps)


def test_unknown_device_one_line_and_null_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_run(tmp_path / "odd.json.gz", device=ODD)
    rc, out, err = _run(capsys, "breakdown", str(path), "--by", "step", "--json")
    assert rc == 0
    assert len(err.strip().splitlines()) == 1 and "Imaginary GPU 9000" in err
    assert "--peak-tflops" in err
    assert all(r["mfu"] is None and r["flops"] > 0 for r in json.loads(out)["rows"])
    rc, out, err = _run(
        capsys, "summary", str(path), "--json", "--peak-tflops", "1000", "--peak-bandwidth", "4"
    )
    assert rc == 0 and err == ""
    mfu = json.loads(out)["mfu"]
    assert mfu["peak"]["tflops"]["bf16"] == 1000.0 and "override" in mfu["peak"]["source"]
    assert all(
        s["mfu"] == pytest.approx(s["flops"] / (s["duration_us"] * 1e9), abs=1e-5)
        for s in mfu["steps"]
    )


def test_summary_text_prints_mfu_and_the_peak(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_run(tmp_path / "run.json.gz")
    rc, out, _ = _run(capsys, "summary", str(path))
    assert rc == 0
    section = out[out.index("MFU per step") :]
    assert "bf16 989.4 TFLOP/s" in section and "ProfilerStep#3" in section
    rc, out, _ = _run(capsys, "summary", str(path), "--json")
    doc = json.loads(out)
    assert {"sources", "streams", "devices", "top_kernels", "mfu"} <= set(doc)
    assert [s["label"] for s in doc["mfu"]["steps"]] == [f"ProfilerStep#{i}" for i in (1, 2, 3)]


@pytest.mark.parametrize("value", ["0", "-3", "abc", "inf"])
def test_bad_peak_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str) -> None:
    path = write_run(tmp_path / "run.json.gz", steps=1)
    rc, _, err = _run(capsys, "summary", str(path), "--peak-tflops", value)
    assert rc == 2 and "--peak-tflops" in err and "Traceback" not in err


def test_module_rows_and_ranks_get_flops_and_mfu(capsys: pytest.CaptureFixture[str]) -> None:
    data = Path(__file__).parent / "data"
    tiny = data / "attribution" / "tinylm_train.json.gz"
    rc, out, _ = _run(capsys, "breakdown", str(tiny), "--by", "module", "--json")
    assert rc == 0
    doc = json.loads(out)
    rows = {r["key"]: r for r in doc["rows"]}
    top = rows["TinyLM_0"]
    _, steps_out, _ = _run(capsys, "breakdown", str(tiny), "--by", "step", "--json")
    assert top["flops"] == sum(s["flops"] for s in json.loads(steps_out)["rows"])
    assert top["mfu"] == pytest.approx(top["flops"] / (top["device_total_us"] * 989.4e6), abs=1e-5)
    assert doc["peaks"]["label"] == "NVIDIA H100 SXM5 80GB"
    rc, out, _ = _run(capsys, "breakdown", str(tiny), "--by", "module", "--top", "3")
    assert "GFLOP" in out and "MFU" in out and "23.5" in out
    rc, out, _ = _run(capsys, "summary", str(data / "ddp_nccl_4rank"), "--json")
    ranks = json.loads(out)["mfu"]["ranks"]
    assert [r["rank"] for r in ranks] == [0, 1, 2, 3] and all(r["steps"] == 2 for r in ranks)
    rc, out, _ = _run(capsys, "summary", str(data / "ddp_nccl_4rank"))
    assert "MFU per rank" in out


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        # issue 47, item 19: these leaked numpy's overflow warnings and printed "inf%"
        ("--peak-tflops", "5e-324", "expected 0.001 to 100000 TFLOP/s"),
        ("--peak-bandwidth", "1e308", "expected 0.001 to 1000 TB/s"),
        ("--peak-tflops", "1e308", "expected 0.001 to 100000 TFLOP/s"),
        ("--peak-bandwidth", "5e-324", "expected 0.001 to 1000 TB/s"),
        ("--peak-tflops", "nan", "expected 0.001"),
        ("--peak-bandwidth", "x", "expected a number (TB/s)"),
    ],
)
def test_absurd_peaks_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, said: str
) -> None:
    path = write_run(tmp_path / "run.json.gz", steps=1)
    for command in ("summary", "breakdown"):
        rc, out, err = _run(capsys, command, str(path), option, value)
        assert rc == 2 and out == ""
        (line,) = err.splitlines()
        assert f"argument {option}: '{value}': {said}" in line


@pytest.mark.parametrize(
    "peaks",
    [
        ["--peak-tflops", "0.001", "--peak-bandwidth", "1000"],
        ["--peak-tflops", "100000", "--peak-bandwidth", "0.001"],
    ],
)
def test_no_numpy_warning_at_the_bounds(tmp_path: Path, peaks: list[str]) -> None:
    # the commands that take the peaks (summary, breakdown), with warnings made errors: the roofline
    # arithmetic at the extremes of the accepted peaks must not warn
    import subprocess

    from subproc import gpuviz_env

    path = write_run(tmp_path / "run.json.gz", gemm_tflops=600.0)
    runs = [
        ["summary", str(path)],
        ["summary", str(path), "--json"],
        ["breakdown", str(path), "--by", "step"],
        ["breakdown", str(path), "--by", "op-shape", "--json"],
        ["breakdown", str(path), "--by", "op", "--json"],
    ]
    for argv in runs:
        proc = subprocess.run(
            [sys.executable, "-W", "error", "-m", "gpuviz", *argv, *peaks],
            capture_output=True,
            text=True,
            timeout=120,
            env=gpuviz_env(),
        )
        assert proc.returncode == 0, (argv, proc.stderr)
        assert "Warning" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
