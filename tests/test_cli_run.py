"""``gpuviz run``: exit codes, --json, --events, --isolate, Ctrl-C, bad input (CPU paths)."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuviz.engine.events import Finished, Started, TraceReady, read_events

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "gpuviz_test_userfiles", Path(__file__).parent / "engine" / "userfiles.py"
)
assert _spec and _spec.loader
userfiles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(userfiles)


def cli(
    *args: str, cwd: Path | None = None, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "gpuviz", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )


def user(tmp_path: Path, source: str, func: str) -> str:
    f = tmp_path / f"{func}.py"
    f.write_text(source)
    return f"{f}:{func}"


def test_run_json_result_and_trace_opens_with_summary(tmp_path: Path) -> None:
    out = tmp_path / "loops.json.gz"
    events = tmp_path / "rec" / "events.jsonl"
    r = cli(
        "run",
        "loops",
        "-p",
        "n=20",
        "--steps",
        "2",
        "--device",
        "cpu",
        "--json",
        "--out",
        str(out),
        "--events",
        str(events),
    )
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["workload"] == "loops" and result["device"] == "cpu"
    assert result["params"]["n"] == 20
    assert result["trace"] == str(out)
    assert {s["name"] for s in result["skipped"]} == {"streams", "cuda_graph"}
    assert all(s["reason"] == "needs CUDA" for s in result["skipped"])
    timed = [s for s in result["steps"] if not s["profiled"]]
    assert len(timed) == 4 * 2
    assert "peak_rss_bytes" in result["memory"]
    # the trace opens with gpuviz summary
    with gzip.open(out, "rt") as f:
        n_events = len(json.load(f)["traceEvents"])
    s = cli("summary", str(out), "--json")
    assert s.returncode == 0, s.stderr
    assert json.loads(s.stdout)["events"] >= n_events - 5
    # the event stream replays, ending with the same result
    replay = list(read_events(events))
    assert isinstance(replay[0], Started) and isinstance(replay[-1], Finished)
    assert replay[-1].result == result
    assert any(isinstance(e, TraceReady) and Path(e.path) == out for e in replay)


def test_run_text_output(tmp_path: Path) -> None:
    r = cli(
        "run",
        "training",
        "-p",
        "batch=4",
        "-p",
        "hidden=8",
        "-p",
        "features=8",
        "--steps",
        "1",
        "--device",
        "cpu",
        "--no-profile",
    )
    assert r.returncode == 0, r.stderr
    assert "fp32" in r.stdout and "amp_bf16" in r.stdout and "trace: (none" in r.stdout


def test_default_out_path(tmp_path: Path) -> None:
    r = cli(
        "run",
        "loops",
        "-p",
        "only=vectorized",
        "--steps",
        "1",
        "--device",
        "cpu",
        "--json",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    trace = Path(json.loads(r.stdout)["trace"])
    assert (
        trace.parent == Path("gpuviz-runs")
        and trace.name.startswith("loops-")
        and trace.name.endswith(".json.gz")
    )
    assert (tmp_path / trace).exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["loops", "-p", "n=-5"], "n must be an int from 0 to"),
        (["loops", "-p", "dtype=fp4"], "one of float32, float64, int64"),
        (["loops", "-p", "bogus=1"], "no parameter 'bogus'"),
        (["nope"], "nope: no such workload"),
        (["loops", "--device", "cuda:99"], "--device cuda:99"),
        (["loops", "--steps", "0"], "--steps 0"),
        (["loops", "--out", "x.txt"], "--out x.txt"),
    ],
)
def test_bad_input_exits_2_with_one_line(args: list[str], says: str) -> None:
    r = cli("run", *args, "--no-profile")
    assert r.returncode == 2
    assert says in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_bad_user_files_exit_2_saying_which(tmp_path: Path) -> None:
    missing = cli("run", f"{tmp_path}/absent.py:f", "--device", "cpu")
    assert missing.returncode == 2 and "absent.py: no such file" in missing.stderr
    (tmp_path / "syn.py").write_text("def f(device):\n    return (\n")
    syn = cli("run", f"{tmp_path}/syn.py:f", "--device", "cpu")
    assert syn.returncode == 2 and "syn.py:" in syn.stderr and "syntax error" in syn.stderr
    (tmp_path / "nof.py").write_text("def g(device):\n    pass\n")
    nof = cli("run", f"{tmp_path}/nof.py:f", "--device", "cpu")
    assert nof.returncode == 2 and "no function 'f'" in nof.stderr and "nof.py" in nof.stderr
    for r in (missing, syn, nof):
        assert "Traceback" not in r.stderr


def test_user_workload_with_params(tmp_path: Path) -> None:
    w = user(tmp_path, userfiles.OK, "sleepy")
    r = cli("run", w, "-p", "n=9", "--steps", "2", "--device", "cpu", "--json", "--no-profile")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["params"] == {"n": 9, "sleep_s": 0.0}
    assert [s["label"] for s in res["steps"]] == ["sleepy", "sleepy"]
    bad = cli("run", w, "-p", "n=x", "--device", "cpu")
    assert bad.returncode == 2 and "n must be an int" in bad.stderr


def test_failure_exits_1_with_the_partial_trace(tmp_path: Path) -> None:
    w = user(tmp_path, userfiles.FAILING, "fails")
    out = tmp_path / "t.json.gz"
    r = cli(
        "run", w, "-p", "fail_at=3", "--steps", "2", "--device", "cpu", "--out", str(out), "--json"
    )
    assert r.returncode == 1
    assert "gpuviz run: ValueError: boom on call 3" in r.stderr
    assert f"partial trace: {out}" in r.stderr and out.exists()
    assert r.stdout == ""


def test_isolate_and_a_dying_child(tmp_path: Path) -> None:
    ok = cli(
        "run",
        "loops",
        "-p",
        "n=5",
        "--steps",
        "1",
        "--device",
        "cpu",
        "--isolate",
        "--json",
        "--out",
        str(tmp_path / "a.json.gz"),
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["trace"] == str(tmp_path / "a.json.gz")
    w = user(tmp_path, userfiles.DYING, "dies")
    out = tmp_path / "d.json.gz"
    dead = cli(
        "run",
        w,
        "-p",
        "die_at=3",
        "--steps",
        "2",
        "--device",
        "cpu",
        "--isolate",
        "--json",
        "--out",
        str(out),
    )
    assert dead.returncode == 1
    assert "SIGKILL" in dead.stderr and f"partial trace: {out}" in dead.stderr and out.exists()
    assert dead.stdout == ""  # the workload's prints went to stderr


@pytest.mark.parametrize("isolate", [False, True], ids=["in-thread", "isolate"])
def test_sys_exit_in_a_step_fails_the_run_with_exit_1(tmp_path: Path, isolate: bool) -> None:
    w = user(tmp_path, userfiles.EXITING, "exits")
    out = tmp_path / "t.json.gz"
    events = tmp_path / "e.jsonl"
    r = cli(
        "run", w, "-p", "exit_at=2", "--steps", "2", "--device", "cpu", "--out", str(out),
        "--events", str(events), *(["--isolate"] if isolate else []),
    )  # fmt: skip
    assert r.returncode == 1, r.stderr
    assert "gpuviz run: the workload called sys.exit(5) in step 0" in r.stderr
    assert f"partial trace: {out}" in r.stderr and out.exists()  # the profiled step is kept
    last = json.loads(events.read_text().splitlines()[-1])
    assert last["type"] == "Failed" and last["error"] == "the workload called sys.exit(5) in step 0"


def test_help_says_isolate_protects_against_os_exit() -> None:
    r = cli("run", "--help")
    assert r.returncode == 0
    assert "os._exit" in " ".join(r.stdout.split())


# Ctrl-C at each phase of a run: GPUVIZ_PAUSE_AT stops the run at that phase (and says so on
# stderr) until it is cancelled, so that SIGINT lands exactly there. "step" is inside the
# workload's own code (a long sleep), "finalizer" inside a finalizer that a garbage collection
# runs, where Python drops a KeyboardInterrupt: the cause of the old flaky exit code 0.
PHASES = {
    # phase: (pause at, kept trace?)
    "set-up": ("set-up", False),
    "profiling": ("profiling", True),
    "export": ("export", True),
    "timed": ("timed", True),
    "finishing": ("finishing", True),
    "step": (None, True),
    "finalizer": (None, True),
}


@pytest.mark.parametrize(
    ("phase", "isolate"),
    [(phase, False) for phase in PHASES]
    # With --isolate the child ignores SIGINT (the parent cancels it at its next step boundary):
    # a SIGINT from the child's own finalizer does nothing, a 30 s step would just be waited for.
    + [(phase, True) for phase in PHASES if phase not in ("step", "finalizer")],
    ids=lambda v: {False: "in-thread", True: "isolate"}.get(v, v),
)
def test_ctrl_c_exits_130_and_keeps_the_partial_trace(
    tmp_path: Path, phase: str, isolate: bool
) -> None:
    pause, kept = PHASES[phase]
    out = tmp_path / "t.json.gz"
    events = tmp_path / "e.jsonl"
    marker = tmp_path / "in-step"
    if phase == "finalizer":
        w = user(tmp_path, userfiles.SIGINT_IN_A_FINALIZER, "cyclic")
        params = ["-p", "sleep_s=0.05"]
    elif phase == "step":  # its second timed step sleeps 30 s after marking its start
        w = user(tmp_path, userfiles.LONG_STEP, "long_step")
        params = ["-p", f"marker={marker}"]
    else:
        w = user(tmp_path, userfiles.OK, "sleepy")
        params = ["-p", "sleep_s=0.05"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if pause:
        env["GPUVIZ_PAUSE_AT"] = pause
    cmd = [sys.executable, "-m", "gpuviz", "run", w, *params, "--steps", "200", "--device",
           "cpu", "--out", str(out), "--events", str(events)]  # fmt: skip
    proc = subprocess.Popen(
        cmd + (["--isolate"] if isolate else []),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        if phase != "finalizer":  # that one sends its own SIGINT
            assert proc.stderr is not None
            if pause:
                for line in proc.stderr:  # the run says where it waits
                    if line.strip() == f"gpuviz: paused at {pause}":
                        break
                else:
                    pytest.fail("the run ended before the pause")
            else:
                deadline = time.monotonic() + 120
                while not marker.exists():
                    assert time.monotonic() < deadline and proc.poll() is None
                    time.sleep(0.02)
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    last = json.loads(events.read_text().splitlines()[-1])
    assert last["type"] == "Cancelled"
    if kept:
        assert f"partial trace kept: {out}" in err and out.exists()
        assert last["partial_trace_path"] == out.name  # relative to the events file's folder
    else:
        assert "no trace was recorded yet" in err and not out.exists()


@pytest.mark.gpu
@pytest.mark.parametrize("pause", ["profiling", "export", "timed", "finishing"])
def test_ctrl_c_on_cuda_exits_130_and_keeps_the_trace(tmp_path: Path, pause: str) -> None:
    # On a GPU the profiler's export of 100k launches takes seconds: Ctrl-C during it (or any
    # other phase) still ends as Cancelled with the trace kept, and nothing is left running.
    out = tmp_path / "t.json.gz"
    events = tmp_path / "e.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuviz", "run", "loops", "-p", "n=100000", "--steps", "3",
         "--device", "cuda", "--out", str(out), "--events", str(events)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT), GPUVIZ_PAUSE_AT=pause),
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.strip() == f"gpuviz: paused at {pause}":
                break
        else:
            pytest.fail("the run ended before the pause")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert f"partial trace kept: {out}" in err and out.exists()
    assert json.loads(events.read_text().splitlines()[-1])["type"] == "Cancelled"


def test_gui_flag(tmp_path: Path) -> None:
    try:
        import gpuviz.gui.run.launch  # noqa: F401
    except ImportError:
        r = cli("run", "loops", "--gui")
        assert r.returncode == 2 and "the app is not built yet" in r.stderr
        return
    pytest.importorskip("PySide6")
    # bad input is refused before the app starts
    bad = cli("run", "loops", "-p", "n=-1", "--gui")
    assert bad.returncode == 2 and "n must be" in bad.stderr
    shot = tmp_path / "run.png"
    r = cli(
        "run",
        "loops",
        "-p",
        "n=5",
        "--steps",
        "1",
        "--device",
        "cpu",
        "--gui",
        "--screenshot",
        str(shot),
        "--out",
        str(tmp_path / "t.json.gz"),
    )
    assert r.returncode == 0, r.stderr
    assert shot.stat().st_size > 1000 and (tmp_path / "t.json.gz").exists()
