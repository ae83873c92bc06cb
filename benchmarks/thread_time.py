"""Where a step's time goes, thread by thread, bare and under ``gpuviz profile`` (issue 22, 17).

    python benchmarks/thread_time.py                      # 4 processes each way, GPT steps
    python benchmarks/thread_time.py --kind launches      # launch cost after a profiler session
    python benchmarks/thread_time.py --procs 2 --steps 60 --marks 10,30,40,55   # a smoke test

``--kind steps``: processes of ``examples/gpt_train.py``'s model and loop (its GPU shape on a
GPU, its CPU shape elsewhere), bare and under ``gpuviz profile --skip SKIP``, one after the
other. Each reads every thread's CPU time (``/proc/self/task/*/schedstat``) and context
switches at the steps of ``--marks`` (pairs: a stretch before the window, one after it), and
the figures per stretch are: wall time a step, each thread's CPU time a step. On a launch-bound
step the main thread's and the autograd thread's CPU time add up to the wall time, so the
processes' spread there is the host's pace (the same instructions taking longer), and what
gpuviz adds shows as its own threads' time or as more CPU time on the script's threads.

``--kind launches``: processes that time small kernel launches and ``nn.Linear`` calls, each
round divided by a pure-Python loop timed beside it (the host's pace moves both), after a
``torch.profiler`` session of CPU and CUDA activity torn down as gpuviz does it, after a
CPU-only one, or with none: whether a finished session leaves each launch dearer.

Linux only (``/proc``); runs are pinned to ``--cpus`` where ``taskset`` exists.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def threads() -> dict[str, dict[str, Any]]:
    """Every thread of this process: its name, CPU and wait time (ns), context switches."""
    out: dict[str, dict[str, Any]] = {}
    for tid in os.listdir("/proc/self/task"):
        base = f"/proc/self/task/{tid}"
        try:
            with open(f"{base}/comm") as f:
                comm = f.read().strip()
            with open(f"{base}/schedstat") as f:
                cpu_ns, wait_ns, _ = (int(x) for x in f.read().split())
            with open(f"{base}/status") as f:
                status = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:  # the thread ended meanwhile
            continue
        out[tid] = {
            "comm": comm,
            "cpu_ns": cpu_ns,
            "wait_ns": wait_ns,
            "voluntary": int(status["voluntary_ctxt_switches"]),
            "involuntary": int(status["nonvoluntary_ctxt_switches"]),
        }
    return out


# ---------------------------------------------------------------------------------- children
def child_steps(out: str, marks: list[int]) -> None:
    """The GPT loop, reading the threads at ``marks``."""
    import torch
    from gpt_step import gpt_step  # benchmarks/, this script's folder

    cuda = torch.cuda.is_available()
    step = gpt_step("cuda" if cuda else "cpu", batches=64)
    seen: dict[int, Any] = {}
    for k in range(marks[-1] + 1):
        if k in marks:
            if cuda:
                torch.cuda.synchronize()
            seen[k] = {"t": time.perf_counter(), "threads": threads()}
        step(k)
    Path(out).write_text(json.dumps({"marks": seen}))


def child_launches(out: str, arm: str, rounds: int) -> None:
    """Launch and module-call cost after ``arm`` (none, cuda, cpu), per pure-Python loop."""
    if arm != "none":
        os.environ.setdefault("TEARDOWN_CUPTI", "1")
    import torch

    from gpuviz.engine.cupti import teardown_completed

    cuda = torch.cuda.is_available()
    dev = torch.device("cuda" if cuda else "cpu")
    x = torch.zeros(16, device=dev)
    lin = torch.nn.Linear(64, 64, device=dev)
    inp = torch.randn(8, 64, device=dev)

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    def launches(n: int = 1500) -> float:
        t = time.perf_counter()
        for _ in range(n):
            x.add_(1)
        sync()
        return (time.perf_counter() - t) / n * 1e6

    def modules(n: int = 300) -> float:
        t = time.perf_counter()
        for _ in range(n):
            lin(inp)
        sync()
        return (time.perf_counter() - t) / n * 1e6

    def loop() -> float:
        t = time.perf_counter()
        s = 0
        for i in range(30000):
            s += i * i
        return (time.perf_counter() - t) * 1e3

    for _ in range(5):
        launches(), modules(), loop()
    if arm != "none":
        acts = [torch.profiler.ProfilerActivity.CPU]
        if arm == "cuda" and cuda:
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        prof = torch.profiler.profile(activities=acts)
        prof.start()
        launches(20)
        with teardown_completed():
            prof.stop()
        del prof
    rows = []
    for _ in range(rounds):
        a = loop()
        launch, module = launches(), modules()
        per = (a + loop()) / 2
        rows.append({"launch_us": launch, "module_us": module, "loop_ms": per})
    Path(out).write_text(json.dumps({"arm": arm, "rounds": rows}))


# ------------------------------------------------------------------------------------ parent
def spans(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Per pair of marks: wall ms a step, and each thread's CPU us a step."""
    marks = doc["marks"]
    keys = sorted(marks, key=int)
    out = []
    for a, b in zip(keys[0::2], keys[1::2], strict=False):
        n = int(b) - int(a)
        ta, tb = marks[a]["threads"], marks[b]["threads"]
        per = {
            f"{t['comm']}:{tid}": (t["cpu_ns"] - ta.get(tid, {}).get("cpu_ns", 0)) / n / 1e3
            for tid, t in tb.items()
        }
        out.append(
            {
                "steps": f"{a}-{b}",
                "wall_ms": (marks[b]["t"] - marks[a]["t"]) / n * 1e3,
                "cpu_us": sum(per.values()),
                "threads_us": dict(sorted(per.items(), key=lambda kv: -kv[1])),
            }
        )
    return out


