"""``gpuviz profile``: real scripts run unmodified under the profiler, on the CPU.

Each test starts ``python -m gpuviz profile`` in a child process, as a user would, and checks
what it left: the exit status, the script's own output, gpuviz's lines on stderr, the trace
(read with plain ``json``) and the event stream (plain ``json`` lines). Expected figures come
from the schedule's definition, computed here, never from gpuviz's own answers.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from subproc import gpuviz_env

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "tests" / "data" / "scripts"
TIMEOUT_S = 300


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """:func:`subproc.gpuviz_env` without a launcher's rank (unless ``extra`` sets one)."""
    launcher = ("RANK", "WORLD_SIZE", "LOCAL_RANK")
    env = {k: v for k, v in gpuviz_env().items() if k not in launcher}
    env.update(extra or {})
    return env


def profile(
    *args: str, cwd: Path = SCRIPTS, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m gpuviz profile ARGS`` in ``cwd``; on a timeout its whole process group is
    killed (torchrun's ranks included), so that nothing outlives the test."""
    cmd = [sys.executable, "-m", "gpuviz", "profile", *args]
    with subprocess.Popen(
        cmd,
        cwd=cwd,
        env=_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        try:
            out, err = proc.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            # torchrun starts its ranks in sessions of their own: killing the group leaves
            # them, holding the pipes open, and communicate() would then wait for ever.
            tree = psutil.Process(proc.pid).children(recursive=True)
            os.killpg(proc.pid, signal.SIGKILL)
            for p in tree:
                with contextlib.suppress(psutil.Error):
                    p.kill()
            out, err = proc.communicate(timeout=60)
            pytest.fail(f"gpuviz profile did not end in {TIMEOUT_S} s: {err[-3000:]}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def trace_events(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def step_ranges(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """The CPU ``ProfilerStep#N`` ranges of a trace."""
    return [
        e
        for e in trace["traceEvents"]
        if e.get("ph") == "X"
        and str(e.get("name", "")).startswith("ProfilerStep#")
        and e.get("cat") == "user_annotation"
    ]


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def expected_profiled(step: int, skip: int, warmup: int, active: int, repeat: int = 1) -> bool:
    """torch.profiler.schedule's rule, written out: is the profiler on during ``step``?"""
    if step < skip:
        return False
    window = (step - skip) // (warmup + active)
    return not (repeat and window >= repeat)


@pytest.mark.slow
def test_training_script_gives_four_profiler_steps_and_twenty_timed(tmp_path: Path) -> None:
    out, ev = tmp_path / "t.json.gz", tmp_path / "e.jsonl"
    r = profile(
        *("--skip", "3", "--warmup", "1", "--active", "4"),
        *("--out", str(out), "--events", str(ev)),
        *("train_mlp.py", "--lr", "3e-4", "--skip", "9"),
    )
    assert r.returncode == 0, r.stderr
    # The script ran as __main__ with its own argv (gpuviz's --skip stayed gpuviz's).
    assert "trained 20 steps; argv ['--lr', '3e-4', '--skip', '9']; name __main__" in r.stdout
    assert "gpuviz: trace:" in r.stderr
    assert all(line.startswith(("gpuviz:", "USDT")) for line in r.stderr.splitlines() if line)

    trace = trace_events(out)
    names = sorted({e["name"] for e in step_ranges(trace)})
    assert names == [f"ProfilerStep#{k}" for k in range(4, 8)]  # exactly the 4 recorded steps
    # The optimizer's range nests inside its step's range, never across a boundary.
    ranges = step_ranges(trace)
    for e in trace["traceEvents"]:
        if str(e.get("name", "")).startswith("Optimizer.step#") and e.get("ph") == "X":
            assert any(
                r["ts"] <= e["ts"] and e["ts"] + e["dur"] <= r["ts"] + r["dur"] for r in ranges
            ), e

    stream = events(ev)
    assert stream[0]["type"] == "Started" and stream[0]["workload"] == "profile:train_mlp.py"
    timed = [e for e in stream if e["type"] == "StepTimed"]
    assert [e["step"] for e in timed] == list(range(20))
    assert [e["profiled"] for e in timed] == [expected_profiled(k, 3, 1, 4) for k in range(20)]
    assert all(e["wall_ms"] > 0 and "gpu_ms" not in e for e in timed)  # no GPU here
    assert any(e["type"] == "MemorySample" and e["rss_bytes"] > 0 for e in stream)
    assert [e["type"] for e in stream if e["type"] == "TraceReady"] == ["TraceReady"]
    end = stream[-1]
    assert end["type"] == "Finished"
    res = end["result"]
    assert res["steps"] == 20 and res["step_source"] == "optimizer.step()"
    unprofiled = sorted(
        e["wall_ms"] for e in timed if not e["profiled"] and e["step"] > 0
    )  # step 0 holds the start-up
    assert res["unprofiled_steps"] == len(unprofiled) == 14
    assert res["wall_ms"]["median"] == pytest.approx((unprofiled[6] + unprofiled[7]) / 2)


@pytest.mark.slow
def test_module_with_manual_steps(tmp_path: Path) -> None:
    out = tmp_path / "m.json.gz"
    r = profile(
        "--skip", "2", "--warmup", "1", "--active", "3", "--out", str(out),
        "-m", "steppkg.manual", "a", "--b",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "name __main__ spec steppkg.manual" in r.stdout
    assert "manual.py args ['a', '--b']" in r.stdout  # sys.argv[0] is the module's file
    assert f"path0 {SCRIPTS}" in r.stdout  # python -m puts the working folder first
    names = sorted({e["name"] for e in step_ranges(trace_events(out))})
    assert names == ["ProfilerStep#3", "ProfilerStep#4", "ProfilerStep#5"]
    assert "9 steps (gpuviz.step())" in r.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("step_fn", "expected"),
    [("__main__:generate", 10), ("infer_model:Generator.forward", 10)],
)
def test_step_fn_on_an_inference_script(tmp_path: Path, step_fn: str, expected: int) -> None:
    out, ev = tmp_path / "i.json.gz", tmp_path / "e.jsonl"
    r = profile(
        *("--skip", "2", "--warmup", "1", "--active", "3", "--out", str(out)),
        *("--events", str(ev), "--step-fn", step_fn, "infer.py", str(expected)),
    )
    assert r.returncode == 0, r.stderr
    assert f"generated {expected}" in r.stdout
    assert len([e for e in events(ev) if e["type"] == "StepTimed"]) == expected
    names = sorted({e["name"] for e in step_ranges(trace_events(out))})
    assert names == ["ProfilerStep#3", "ProfilerStep#4", "ProfilerStep#5"]


@pytest.mark.slow
def test_sys_exit_status_is_kept_with_the_trace(tmp_path: Path) -> None:
    out, ev = tmp_path / "x.json.gz", tmp_path / "e.jsonl"
    r = profile(
        "--skip", "2", "--warmup", "1", "--active", "3", "--out", str(out),
        "--events", str(ev), "ends.py", "exit",
    )  # fmt: skip
    assert r.returncode == 3
    assert len({e["name"] for e in step_ranges(trace_events(out))}) == 3
    assert events(ev)[-1]["type"] == "Failed"
    assert "exited with status 3" in events(ev)[-1]["error"]


@pytest.mark.slow
def test_exception_gives_1_the_scripts_traceback_and_a_partial_trace(tmp_path: Path) -> None:
    out, ev = tmp_path / "r.json.gz", tmp_path / "e.jsonl"
    r = profile(
        "--skip", "2", "--warmup", "1", "--active", "20", "--out", str(out),
        "--events", str(ev), "ends.py", "raise",
    )  # fmt: skip
    assert r.returncode == 1
    tb = r.stderr[r.stderr.index("Traceback (most recent call last):") :]
    frames = re.findall(r'File "([^"]+)", line \d+', tb)
    assert [Path(f).name for f in frames] == ["ends.py", "ends.py"]  # as python prints it
    assert "ValueError: the script failed at step 8" in tb
    # Steps 3..8 were recorded when the exception came: a partial window of 6 steps.
    names = {e["name"] for e in step_ranges(trace_events(out))}
    assert {f"ProfilerStep#{k}" for k in range(3, 9)} <= names
    end = events(ev)[-1]
    assert end["type"] == "Failed" and end["partial_trace_path"]
    assert "ValueError" in end["error"] and "fail_here" in end["traceback"]


@pytest.mark.slow
def test_ctrl_c_gives_130_and_a_partial_trace(tmp_path: Path) -> None:
    out, ev = tmp_path / "c.json.gz", tmp_path / "e.jsonl"
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "gpuviz", "profile", "--skip", "2", "--warmup", "1"),
            *("--active", "20", "--out", str(out), "--events", str(ev), "ends.py", "sleep"),
        ],
        cwd=SCRIPTS,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "waiting for Ctrl-C"
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == 130, err
    assert "KeyboardInterrupt" in err and "interrupted (Ctrl-C)" in err
    assert str(out) in err  # the path is printed
    names = {e["name"] for e in step_ranges(trace_events(out))}
    assert {f"ProfilerStep#{k}" for k in range(3, 9)} <= names
    end = events(ev)[-1]
    assert end["type"] == "Cancelled" and end["partial_trace_path"] == out.name


@pytest.mark.slow
def test_stop_ends_the_script_after_the_last_window(tmp_path: Path) -> None:
    out, ev = tmp_path / "s.json.gz", tmp_path / "e.jsonl"
    r = profile(
        "--skip", "2", "--warmup", "1", "--active", "2", "--repeat", "2", "--stop",
        "--out", str(out), "--events", str(ev), "ends.py", "none",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "reached the end" not in r.stdout  # stopped long before its 100 steps
    assert "stopped by --stop" in r.stderr
    last = 2 + 2 * (1 + 2)  # skip + repeat * (warmup + active) steps
    assert len([e for e in events(ev) if e["type"] == "StepTimed"]) == last
    assert {e["name"] for e in step_ranges(trace_events(out))} == {
        "ProfilerStep#3",
        "ProfilerStep#4",
    }
    second = tmp_path / "s.window-2.json.gz"
    assert {e["name"] for e in step_ranges(trace_events(second))} == {
        "ProfilerStep#6",
        "ProfilerStep#7",
    }


@pytest.mark.slow
def test_a_scripts_own_profiler_is_left_alone(tmp_path: Path) -> None:
    r = profile("--skip", "2", "--out", str(tmp_path / "o.json.gz"), "ends.py", "own-profiler")
    assert r.returncode == 0, r.stderr
    assert "own profiler saw True" in r.stdout  # the script's profiler worked
    assert "reached the end" in r.stdout
    assert "the script starts torch.profiler itself (ends.py:" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.slow
def test_no_step_records_the_first_seconds_as_one_range(tmp_path: Path) -> None:
    out = tmp_path / "n.json.gz"
    r = profile("--duration", "1", "--out", str(out), "no_steps.py", "3")
    assert r.returncode == 0, r.stderr
    assert "ran " in r.stdout
    assert "no step was seen" in r.stderr and "--step-fn" in r.stderr
    trace = trace_events(out)
    rng = [e for e in trace["traceEvents"] if e.get("name") == "gpuviz/no-step range"]
    assert len(rng) >= 1
    assert 0.5e6 < rng[0]["dur"] < 3e6  # about the first --duration second (µs)


@pytest.mark.slow
def test_rank_from_the_environment_writes_rank_file_with_distributed_info(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"}
    r = profile("--skip", "2", "--active", "2", "--out", str(out), "ends.py", "none", env=env)
    assert r.returncode == 0, r.stderr
    f = out / "rank-1.json.gz"
    text = gzip.open(f, "rt").read()
    assert re.search(r'"rank":\s+(\d+)', text).group(1) == "1"  # HTA's own rank regex
    assert json.loads(text)["distributedInfo"] == {"rank": 1, "world_size": 2}
    bad = profile("--out", str(tmp_path / "x.json.gz"), "ends.py", "none", env=env)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "give --out a folder" in bad.stderr


@pytest.mark.slow
def test_torchrun_two_gloo_ranks_merge_in_summary(tmp_path: Path) -> None:
    out = tmp_path / "ddp"
    r = profile(
        "--nproc-per-node", "2", "--skip", "2", "--warmup", "1", "--active", "3",
        "--out", str(out), "ddp_gloo.py",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    # Rank 0's findings are its own trace's; the launcher's are over both ranks, before its
    # last line.
    assert "gpuviz: advisor, " not in r.stderr
    assert r.stderr.rstrip().splitlines()[-1].startswith("gpuviz: traces of every rank: ")
    assert sorted(p.name for p in out.iterdir() if p.name.endswith(".json.gz")) == [
        "rank-0.json.gz",
        "rank-1.json.gz",
    ]
    for rank in (0, 1):
        info = trace_events(out / f"rank-{rank}.json.gz")["distributedInfo"]
        assert info["rank"] == rank and info["world_size"] == 2
    s = subprocess.run(
        [sys.executable, "-m", "gpuviz", "summary", str(out), "--json"],
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(s.stdout)["ranks"] == [0, 1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing_script.py"], "missing_script.py: no such script"),
        (["-m", "no_such_module_here"], "no module named 'no_such_module_here'"),
        (["--bogus", "ends.py"], "unrecognized arguments: --bogus (gpuviz's options come"),
        (["--stop", "--repeat", "0", "ends.py"], "--stop needs a number of windows"),
        (["--active", "0", "ends.py"], "--active 0: must be 1 or more"),
        (["--step-fn", "nocolon", "ends.py"], "--step-fn nocolon: expected MODULE:FUNCTION"),
        (["--out", "folder", "ends.py"], "--out folder: a trace file must end in .json"),
        ([], "name a script"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    r = profile(*args)
    assert r.returncode == 2
    assert message in r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


@pytest.mark.slow
def test_memory_snapshot_needs_cuda_and_the_run_goes_on(tmp_path: Path) -> None:
    out = tmp_path / "m.json.gz"
    r = profile(
        "--skip", "2", "--active", "2", "--stop", "--memory-snapshot", "--out", str(out),
        "ends.py", "none",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "--memory-snapshot: needs CUDA" in r.stderr
    assert out.exists() and not (tmp_path / "m.memory.pickle").exists()


def _report_heads(stderr: str) -> list[str]:
    """The first line of each end-of-run report (``gpuviz: SCRIPT: N steps (...)``)."""
    return re.findall(r"^gpuviz: \S+: \d+ steps \(.*$", stderr, flags=re.M)


@pytest.mark.slow
def test_a_forked_child_ends_with_its_own_status_and_leaves_the_trace_to_its_parent(
    tmp_path: Path,
) -> None:
    out, ev = tmp_path / "f.json.gz", tmp_path / "e.jsonl"
    r = profile(
        "--skip", "2", "--warmup", "1", "--active", "3", "--out", str(out),
        "--events", str(ev), "forks.py", "fork",
    )  # fmt: skip
    # As under plain python: the child's sys.exit(4) reaches the parent, its atexit runs.
    assert r.returncode == 4, r.stderr
    assert "child stepped 12" in r.stdout and "child atexit ran" in r.stdout
    assert "parent saw the child end with 4" in r.stdout
    assert len(_report_heads(r.stderr)) == 1, r.stderr  # the parent's report only
    assert "std::system_error" not in r.stderr and "failed" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.jsonl", "f.json.gz"]
    # The parent's steps 0..14 and its window of ProfilerStep#3..5; nothing of the child's.
    stream = events(ev)
    assert [e["type"] for e in stream].count("Started") == 1
    assert [e["step"] for e in stream if e["type"] == "StepTimed"] == list(range(15))
    assert [e["type"] for e in stream][-1] == "Failed"
    assert sorted({e["name"] for e in step_ranges(trace_events(out))}) == [
        f"ProfilerStep#{k}" for k in (3, 4, 5)
    ]


@pytest.mark.slow
def test_fork_start_dataloader_workers_leave_the_run_alone(tmp_path: Path) -> None:
    out, ev = tmp_path / "l.json.gz", tmp_path / "e.jsonl"
    r = profile(
        "--skip", "2", "--warmup", "1", "--active", "3", "--out", str(out),
        "--events", str(ev), "forks.py", "loader",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "loader stepped 12" in r.stdout
    assert len(_report_heads(r.stderr)) == 1 and "Traceback" not in r.stderr
    stream = events(ev)
    assert [e["step"] for e in stream if e["type"] == "StepTimed"] == list(range(12))
    assert stream[-1]["type"] == "Finished"
    assert len({e["name"] for e in step_ranges(trace_events(out))}) == 3


def _file_in_the_way(tmp_path: Path) -> Path:
    f = tmp_path / "a-file"
    f.write_text("not a folder")
    return f


@pytest.mark.parametrize(
    ("flag", "where", "message"),
    [
        ("--out", "in-the-way/t.json.gz", "cannot write in "),
        ("--out", "in-the-way/sub/t.json.gz", "cannot write in "),
        ("--events", "a-folder", "is a folder; name a file (E.jsonl)"),
        ("--events", "in-the-way/e.jsonl", "cannot write in "),
    ],
)
@pytest.mark.parametrize("command", ["profile", "run"])
def test_an_output_that_cannot_be_written_is_refused_before_the_script_runs(
    tmp_path: Path, command: str, flag: str, where: str, message: str
) -> None:
    (tmp_path / "a-folder").mkdir()
    in_the_way = _file_in_the_way(tmp_path)
    value = str(tmp_path / where.replace("in-the-way", in_the_way.name))
    before = sorted(p.name for p in tmp_path.iterdir())
    what = ["ends.py", "none"] if command == "profile" else ["loops", "--steps", "1"]
    r = subprocess.run(
        [sys.executable, "-m", "gpuviz", command, flag, value, *what],
        cwd=SCRIPTS,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert f"gpuviz {command}: {flag} {value}: {message}" in r.stderr
    assert r.stdout == ""  # nothing ran
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.slow
@pytest.mark.parametrize(
    ("step_fn", "why"),
    [
        ("__main__:nosuch", "infer.py defines no such function"),
        ("nosuchmod:f", "the script did not import nosuchmod"),
        ("infer_model:Nope", "infer_model has no Nope"),
    ],
)
def test_a_step_fn_that_never_resolves_falls_back_to_the_duration_range(
    tmp_path: Path, step_fn: str, why: str
) -> None:
    out = tmp_path / "s.json.gz"
    r = profile("--step-fn", step_fn, "--out", str(out), "infer.py", "4")
    assert r.returncode == 0, r.stderr
    assert "generated 4" in r.stdout
    said = [ln for ln in r.stderr.splitlines() if ln.startswith("gpuviz: --step-fn")]
    assert len(said) == 1, r.stderr
    assert said[0].startswith(f"gpuviz: --step-fn {step_fn}: {why}, so no step was marked")
    assert "recorded as one range instead (--duration)" in said[0]
    rng = [e for e in trace_events(out)["traceEvents"] if e.get("name") == "gpuviz/no-step range"]
    assert len(rng) == 1


@pytest.mark.slow
def test_a_step_fn_that_never_resolves_records_the_first_duration_seconds(
    tmp_path: Path,
) -> None:
    out = tmp_path / "n.json.gz"
    r = profile(
        "--duration", "1", "--step-fn", "nosuchmod:f", "--out", str(out), "no_steps.py", "3"
    )
    assert r.returncode == 0, r.stderr
    assert "ran " in r.stdout  # the script went on after the range
    assert "the script did not import nosuchmod" in r.stderr
    assert "the first 1.0 s were recorded as one range" in r.stderr
    rng = [e for e in trace_events(out)["traceEvents"] if e.get("name") == "gpuviz/no-step range"]
    assert 0.5e6 < rng[0]["dur"] < 3e6  # about the first --duration second (µs)
