"""``gpuviz check NEW --against BASELINE``: the CI gate's exit codes, its report and its JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from subproc import gpuviz_env
from trace_copies import load_trace_json, module_stretched, stretched, write_trace_json

from gpuviz.cli import main

DATA = Path(__file__).parent / "data"
ADV = DATA / "advisor"
LAUNCH = ADV / "adv_launch_bound.json.gz"
CLEAN = ADV / "adv_clean.json.gz"


def run_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuviz", "check", *args],
        capture_output=True,
        text=True,
        env=gpuviz_env(),
    )


def test_a_trace_against_itself_passes() -> None:
    r = run_check(str(LAUNCH), "--against", str(LAUNCH))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("gpuviz check passed")
    assert "(+0.0%)" in r.stdout and "new findings at critical or above: none" in r.stdout


def test_every_kernel_and_step_30_percent_longer_fails_on_step_time(tmp_path: Path) -> None:
    slow = stretched(LAUNCH, tmp_path / "slow.json.gz", 1.3)
    r = run_check(str(slow), "--against", str(LAUNCH))
    assert r.returncode == 1, r.stderr
    assert r.stdout.startswith("gpuviz check FAILED: 1 regression")
    step_line = next(x for x in r.stdout.splitlines() if x.startswith("mean step:"))
    assert "(+30.0%)" in step_line and "limit +5%: REGRESSION" in step_line
    j = json.loads(run_check(str(slow), "--against", str(LAUNCH), "--json").stdout)
    assert j["passed"] is False
    assert [x["what"] for x in j["regressions"]] == ["step_time"]
    assert j["regressions"][0]["change"] == pytest.approx(0.30, abs=0.005)
    assert j["step"]["new_mean_us"] == pytest.approx(1.3 * j["step"]["baseline_mean_us"], rel=0.005)
    # The same run within a looser limit passes.
    assert (
        run_check(str(slow), "--against", str(LAUNCH), "--max-step-regression", "35%").returncode
        == 0
    )


def test_a_new_planted_problem_is_named() -> None:
    # adv_launch_bound is faster per step than adv_clean, so only the new finding fails it.
    r = run_check(str(LAUNCH), "--against", str(CLEAN))
    assert r.returncode == 1
    assert "limit +5%: ok" in r.stdout
    assert "new findings at critical or above: 1" in r.stdout
    assert (
        "[critical] launch_bound:" in r.stdout and "fix: Launch fewer, larger kernels" in r.stdout
    )
    j = json.loads(run_check(str(LAUNCH), "--against", str(CLEAN), "--json").stdout)
    assert j["regressions"] == [{"what": "finding", "kind": "launch_bound"}]
    assert [f["kind"] for f in j["findings"]["new"]] == ["launch_bound"]
    # Reversed, the problem is gone: nothing new, and the run is faster.
    back = run_check(str(CLEAN), "--against", str(LAUNCH), "--max-step-regression", "100%")
    assert back.returncode == 0 and "gone findings: launch_bound (critical)" in back.stdout


def test_fail_on_sets_the_level(capsys: pytest.CaptureFixture[str]) -> None:
    copy = str(ADV / "adv_copy_not_overlapped.json.gz")
    loose = ["--max-step-regression", "1000%"]
    assert main(["check", copy, "--against", str(CLEAN), *loose]) == 0  # a warning: below critical
    capsys.readouterr()
    assert main(["check", copy, "--against", str(CLEAN), *loose, "--fail-on", "warning"]) == 1
    out = capsys.readouterr().out
    assert "[warning] copy_not_overlapped:" in out


def test_peak_memory_regression(tmp_path: Path) -> None:
    base = DATA / "snap_train_profile.json.gz"
    doc = load_trace_json(base)
    for e in doc["traceEvents"]:
        args = e.get("args") or {}
        if e.get("name") == "[memory]" and "Total Allocated" in args:
            args["Total Allocated"] = int(args["Total Allocated"] * 1.2)
    bigger = write_trace_json(doc, tmp_path / "bigger.json.gz")
    j = json.loads(run_check(str(bigger), "--against", str(base), "--json").stdout)
    assert [x["what"] for x in j["regressions"]] == ["peak_memory"]
    assert j["peak_memory"]["change"] == pytest.approx(0.2, abs=0.001)
    r = run_check(str(bigger), "--against", str(base), "--max-memory-regression", "25")
    assert r.returncode == 0 and "(+20.0%)  limit +25%: ok" in r.stdout


def test_the_limits_units() -> None:
    from gpuviz.commands.check import percent

    assert percent("5%") == percent("5") == pytest.approx(0.05)
    assert percent("0.05%") == pytest.approx(0.0005) and percent("0") == 0.0
    assert percent("150") == pytest.approx(1.5)


def test_bad_input_is_exit_2_with_one_line(tmp_path: Path) -> None:
    cases = [
        ([str(tmp_path / "nope.json.gz"), "--against", str(LAUNCH)], "nope.json.gz: no such file"),
        ([str(LAUNCH), "--against", str(LAUNCH), "--max-step-regression", "fast"], "'fast'"),
        ([str(LAUNCH), "--against", str(LAUNCH), "--max-memory-regression=-3%"], "0 or more"),
        # issue 47, item 20: a fraction was read as percent (0.05 = 0.05%): say which is meant
        (
            [str(LAUNCH), "--against", str(LAUNCH), "--max-step-regression", "0.05"],
            "'0.05': a percentage, so 0.05 means 0.05%, not 5%: write 5% or 0.05%",
        ),
        ([str(LAUNCH)], "--against"),
    ]
    (tmp_path / "junk.json.gz").write_bytes(b"not gzip")
    cases.append(([str(tmp_path / "junk.json.gz"), "--against", str(LAUNCH)], "junk.json.gz"))
    for args, says in cases:
        r = run_check(*args)
        assert r.returncode == 2, (args, r.stdout)
        assert len(r.stderr.strip().splitlines()) == 1 and says in r.stderr, r.stderr
        assert "Traceback" not in r.stderr


TINYLM = DATA / "attribution" / "tinylm_train.json.gz"
ROOFLINE = DATA / "roofline" / "roofline.json.gz"


def test_the_module_whose_kernels_grew_leads_the_module_deltas(tmp_path: Path) -> None:
    slow = module_stretched(TINYLM, tmp_path / "slow.json.gz", "Linear_2", 5.0)
    j = json.loads(run_check(str(slow), "--against", str(TINYLM), "--json").stdout)
    mods = j["module_diff"]
    assert mods and mods[0]["name"] == "TinyLM_0.Block_0.Mlp_0.Linear_2"
    assert mods[0]["delta_us"] > 0
    deltas = [abs(m["delta_us"]) for m in mods]
    assert deltas == sorted(deltas, reverse=True)
    # Its figures are the module table's: 5x its forward kernels, backward unchanged.
    table = breakdown_json(TINYLM, "module")
    row = next(r for r in table["rows"] if r["key"] == mods[0]["name"])
    assert mods[0]["total_a_us"] == pytest.approx(row["device_self_us"], abs=0.002)
    assert mods[0]["delta_us"] == pytest.approx(4 * row["forward_device_us"], rel=0.01)
    r = run_check(str(slow), "--against", str(TINYLM))
    lines = r.stdout.splitlines()
    head = lines.index(next(x for x in lines if x.startswith("modules whose device time")))
    assert lines[head + 1].endswith("module both 2->2 calls  TinyLM_0.Block_0.Mlp_0.Linear_2")
    assert f"{mods[0]['delta_us'] / 1000:+9.3f} ms" in lines[head + 1]


def test_modules_not_compared_without_stacks() -> None:
    r = run_check(str(LAUNCH), "--against", str(CLEAN), "--max-step-regression", "100%")
    assert "modules: not compared (no Python stacks in either run" in r.stdout
    j = json.loads(run_check(str(LAUNCH), "--against", str(CLEAN), "--json").stdout)
    assert j["module_diff"] is None


def test_mfu_before_and_after_is_summarys(tmp_path: Path) -> None:
    steps = summary_json(ROOFLINE)["mfu"]["steps"]
    mean = sum(s["mfu"] for s in steps) / len(steps)
    slow = stretched(ROOFLINE, tmp_path / "slow.json.gz", 2.0)  # the same FLOPs in twice the time
    j = json.loads(run_check(str(slow), "--against", str(ROOFLINE), "--json").stdout)
    assert j["mfu"]["baseline"]["mean"] == pytest.approx(mean, abs=1e-5)
    # each precision the steps mix, at its own peak (issue 47, item 4)
    assert j["mfu"]["baseline"]["peak_tflops"] == steps[0]["peak_tflops_by_precision"]
    assert j["mfu"]["new"]["mean"] == pytest.approx(mean / 2, rel=0.01)
    r = run_check(str(slow), "--against", str(ROOFLINE))
    line = next(x for x in r.stdout.splitlines() if x.startswith("MFU"))
    assert line == (
        f"MFU (mean over steps): {100 * mean:.1f}% -> {100 * j['mfu']['new']['mean']:.1f}% "
        f"({100 * j['mfu']['change']:+.1f} points)"
    )
    # Without shapes it is not known, and says why.
    r = run_check(str(LAUNCH), "--against", str(LAUNCH))
    assert "MFU: not known (no FLOPs counted: record shapes" in r.stdout


def breakdown_json(path: Path, by: str) -> Any:
    out = subprocess.run(
        [sys.executable, "-m", "gpuviz", "breakdown", str(path), "--by", by, "--top", "0", "--json"],
        capture_output=True, text=True, env=gpuviz_env(), check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


def summary_json(path: Path) -> Any:
    out = subprocess.run(
        [sys.executable, "-m", "gpuviz", "summary", str(path), "--json"],
        capture_output=True, text=True, env=gpuviz_env(), check=True,
    )  # fmt: skip
    return json.loads(out.stdout)
