"""Does a ``torch.profiler`` window leave a cost on the steps after it? Within each process.

    python benchmarks/window_aftermath.py [--procs 8] [--arms none,teardown,attached]
        [--steps 100] [--json OUT.json]          # on a CUDA machine; --device cpu to try it

``gpuviz profile``'s cost on ``examples/gpt_train.py`` (issue 22, item 17) was measured over
pairs of processes, which differ from one another by about 16%: a 1% question then needs
hundreds of pairs. Here each process is its own control. It times ``--steps`` steps of the
same small GPT (bf16 autocast, fused AdamW, each step synchronized), then runs a window of 7
steps, then times ``--steps`` more; its figure is the median step after over the median step
before. The arms differ only in the window:

- ``none``: the 7 steps run plain (what the steps after a window give without one: the
  process's own drift, warming caches and clocks);
- ``teardown``: a ``torch.profiler`` window with CPU and CUDA activity, saved with
  ``export_chrome_trace``, ``TEARDOWN_CUPTI=1`` (as ``gpuviz profile`` sets it: Kineto
  finalizes CUPTI when the trace stops);
- ``attached``: the same with ``TEARDOWN_CUPTI=0`` (Kineto's default: CUPTI stays attached);
- ``cpu``: a window with CPU activity only, ``TEARDOWN_CUPTI`` unset;
- ``cpu-teardown``: the same with ``TEARDOWN_CUPTI=1``;
- ``cpu-empty``: a CPU-only profiler started and stopped with no step inside it (as
  ``gpuviz profile``'s recording before the first step ends when the script makes its
  optimizer), ``TEARDOWN_CUPTI=1``, then the 7 steps plain;
- ``cuda-empty``: the same with CPU and CUDA activity (that recording's own, on one GPU).

Processes run one at a time, the arms in turn (rotating which goes first). Each arm's figure is
the median of its processes' after/before ratios with a percentile-bootstrap 95% interval, and
against ``none`` the ratio of the two medians with an interval from resampling both sides.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from paired import format_ratio, median_interval

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ARMS = ("none", "teardown", "attached", "cpu", "cpu-teardown", "cpu-empty", "cuda-empty")
TEARDOWN = {"teardown": "1", "attached": "0", "cpu-teardown": "1", "cpu-empty": "1",
            "cuda-empty": "1"}  # fmt: skip
"""``TEARDOWN_CUPTI`` of each arm's process (unset for the others)."""
WINDOW_STEPS = 7  # gpuviz profile's default window: 2 warm-up and 5 recorded steps
SEED = 0
N_BOOT = 10_000


def child(arm: str, steps: int, device: str) -> dict[str, Any]:
    """One process's run: the steps before and after a window (see the module docstring)."""
    import torch
    from gpt_step import gpt_step  # benchmarks/, this script's folder

    cuda = device == "cuda"
    run_step = gpt_step(device)

    def step(k: int) -> float:
        t = time.perf_counter()
        run_step(k)
        return (time.perf_counter() - t) * 1e3

    for k in range(30):
        step(k)
    before = [step(k) for k in range(steps)]
    if arm == "none":
        for k in range(WINDOW_STEPS):
            step(k)
    elif arm in ("cpu-empty", "cuda-empty"):
        acts = [torch.profiler.ProfilerActivity.CPU]
        if arm == "cuda-empty" and cuda:
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        with torch.profiler.profile(activities=acts):
            pass
        for k in range(WINDOW_STEPS):
            step(k)
    else:
        acts = [torch.profiler.ProfilerActivity.CPU]
        if not arm.startswith("cpu") and cuda:  # teardown, attached
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        with tempfile.TemporaryDirectory() as tmp:
            with torch.profiler.profile(activities=acts) as prof:
                for k in range(WINDOW_STEPS):
                    step(k)
            prof.export_chrome_trace(os.path.join(tmp, "t.json"))
    step(0)  # the step right after the window (it may pay for the teardown)
    after = [step(k) for k in range(steps)]
    return {"arm": arm, "before": before, "after": after}


def figures(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per arm: the processes' after/before ratios, their median and interval
    (:func:`paired.median_interval`); against ``none``: the ratio of medians and its interval,
    from resampling both arms."""
    ratios: dict[str, np.ndarray] = {}
    for arm in ARMS:
        each = [statistics.median(x["after"]) / statistics.median(x["before"]) for x in runs
                if x["arm"] == arm]  # fmt: skip
        if each:
            ratios[arm] = np.asarray(each)
    out: dict[str, Any] = {}
    base = ratios.get("none")
    for arm, r in ratios.items():
        fig: dict[str, Any] = {**median_interval(r.tolist()), "ratios": r.tolist()}
        if arm != "none" and base is not None:
            rng = np.random.default_rng(SEED)
            ia = rng.integers(0, len(r), size=(N_BOOT, len(r)))
            ib = rng.integers(0, len(base), size=(N_BOOT, len(base)))
            rel = np.median(r[ia], axis=1) / np.median(base[ib], axis=1)
            fig["vs_none"] = float(np.median(r) / np.median(base))
            fig["vs_none_interval"] = [float(np.percentile(rel, 2.5)),
                                       float(np.percentile(rel, 97.5))]  # fmt: skip
        out[arm] = fig
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--procs", type=int, default=8, help="processes per arm (8)")
    p.add_argument("--arms", default="none,teardown,attached", help=f"of {','.join(ARMS)}")
    p.add_argument("--steps", type=int, default=100, help="timed steps before and after (100)")
    p.add_argument("--device", default=None, help="cuda (default where there is one) or cpu")
    p.add_argument("--json", type=Path, default=None, help="write every run and figure here")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.device is None:
        import torch

        a.device = "cuda" if torch.cuda.is_available() else "cpu"
    if a.child:
        print(json.dumps(child(a.child, a.steps, a.device)))
        return 0
    arms = [x for x in a.arms.split(",") if x]
    bad = [x for x in arms if x not in ARMS]
    if bad:
        p.error(f"--arms: unknown {bad}; choose from {','.join(ARMS)}")
    runs: list[dict[str, Any]] = []
    for i in range(a.procs):
        order = arms[i % len(arms) :] + arms[: i % len(arms)]
        for arm in order:
            env = dict(os.environ)
            env.pop("TEARDOWN_CUPTI", None)
            if arm in TEARDOWN:
                env["TEARDOWN_CUPTI"] = TEARDOWN[arm]
            cmd = [sys.executable, __file__, "--child", arm, "--steps", str(a.steps),
                   "--device", a.device]  # fmt: skip
            t = time.perf_counter()
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                print(done.stderr[-2000:], file=sys.stderr)
                return 1
            run = json.loads(done.stdout.strip().splitlines()[-1])
            runs.append(run)
            ratio = statistics.median(run["after"]) / statistics.median(run["before"])
            print(f"  {i + 1}/{a.procs} {arm:9s} before {statistics.median(run['before']):.3f} ms"
                  f"  after {statistics.median(run['after']):.3f} ms  ratio {ratio:.4f}"
                  f"  ({time.perf_counter() - t:.1f} s)", file=sys.stderr, flush=True)  # fmt: skip
    figs = figures(runs)
    for arm, f in figs.items():
        line = f"{arm:12s} after/before {format_ratio(f)}"
        if "vs_none" in f:
            lo, hi = f["vs_none_interval"]
            line += f"; against none {f['vs_none']:.4f} [{lo:.4f}, {hi:.4f}]"
        print(line)
    if a.json:
        a.json.write_text(json.dumps({"device": a.device, "steps": a.steps, "runs": runs,
                                      "figures": figs}, indent=1))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
