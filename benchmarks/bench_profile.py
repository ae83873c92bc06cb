"""``gpuviz profile``'s cost: a training script bare against the same script under it.

    python benchmarks/bench_profile.py --out DIR            # GPT-like example, ~2-4 min on an H100
    python benchmarks/bench_profile.py --out DIR --pairs 2 --steps 60 --skip 20 -- --dim 64

Runs ``examples/gpt_train.py`` (or ``--script``) bare (``python script.py``) and under
``gpuviz profile``, interleaved in pairs (bare first, then profiled first, ...), each in a
fresh process. Both runs time their steps the same way: the script's own ``--times`` file,
one wall time per step from ``perf_counter`` at each step's end. Figures, side by side:

- outside the window: the median step time of the steps outside the profiled window and after
  the start-up (``--settle`` steps), bare and profiled, and the ratio (target: at most 1%
  slower). The step right after the window (it may pay for the trace export) is left out.
- the window's cost per step: the median of the recorded steps, profiled minus bare.
- the export stall: how long writing the trace held the script (``gpuviz profile --json``'s
  ``exports``), and the write alone.

Writes the traces and times under ``--out``; prints a few lines.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT, check=False)
    if r.returncode != 0:
        sys.stderr.write(r.stdout[-2000:] + r.stderr[-4000:])
        raise SystemExit(f"bench_profile: {' '.join(cmd[:4])}… failed ({r.returncode})")
    return time.perf_counter() - t, r.stdout


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="folder for traces and step times")
    p.add_argument("--script", default=str(ROOT / "examples" / "gpt_train.py"))
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--skip", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--active", type=int, default=10)
    p.add_argument("--settle", type=int, default=20, help="start-up steps left out of figures")
    p.add_argument("script_args", nargs="*", help="after --: the script's own arguments")
    a = p.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(x for x in (str(ROOT), env.get("PYTHONPATH")) if x)
    window = range(a.skip, a.skip + a.warmup + a.active)
    recorded = range(a.skip + a.warmup, a.skip + a.warmup + a.active)
    outside = [
        k for k in range(a.settle, a.steps) if k not in window and k != window.stop
    ]  # the step after the window may hold the export
    bare_med, prof_med, win_bare, win_prof, stalls, writes = [], [], [], [], [], []
    wall = {"bare": 0.0, "profiled": 0.0}
    for pair in range(a.pairs):
        order = ("bare", "profiled") if pair % 2 == 0 else ("profiled", "bare")
        for kind in order:
            times_file = out / f"{kind}-{pair}.times.json"
            script = [a.script, "--steps", str(a.steps), "--times", str(times_file), *a.script_args]
            if kind == "bare":
                cmd = [sys.executable, *script]
            else:
                cmd = [
                    *(sys.executable, "-m", "gpuviz", "profile", "--json"),
                    *("--skip", str(a.skip), "--warmup", str(a.warmup), "--active", str(a.active)),
                    *("--out", str(out / f"trace-{pair}.json.gz"), *script),
                ]
            secs, stdout = _run(cmd, env)
            wall[kind] += secs
            t = json.loads(times_file.read_text())
            if kind == "bare":
                bare_med.append(statistics.median(t[k] for k in outside))
                win_bare.append(statistics.median(t[k] for k in recorded))
            else:
                prof_med.append(statistics.median(t[k] for k in outside))
                win_prof.append(statistics.median(t[k] for k in recorded))
                result: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
                for e in result.get("exports", []):
                    stalls.append(e.get("stall_s", float("nan")))
                    writes.append(e.get("write_s", float("nan")))
            print(f"pair {pair} {kind:<8} {secs:6.1f} s", flush=True)
    b, q = statistics.median(bare_med), statistics.median(prof_med)
    ratios = [y / x for x, y in zip(bare_med, prof_med)]
    print(
        f"outside the window ({len(outside)} steps/run, median of {a.pairs} runs): bare {b:.3f} ms, "
        f"profiled {q:.3f} ms, {100 * (q / b - 1):+.2f}% (per pair: "
        + ", ".join(f"{100 * (r - 1):+.2f}%" for r in ratios)
        + ")"
    )
    wb, wp = statistics.median(win_bare), statistics.median(win_prof)
    print(
        f"profiled window ({a.active} recorded steps): {wp:.3f} ms/step vs {wb:.3f} bare: "
        f"{wp - wb:+.3f} ms per step ({wp / wb:.2f}x)"
    )
    if stalls:
        print(
            f"export stall: median {statistics.median(stalls):.3f} s (trace write "
            f"{statistics.median(writes):.3f} s); total wall bare {wall['bare']:.1f} s, "
            f"profiled {wall['profiled']:.1f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
