"""A large snapshot made from a real one (issue 25): ``gpuviz memory --json`` vs ``pickle.load``.

    python benchmarks/bench_snapshot_real.py [--entries 3000000] [--rounds 5]
        [--source tests/data/snapshots/snap_train.pickle.gz] [--dir /tmp/gpuviz-bench-snapreal]

The file is made by repeating the device trace of a snapshot recorded on an H100 (TinyGPT
training, 7,372 entries) until it has ``--entries`` entries: each repetition's times are shifted
past the previous one's end and its addresses past the previous one's range, so allocs and frees
still pair within it. As PyTorch writes them, frame dicts are shared by every entry (the pickle's
memo makes each one object), a frames list is shared as the recording shares it (an alloc and
its frees) but new in each repetition, and every entry has its own ``compile_context`` string.
The annotations are repeated the same way; the segments are the recording's final state. It
is pickled as ``torch.cuda.memory._dump_snapshot`` does, kept in ``--dir`` and reused.

Both contenders are whole processes, alternated in each round so that the machine's load hits
both alike, timed from start to exit, their peak memory read as ``VmHWM`` from
``/proc/self/status`` as each ends:

- ``pickle.load``: ``python -c 'import pickle; pickle.load(open(F, "rb"))'``.
- ``gpuviz``: ``gpuviz memory --json F`` (output to /dev/null).

It prints each round and the medians of time, peak and the per-round ratios. Targets: time at
most 1.5x, peak at most 1.0x ``pickle.load``'s.

12M entries make a 1 GB file. Its memory estimate (gpuviz.trace.snapshot_pickle: an upper
bound, 20 GB) passes half the RAM of a machine with less than 41 GB: set
``GPUVIZ_MAX_MEMORY=22G`` there (gpuviz takes about 3.2 GB, ``pickle.load`` 6.2 GB).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pickle
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# the peak of the process, printed as it exits (after everything it did)
_HWM = (
    "import atexit, sys\n"
    "def _hwm():\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith('VmHWM:'):\n"
    "            sys.stderr.write('GPUVIZ_HWM_KB ' + line.split()[1] + '\\n')\n"
    "atexit.register(_hwm)\n"
)
_PICKLE = _HWM + "import pickle\nwith open(sys.argv[1], 'rb') as f:\n    pickle.load(f)\n"
_GPUVIZ = (
    _HWM + "import runpy\nsys.argv = ['gpuviz', 'memory', '--json', sys.argv[1]]\n"
    "runpy.run_module('gpuviz', run_name='__main__')\n"
)


def _new_str(s: str) -> str:
    return (s + ".")[:-1]  # a new object of the same value: the pickler memoizes by identity


def make_snapshot(source: Path, entries: int) -> dict[str, Any]:
    """The recorded snapshot with its trace repeated to about ``entries`` entries."""
    opener = gzip.open if source.name.endswith(".gz") else open
    with opener(source, "rb") as f:
        base = pickle.load(f)
    trace = base["device_traces"][0]
    t0, t1 = trace[0]["time_us"], trace[-1]["time_us"]
    span_t = t1 - t0 + 1000
    addrs = [e["addr"] for e in trace if "addr" in e]
    span_a = ((max(addrs) - min(addrs)) // (1 << 30) + 2) << 30
    anns = base.get("external_annotations", [])
    out: list[dict[str, Any]] = []
    out_ann: list[dict[str, Any]] = []
    k = 0
    while len(out) < entries:
        dt, da = k * span_t, k * span_a
        lists: dict[int, list[Any]] = {}  # the recording's sharing of frames lists, per repetition
        for e in trace:
            if len(out) >= entries:
                break
            e2 = dict(e)
            e2["time_us"] = e["time_us"] + dt
            if "addr" in e:
                e2["addr"] = e["addr"] + da
            fr = e.get("frames")
            if isinstance(fr, list):
                e2["frames"] = lists.setdefault(id(fr), list(fr))
            if "compile_context" in e:
                e2["compile_context"] = _new_str(e["compile_context"])
            out.append(e2)
        for a in anns:
            a2 = dict(a)
            a2["time_us"] = a["time_us"] + dt
            out_ann.append(a2)
        k += 1
    snap = dict(base)
    snap["device_traces"] = [out]
    snap["external_annotations"] = out_ann
    return snap


def _snapshot(folder: Path, source: Path, entries: int) -> Path:
    path = folder / f"real-{source.name.split('.')[0]}-{entries}.pickle"
    if not path.exists():
        t = time.perf_counter()
        snap = make_snapshot(source, entries)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            pickle.dump(snap, f)  # as torch.cuda.memory._dump_snapshot does
        tmp.rename(path)
        del snap
        print(
            f"made {path} ({path.stat().st_size / 2**20:.0f} MiB) in {time.perf_counter() - t:.0f} s",
            flush=True,
        )
    return path


def _run(code: str, path: Path) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        timeout=1800,
    )
    s = time.perf_counter() - t
    hwm = [ln for ln in out.stderr.splitlines() if ln.startswith("GPUVIZ_HWM_KB ")]
    if out.returncode != 0 or not hwm:
        raise SystemExit(f"failed on {path}:\n{out.stderr[-2000:]}")
    return {"s": s, "hwm_mb": int(hwm[-1].split()[1]) / 1024}


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--entries", type=int, nargs="+", default=[3_000_000])
    p.add_argument(
        "--source", type=Path, default=ROOT / "tests/data/snapshots/snap_train.pickle.gz"
    )
    p.add_argument("--dir", type=Path, default=Path("/tmp/gpuviz-bench-snapreal"))
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--json", type=Path, help="write the figures here too")
    args = p.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    results = []
    for n in args.entries:
        path = _snapshot(args.dir, args.source, n)
        runs: dict[str, list[dict[str, float]]] = {"pickle": [], "gpuviz": []}
        for k in range(args.rounds):
            for which, code in (("pickle", _PICKLE), ("gpuviz", _GPUVIZ)):
                r = _run(code, path)
                runs[which].append(r)
                print(
                    f"{n:>10} round {k + 1} {which:<7} {r['s']:7.2f} s  VmHWM {r['hwm_mb']:7.0f} MB",
                    flush=True,
                )
        pk, gv = runs["pickle"], runs["gpuviz"]
        row = {
            "entries": n,
            "file_mb": path.stat().st_size / 2**20,
            "rounds": args.rounds,
            "pickle_s": statistics.median(r["s"] for r in pk),
            "pickle_hwm_mb": statistics.median(r["hwm_mb"] for r in pk),
            "gpuviz_s": statistics.median(r["s"] for r in gv),
            "gpuviz_hwm_mb": statistics.median(r["hwm_mb"] for r in gv),
            "time_ratio": statistics.median(g["s"] / q["s"] for g, q in zip(gv, pk)),
            "hwm_ratio": statistics.median(g["hwm_mb"] / q["hwm_mb"] for g, q in zip(gv, pk)),
        }
        results.append(row)
        print(
            f"{n:>10} entries, {row['file_mb']:.0f} MiB, medians of {args.rounds} rounds: "
            f"pickle.load {row['pickle_s']:.2f} s {row['pickle_hwm_mb']:.0f} MB; gpuviz "
            f"{row['gpuviz_s']:.2f} s {row['gpuviz_hwm_mb']:.0f} MB; ratios: time "
            f"{row['time_ratio']:.2f}x (<= 1.5), peak {row['hwm_ratio']:.2f}x (<= 1.0)",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