def run(cmd: list[str], cpus: str, env: dict[str, str]) -> None:
    if cpus and shutil.which("taskset"):
        cmd = ["taskset", "-c", cpus, *cmd]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")


def main(argv: list[str] | None = None) -> int:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kind", choices=("steps", "launches"), default="steps")
    p.add_argument("--procs", type=int, default=4, help="processes each way (4)")
    p.add_argument("--marks", default="60,260,330,530", help="steps read (pairs)")
    p.add_argument("--skip", type=int, default=280, help="gpuviz profile --skip (280)")
    p.add_argument("--rounds", type=int, default=60, help="--kind launches: rounds (60)")
    p.add_argument("--cpus", default="4-7" if (os.cpu_count() or 1) >= 8 else "")
    p.add_argument("--json", type=Path, help="write every figure here")
    p.add_argument("--child", nargs=2, metavar=("KIND", "OUT"), help=argparse.SUPPRESS)
    p.add_argument("--arm", default="none", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    marks = [int(m) for m in a.marks.split(",")]
    if a.child:
        if a.child[0] == "steps":
            child_steps(a.child[1], marks)
        else:
            child_launches(a.child[1], a.arm, a.rounds)
        return 0
    if len(marks) % 2 or marks != sorted(marks):
        p.error("--marks: pairs of steps, in order")
    path = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    me = [sys.executable, str(Path(__file__).resolve())]
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.procs):
            if a.kind == "steps":
                arms = {
                    "bare": [*me, "--child", "steps", f"{tmp}/out.json", "--marks", a.marks],
                    "profiled": [
                        sys.executable, "-m", "gpuviz", "profile", "--skip", str(a.skip),
                        "--out", f"{tmp}/t.json.gz", *me[1:], "--child", "steps",
                        f"{tmp}/out.json", "--marks", a.marks,
                    ],
                }  # fmt: skip
            else:
                arms = {
                    arm: [*me, "--child", "launches", f"{tmp}/out.json", "--arm", arm,
                          "--rounds", str(a.rounds)]
                    for arm in ("none", "cuda", "cpu")
                }  # fmt: skip
            for arm, cmd in arms.items():
                run(cmd, a.cpus, env)
                doc = json.loads(Path(f"{tmp}/out.json").read_text())
                if a.kind == "steps":
                    row = {"arm": arm, "proc": i, "spans": spans(doc)}
                    for s in row["spans"]:
                        top = "; ".join(
                            f"{k} {v:.0f}" for k, v in list(s["threads_us"].items())[:4]
                        )
                        print(
                            f"{arm:9} #{i} steps {s['steps']}: {s['wall_ms']:.3f} ms a step, "
                            f"CPU {s['cpu_us']:.0f} us ({top})",
                            flush=True,
                        )
                else:
                    r = doc["rounds"]
                    row = {
                        "arm": arm,
                        "proc": i,
                        "launch_us": statistics.median(x["launch_us"] for x in r),
                        "module_us": statistics.median(x["module_us"] for x in r),
                        "launch_per_loop": statistics.median(
                            x["launch_us"] / x["loop_ms"] for x in r
                        ),
                        "module_per_loop": statistics.median(
                            x["module_us"] / x["loop_ms"] for x in r
                        ),
                    }
                    print(
                        f"{arm:5} #{i}: launch {row['launch_us']:.2f} us "
                        f"({row['launch_per_loop']:.3f} per loop ms), module call "
                        f"{row['module_us']:.2f} us ({row['module_per_loop']:.3f})",
                        flush=True,
                    )
                results.append(row)
    if a.kind == "launches":
        for arm in ("none", "cuda", "cpu"):
            rows = [r for r in results if r["arm"] == arm]
            print(
                f"{arm}: median of {len(rows)} processes: launch "
                f"{statistics.median(r['launch_per_loop'] for r in rows):.3f}, module call "
                f"{statistics.median(r['module_per_loop'] for r in rows):.3f} (us per loop ms)"
            )
    if a.json:
        a.json.write_text(json.dumps({"kind": a.kind, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
