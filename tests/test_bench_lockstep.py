"""``benchmarks/bench_profile.py --lockstep`` on the CPU: a group's processes take turns.

The scripts' side (``--turns R,W`` in ``benchmarks/profile_workload.py`` and
``examples/gpt_train.py``), the rotating turns of a real run, and a process that dies mid-run.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.test_bench_stats import bench_profile_module
from tests.test_cli_profile import ROOT, SCRIPTS, _env

BENCH = ROOT / "benchmarks" / "bench_profile.py"


def _bench_cpu(
    tmp_path: Path, *args: str, timeout: float = 120
) -> tuple[subprocess.CompletedProcess[str], dict]:
    """Run ``bench_profile.py`` on the CPU's launch-bound step (30 steps of 30 ops) with
    ``args``; the process and its ``--json``."""
    out = tmp_path / "b.json"
    r = subprocess.run(
        [
            *(sys.executable, str(BENCH), "--device", "cpu", "--workloads", "launch"),
            *("--steps", "30", "--script-arg", "launch=--ops=30", *args, "--json", str(out)),
        ],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert r.returncode == 0, r.stderr
    return r, json.loads(out.read_text())


@pytest.mark.slow
def test_lockstep_runs_take_turns_step_by_step(tmp_path: Path) -> None:
    r, doc = _bench_cpu(tmp_path, "--pairs", "2", "--variants", "")
    assert doc["settings"]["lockstep"] is True
    assert [g["order"] for g in doc["groups"]] == [["bare", "profiled"], ["profiled", "bare"]]
    for g in doc["groups"]:
        assert g["lockstep"] and g["sched"]["steps"] == 30
        assert [len(run["times_ms"]) for run in g["runs"].values()] == [30, 30]
        # Step k: the turn goes first to run k % 2 (the byte exchanges the driver saw).
        assert g["turns"] == [[k % 2, (k + 1) % 2] for k in range(30)]
    stepwise = doc["figures"]["outside"]["launch"]["profiled"]["outside_stepwise"]
    assert stepwise["n"] == 2 and 0.2 < stepwise["median"] < 5
    assert "stepwise (lockstep, step k against step k)" in r.stdout
    assert "profiled/bare" in r.stdout


@pytest.mark.slow
def test_groups_of_a_batch_start_together_and_are_recorded_as_groups_of_their_own(
    tmp_path: Path,
) -> None:
    _, doc = _bench_cpu(
        tmp_path,
        *("--pairs", "5", "--batch", "2", "--variants", "bare-again"),
        *("--variant-pairs", "2", "--cpus", "none"),
        timeout=180,
    )
    groups = doc["groups"]
    # A batch of the two variant groups (which count as pairs too), one of two plain pairs,
    # then the one pair left; orders alternate (and variants rotate) as separate groups' do.
    assert [(g["kind"], g["order"]) for g in groups] == [
        ("variants", ["bare", "profiled", "off:bare-again"]),
        ("variants", ["off:bare-again", "profiled", "bare"]),
        ("main", ["bare", "profiled"]),
        ("main", ["profiled", "bare"]),
        ("main", ["bare", "profiled"]),
    ]
    assert [g.get("batch") for g in groups] == [
        {"first_group": 0, "groups": 2, "at": [0, 1, 2]},
        {"first_group": 0, "groups": 2, "at": [3, 4, 5]},
        {"first_group": 2, "groups": 2, "at": [0, 1]},
        {"first_group": 2, "groups": 2, "at": [2, 3]},
        None,
    ]
    for g in groups:
        assert {len(run["times_ms"]) for run in g["runs"].values()} == {30}
    # A batch's processes took turns with one another, the first turn rotating.
    for first, n in ((0, 6), (2, 4)):
        rotating = [[(k + i) % n for i in range(n)] for k in range(30)]
        assert groups[first]["batch_turns"] == groups[first + 1]["batch_turns"] == rotating
    assert groups[4]["turns"] == [[k % 2, (k + 1) % 2] for k in range(30)]
    assert doc["done"] == {"variants/launch": 2, "main/launch": 5}
    fig = doc["figures"]["outside"]["launch"]
    assert fig["profiled"]["outside_median"]["n"] == 5
    assert fig["variants"]["bare-again"]["vs_bare_median"]["n"] == 2


def _taking_turns(cmd: list[str]) -> tuple[subprocess.Popen[bytes], int, int]:
    """Start ``cmd --turns R,W``; the driver's ends: (process, give, back)."""
    child_r, give = os.pipe()
    back, child_w = os.pipe()
    proc = subprocess.Popen(
        [*cmd, "--turns", f"{child_r},{child_w}"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=(child_r, child_w),
    )
    os.close(child_r)
    os.close(child_w)
    return proc, give, back


@pytest.mark.slow
@pytest.mark.parametrize(
    "script",
    [
        ["benchmarks/profile_workload.py", "--ops", "30"],
        ["examples/gpt_train.py", "--dim", "32", "--layers", "1", "--seq", "16", "--vocab", "64"],
    ],
    ids=["profile_workload", "gpt_train"],
)
def test_a_script_taking_turns_stops_when_the_driver_is_gone(
    tmp_path: Path, script: list[str]
) -> None:
    times = tmp_path / "t.json"
    cmd = [sys.executable, *script, "--device", "cpu", "--steps", "50", "--times", str(times)]
    proc, give, back = _taking_turns(cmd)
    try:
        for _ in range(2):  # two steps, each only when given its turn
            os.write(give, b"x")
            assert os.read(back, 1) == b"x"
        os.close(give)  # the driver is gone: the next read is empty
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        os.close(back)
    assert proc.returncode == 0, err.decode()
    assert b"Traceback" not in err
    assert not times.exists()  # stopped short: no step times


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_process_dying_mid_run_fails_its_group_without_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bp = bench_profile_module()
    # Both runs take turns through turns.py; the one under gpuviz profile exits at step 3.
    monkeypatch.setitem(bp.WORKLOADS, "launch", (SCRIPTS / "turns.py", (), 30))  # type: ignore[attr-defined]
    out = tmp_path / "b.json"
    before = {p.pid for p in psutil.Process().children(recursive=True)}  # earlier tests' own
    t0 = time.perf_counter()
    rc = bp.main(  # type: ignore[attr-defined]
        [
            *("--device", "cpu", "--workloads", "launch", "--pairs", "1", "--variants", ""),
            *("--steps", "30", "--script-arg", "launch=--die-at=3", "--run-timeout", "60"),
            *("--out", str(tmp_path / "runs"), "--json", str(out)),
        ]
    )
    took = time.perf_counter() - t0
    assert rc == 0  # one failure: not yet a broken run kind
    assert took < 40, f"{took:.0f} s: waited for a turn that could not come"
    doc = json.loads(out.read_text())
    (group,) = doc["groups"]
    prof, bare = group["runs"]["profiled"], group["runs"]["bare"]
    assert prof["error"].startswith("exited during step 3:"), prof["error"]
    assert "dying at step 3" in prof["error"]  # its stderr
    assert bare["error"] == "stopped: profiled failed" and bare["stopped_by"] == "profiled"
    assert doc["failed_runs"] == {"profiled": 1}
    assert doc["figures"]["outside"]["launch"]["profiled"]["outside_median"]["n"] == 0
    assert not list((tmp_path / "runs").iterdir())  # its files dropped (no --keep)
    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    assert left == []  # none of this run's left running, none a zombie
    assert "exited during step 3" in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_turns_work_with_descriptors_past_1023(tmp_path: Path) -> None:
    # A long test session (CI) holds over a thousand descriptors, so the driver's pipes get
    # numbers that select() refuses ("filedescriptor out of range"); the driver must still
    # wait on them.
    bench_profile_module()  # puts benchmarks/ on the path
    lockstep = importlib.import_module("paired")  # the lockstep driver lives there
    resource = pytest.importorskip("resource")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if max(soft, hard if hard != resource.RLIM_INFINITY else 4096) < 1200:
        pytest.skip("this machine allows fewer than 1200 open files")
    if soft < 1200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1200, hard))
    r, w = os.pipe()
    held = [r, w]
    try:
        while held[-1] < 1030:
            held.append(os.dup(r))
        cmd = [sys.executable, str(SCRIPTS / "turns.py"), "--steps", "3"]
        logs = [(tmp_path / "out", tmp_path / "err")]
        players = lockstep.start([(cmd, dict(os.environ))], logs, tmp_path)
        assert players[0].back > 1023  # the case at hand
        rounds = lockstep.play(players, 3, 30.0, time.perf_counter() + 30.0)
        lockstep.finish(players, 10.0)
        assert rounds == [[0], [0], [0]]
        assert players[0].proc.returncode == 0
        assert "took 3 turns" in (tmp_path / "out").read_text()
    finally:
        for fd in held:
            os.close(fd)
        if soft < 1200:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.slow
