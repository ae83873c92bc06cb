"""Reading a folder of rank snapshots: one process, threads, or forked processes.

Usage::

    python benchmarks/bench_memory_ranks.py [--ranks 8] [--entries 100000] [--dir /tmp/gpuviz-bench-ranks]

Writes ``--ranks`` copies of a synthetic ``--entries``-entry snapshot
(:func:`gpuviz.trace.synthetic_snapshot.make_snapshot`) as ``rank-N.memory.pickle``, then times
what ``gpuviz memory DIR --json`` computes (every rank's figures) three ways, best of
``--repeat``: in this process one file after the other, in a thread pool of one thread per
core, and in :func:`gpuviz.analysis.allocator_ranks.map_ranks`'s process pool; and the whole
``gpuviz memory DIR --json`` process; the app's drawing models (what ``gpuviz open DIR``
reads) one after the other and in processes, and a ``gpuviz open DIR --screenshot`` process
(which includes the app's start and the views' settling, about 0.3 s). Prints one JSON object with the machine's core count and
load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--dir", default="/tmp/gpuviz-bench-ranks")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from gpuviz.analysis.allocator_ranks import (
        RankTimelines,
        map_ranks,
        rank_figures_of,
        rank_snapshot_files,
    )
    from gpuviz.trace.kineto_worker import usable_cores
    from gpuviz.trace.synthetic_snapshot import make_snapshot, write_snapshot

    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    first = folder / "rank-0.memory.pickle"
    if not first.exists():
        write_snapshot(first, make_snapshot(args.entries)[0])
    for r in range(1, args.ranks):
        p = folder / f"rank-{r}.memory.pickle"
        if not p.exists():
            p.write_bytes(first.read_bytes())
    files = [f for r, f in rank_snapshot_files(folder) if r < args.ranks]
    cores = usable_cores()

    def threads() -> None:
        with ThreadPoolExecutor(cores) as ex:
            list(ex.map(rank_figures_of, files))

    out = {
        "cores": cores,
        "load_1min": os.getloadavg()[0],
        "ranks": len(files),
        "entries": args.entries,
        "file_bytes": first.stat().st_size,
        "sequential_s": _best(lambda: map_ranks(rank_figures_of, files, workers=0), args.repeat),
        "threads_s": _best(threads, args.repeat),
        # the default count (idle cores only), and one process a core whatever the load
        "processes_s": _best(lambda: map_ranks(rank_figures_of, files), args.repeat),
        "processes_all_cores_s": _best(
            lambda: map_ranks(rank_figures_of, files, workers=min(cores, len(files))),
            args.repeat,
        ),
        # what the app's loader does: every rank's drawing model (figures, curves, pyramid)
        "app_models_sequential_s": _best(
            lambda: map_ranks(RankTimelines(), files, workers=0), args.repeat
        ),
        "app_models_processes_s": _best(
            lambda: map_ranks(RankTimelines(), files, workers=min(cores, len(files))),
            args.repeat,
        ),
    }
    cmd = [sys.executable, "-m", "gpuviz", "memory", str(folder), "--json"]
    # this checkout first, then whatever path the caller set (packages installed beside it)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    out["cli_process_s"] = _best(
        lambda: subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL), args.repeat
    )
    # the app, as a user starts it: `gpuviz open DIR --screenshot` (load, first frames, PNG)
    import importlib.util

    if importlib.util.find_spec("PySide6") is None:  # a GPU host without the app's Qt
        out["app_screenshot_process_s"] = None
        print(json.dumps(out))
        return
    shot = folder / "shot.png"
    cmd = [sys.executable, "-m", "gpuviz", "open", str(folder), "--screenshot", str(shot)]
    env_qt = dict(env, QT_QPA_PLATFORM="offscreen")
    out["app_screenshot_process_s"] = _best(
        lambda: subprocess.run(cmd, check=True, env=env_qt, capture_output=True), 1
    )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
