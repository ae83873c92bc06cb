"""The parsers of the commands that run work: workloads, run and profile
(:mod:`gpuviz.cli` adds them by name)."""

from __future__ import annotations

import argparse
from typing import Any

from gpuviz.cli.options import size


def add_workloads(sub: Any) -> None:
    w = sub.add_parser("workloads", help="list workloads and their parameters")
    w.add_argument("--json", action="store_true")


def add_run(sub: Any) -> None:
    r = sub.add_parser("run", help="run a workload under the profiler (headless, or --gui)")
    r.add_argument("workload", metavar="NAME|FILE.py:FUNC")
    r.add_argument("-p", dest="params", action="append", default=[], metavar="k=v")
    r.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: cuda if present)")
    r.add_argument(
        "--gpus", default=None, metavar="N|LIST", help="GPU count or list, e.g. 2 or 0,2,3"
    )
    r.add_argument("--steps", type=int, default=None, help="steps per strategy (default 5)")
    r.add_argument("--out", default=None, metavar="T.json.gz|DIR")
    r.add_argument(
        "--events", default=None, metavar="E.jsonl", help="write the event stream as JSON lines"
    )
    r.add_argument(
        "--isolate",
        action="store_true",
        help="run in a child process: a workload that calls os._exit() or crashes then ends "
        "that child, not gpuviz (without it, it ends gpuviz with no word and no trace)",
    )
    r.add_argument("--rank-timeout", type=float, default=300.0, metavar="S")
    r.add_argument("--no-profile", action="store_true", help="time only; record no trace")
    r.add_argument(
        "--memory-snapshot",
        action="store_true",
        help="record CUDA allocator history over the profiled steps: NAME.memory.pickle beside "
        "the trace (written at out of memory too)",
    )
    r.add_argument(
        "--snapshot-entries",
        type=int,
        default=None,
        metavar="N",
        help="allocator history ring buffer (default 100000)",
    )
    r.add_argument("--json", action="store_true", help="print one result object")
    r.add_argument("--gui", action="store_true", help="run inside the app")
    r.add_argument("--screenshot", metavar="OUT.png")
    r.add_argument(
        "--size",
        type=size,
        default=None,
        metavar="WxH",
        help="the window's size (default: fitted to the screen; 1600x900 with --screenshot)",
    )


PROFILE_USAGE = (
    "gpuviz profile [OPTIONS] SCRIPT.py [ARGS...]\n"
    "       gpuviz profile [OPTIONS] -m MODULE [ARGS...]\n"
    "       torchrun ... -m gpuviz profile [OPTIONS] --out DIR SCRIPT.py [ARGS...]"
)


def add_profile(sub: Any) -> None:
    # allow_abbrev=False: the split of gpuviz's options from the script's needs exact names.
    pr = sub.add_parser(
        "profile",
        help="profile your own script, unmodified (steps end at optimizer.step())",
        usage=PROFILE_USAGE,
        allow_abbrev=False,
        description=(
            "Run a script (or -m MODULE) under the profiler, as `python SCRIPT.py ARGS` would. "
            "Options before SCRIPT belong to gpuviz, everything after it to the script. Steps "
            "end at each optimizer.step(), at each return of --step-fn, or at gpuviz.step(). "
            "The exit status is the script's."
        ),
    )
    pr.add_argument("-m", dest="module", metavar="MODULE", help="run a module, as python -m")
    sched = pr.add_argument_group("steps (torch.profiler.schedule)")
    sched.add_argument(
        "--skip", type=int, default=5, metavar="N", help="steps left alone first (5)"
    )
    sched.add_argument("--warmup", type=int, default=2, metavar="N", help="warm-up steps (2)")
    sched.add_argument("--active", type=int, default=5, metavar="N", help="recorded steps (5)")
    sched.add_argument(
        "--repeat", type=int, default=1, metavar="N", help="windows (1; 0: until the script ends)"
    )
    sched.add_argument(
        "--stop", action="store_true", help="end the script after the last window (trace written)"
    )
    sched.add_argument(
        "--step-fn",
        metavar="MOD:QUAL",
        help="each return of this function ends a step (e.g. __main__:generate, model:GPT.forward)",
    )
    sched.add_argument(
        "--duration",
        type=float,
        default=10.0,
        metavar="S",
        help="with no step at all, the first S seconds are recorded as one range (10)",
    )
    rec = pr.add_argument_group("recording")
    rec.add_argument("--record-shapes", action="store_true", help="record input shapes")
    rec.add_argument(
        "--stack",
        action="store_true",
        help="record Python stacks in the no-step range too (the profiled windows have them)",
    )
    rec.add_argument(
        "--no-stack",
        action="store_true",
        help="no Python stacks (the Modules and Source views and breakdown --by module/line need them)",
    )
    rec.add_argument("--memory", action="store_true", help="record allocations (profile_memory)")
    rec.add_argument(
        "--memory-snapshot",
        action="store_true",
        help="record the CUDA allocator's history: NAME.memory.pickle beside the trace",
    )
    rec.add_argument(
        "--snapshot-entries", type=int, default=100_000, metavar="N", help="its ring buffer size"
    )
    rec.add_argument(
        "--compile-info",
        action="store_true",
        help="torch.compile: Inductor writes which modules and lines each compiled kernel comes "
        "from to NAME.compile/ beside the trace (its debug trace with provenance tracking, "
        "caches off: graphs compile afresh), so breakdown, advise and the app place compiled "
        "kernels on the model's modules and lines",
    )
    out = pr.add_argument_group("output")
    out.add_argument(
        "--out",
        metavar="T.json.gz|DIR",
        help="trace file (default ./gpuviz-runs/SCRIPT-STAMP.json.gz); a folder under torchrun",
    )
    out.add_argument("--events", metavar="E.jsonl", help="write the event stream as JSON lines")
    out.add_argument("--events-fd", type=int, help=argparse.SUPPRESS)
    out.add_argument(
        "--json", action="store_true", help="print the result object as the last line of stdout"
    )
    pr.add_argument(
        "--nproc-per-node",
        type=int,
        metavar="N",
        help="start N processes with torch.distributed.run (one trace per rank in --out DIR)",
    )


__all__ = ["PROFILE_USAGE", "add_profile", "add_run", "add_workloads"]