def test_own_window_variants_run_the_bare_script_with_a_torch_profiler_window(
    tmp_path: Path,
) -> None:
    # torch-cpu: no gpuviz; the script opens its own window where gpuviz's would be.
    bench = bench_profile_module()
    a = bench.parse_args(["--device", "cpu", "--variants", "torch-cpu,all", "--steps", "30"])
    sched = bench.main_schedule(a, "launch")
    b = bench.Bench(a, tmp_path, {"X": "1"}, None, None)
    own = bench.Run("launch", "off:torch-cpu", sched)
    assert not own.profiled and bench.Run("launch", "off:all", sched).profiled
    cmd, env = bench.command(b, own, tmp_path / "t.json", tmp_path / "t.json.gz")
    assert "gpuviz" not in cmd and env == {"X": "1", "TEARDOWN_CUPTI": "1"}
    assert cmd[cmd.index("--window-kind") + 1] == "cpu"
    assert cmd[cmd.index("--window-at") + 1] == str(sched.skip)
    assert cmd[cmd.index("--window-len") + 1] == str(sched.warmup + sched.active)
    again = bench.Run("launch", "off:bare-again", sched)  # A/A: the bare command, once more
    bare = bench.Run("launch", "bare", sched)
    assert not again.profiled
    assert bench.command(b, again, tmp_path / "t.json", tmp_path / "x") == bench.command(
        b, bare, tmp_path / "t.json", tmp_path / "x"
    )
    saving = bench.Run("launch", "off:torch-save", sched)  # the same window, saved as it ends
    cmd, env = bench.command(b, saving, tmp_path / "t.json", tmp_path / "s.json.gz")
    assert not saving.profiled and cmd[cmd.index("--window-save") + 1] == str(tmp_path / "s.json")
    # torch-sched: that window driven by a schedule, as gpuviz drives its own.
    run = bench.Run("launch", "off:torch-sched", sched)
    cmd, _ = bench.command(b, run, tmp_path / "t.json", tmp_path / "s.json.gz")
    assert not run.profiled and cmd[cmd.index("--window-warmup") + 1] == str(sched.warmup)
    assert cmd[cmd.index("--window-save") + 1] == str(tmp_path / "s.json")
    # torch-early: torch-sched's window after a dropped recording of the set-up, as gpuviz
    # profile's before the first step; torch-cuda: a CPU and CUDA window, not scheduled or saved.
    sched_flags = {"--window-warmup", "--window-save"}
    for name, kind, flags, absent in (
        ("torch-early", "cuda", {*sched_flags, "--window-early"}, set()),
        ("torch-cuda", "cuda", set(), {*sched_flags, "--window-early"}),
    ):
        cmd, env = bench.command(
            b, bench.Run("launch", f"off:{name}", sched), tmp_path / "t.json", tmp_path / "x"
        )
        assert cmd[cmd.index("--window-kind") + 1] == kind and "gpuviz" not in cmd
        assert cmd[cmd.index("--window-len") + 1] == str(sched.warmup + sched.active)
        assert flags <= set(cmd) and not absent & set(cmd) and env["TEARDOWN_CUPTI"] == "1"
    # no-window: gpuviz profile whose window is past the last step; the environment as profiled.
    late = bench.Run("launch", "off:no-window", sched)
    cmd, env = bench.command(b, late, tmp_path / "t.json", tmp_path / "x")
    assert late.profiled and env == {"X": "1"} and "gpuviz" in cmd
    skips = [int(cmd[i + 1]) for i, c in enumerate(cmd) if c == "--skip"]
    assert skips[0] == sched.skip and skips[-1] > sched.steps
    # The script's side: the window records the steps given, and the steps are all timed.
    argv = ["--steps", "12", "--ops", "9", "--times", str(tmp_path / "w.json")]
    argv += ["--window-kind", "cpu", "--window-at", "4", "--window-len", "3"]
    seen = _sin_ops_per_window([*argv, "--window-save", str(tmp_path / "saved.json")])
    assert seen == [9]  # 3 steps of 3 sin ops each, no more, no fewer
    assert len(json.loads((tmp_path / "w.json").read_text())) == 12
    saved = json.loads((tmp_path / "saved.json").read_text())["traceEvents"]
    assert sum(e.get("name") == "aten::sin" for e in saved) == 9


@pytest.mark.slow
@pytest.mark.parametrize("flags", [[], ["--window-early"]])
def test_the_schedule_driven_window_records_its_active_steps_and_saves_them(
    tmp_path: Path, flags: list[str]
) -> None:
    # torch-sched's script side: the window run as gpuviz runs it (warm-up, then recording,
    # prof.step() at each of its steps), saved from on_trace_ready. torch-early's: the same after a recording of the set-up, which leaks nothing into it.
    saved = tmp_path / "saved.json"
    argv = ["--steps", "12", "--ops", "9", "--device", "cpu", "--times", str(tmp_path / "w.json")]
    argv += ["--window-kind", "cpu", "--window-at", "4", "--window-len", "4"]
    argv += ["--window-warmup", "1", "--window-save", str(saved), *flags]
    r = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "profile_workload.py"), *argv],
        env=_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    events = json.loads(saved.read_text())["traceEvents"]
    assert sum(e.get("name") == "aten::sin" for e in events) == 9  # 3 recorded steps of 3
    steps = {e["name"] for e in events if str(e.get("name", "")).startswith("ProfilerStep#")}
    assert steps == {"ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"}
    assert len(json.loads((tmp_path / "w.json").read_text())) == 12


@pytest.mark.slow
def test_gpt_step_workload_opens_its_own_window_on_gpt_trains_step(tmp_path: Path) -> None:
    # gpt_train.py has no window flags, so the own-window variants run on its step in
    # profile_workload.py (--kind gpt): the same model, its forward and backward recorded.
    saved = tmp_path / "saved.json"
    argv = ["--kind", "gpt", "--steps", "8", "--device", "cpu", "--times", str(tmp_path / "w.json")]
    argv += ["--window-kind", "cpu", "--window-at", "3", "--window-len", "2", "--window-save"]
    r = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "profile_workload.py"), *argv, str(saved)],
        env=_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert len(json.loads((tmp_path / "w.json").read_text())) == 8
    names = [e.get("name", "") for e in json.loads(saved.read_text())["traceEvents"]]
    # Two steps of gpt_train.py's GPT: its 2 CPU-sized blocks' attention each step, and the
    # loss's backward and AdamW's step each time.
    assert names.count("aten::scaled_dot_product_attention") == 2 * 2
    assert names.count("Optimizer.step#AdamW.step") == 2
    # Shapes recorded, as gpuviz's window records them.
    events = json.loads(saved.read_text())["traceEvents"]
    assert any("Input Dims" in e.get("args", {}) for e in events)
    # And bench_profile refuses those variants on gpt_train.py itself, pointing to gpt-step.
    bench = bench_profile_module()
    with pytest.raises(SystemExit):
        bench.parse_args(["--variants", "torch-sched", "--variant-workloads", "gpt"])
    a = bench.parse_args(["--variants", "torch-sched", "--variant-workloads", "gpt-step"])
    run = bench.Run("gpt-step", "off:torch-sched", bench.main_schedule(a, "gpt-step"))
    cmd, _ = bench.command(bench.Bench(a, tmp_path, {}, None, None), run, saved, saved)
    assert cmd[cmd.index("--kind") + 1] == "gpt" and "--window-warmup" in cmd


def test_a_schedule_without_a_window_is_refused() -> None:
    r = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "profile_workload.py"), "--device", "cpu",
         "--steps", "2", "--window-warmup", "1"],
        env=_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 2 and "--window-warmup: a schedule drives" in r.stderr


def _sin_ops_per_window(argv: list[str]) -> list[int]:
    """Run ``profile_workload.py ARGV`` and count, each time a window stops, its ``aten::sin``
    ops (where ``torch.profiler``'s ``stop()`` returns)."""
    cls, name, events = ("torch.profiler.profile", "stop", "p.events()")
    code = (
        "import runpy, sys, torch\n"
        "seen = []\n"
        f"real = {cls}.{name}\n"
        "def counted(p, *a):\n"
        "    out = real(p, *a)\n"
        f"    seen.append(sum(e.name == 'aten::sin' for e in {events}))\n"
        "    return out\n"
        f"{cls}.{name} = counted\n"
        f"sys.argv = ['w', *{argv!r}]\n"
        f"runpy.run_path({str(ROOT / 'benchmarks' / 'profile_workload.py')!r}, run_name='__main__')\n"
        "print(seen)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    seen: list[int] = json.loads(r.stdout.strip().splitlines()[-1])
    return seen
