"""The app's Ranks view of a rank folder from per-rank reductions, and a drill-down (issue 51).

    python benchmarks/bench_ranks_app.py --world 64 --kernels 2000            (the 2-core VM)
    python benchmarks/bench_ranks_app.py --world 1024 --kernels 10000 --out r.json  (16 cores)

A folder of ``--world`` ranks (``gen_trace.py --world N --all-ranks``, as
``bench_cluster.py`` makes it, kept in ``--data``), each phase in a fresh process, with an
import cache of its own (``GPUVIZ_CACHE_DIR`` under ``--data``, emptied first):

- **whole (old way)**: ``load_trace`` of the folder without the cache and ``rank_analysis``:
  what the app did before (every rank's events in one trace);
- **ranks view, cold**: ``reduce_folder`` (the local pool; on a cluster where
  ``GPUVIZ_CLUSTER`` is set): each rank imported into its cache entry and reduced; then the
  Ranks view built and drawn offscreen (``QtRanksView.finish_build``), as the app shows it;
- **ranks view, re-open**: the same, each rank's entry mapped back from the cache (the
  target: at most 5 s for 1,024 ranks);
- **drill-down**: the app's load of one rank (``load_and_analyze`` of its file: its cache
  entry, and the analyses its tab shows; the target: at most 1 s), and ``load_trace`` alone.

For each: wall time of the phase inside the process (imports excluded, printed apart) and
the tree's peak PSS. ``--out`` writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

from bench_cluster import REPO, gen, gpuviz_env
from bench_import import run_sampled

PHASES: dict[str, str] = {
    "whole (old way)": """
from gpuviz.trace.kineto import load_trace
from gpuviz.analysis.ranks import rank_analysis
t = time.perf_counter()
ra = rank_analysis(load_trace(FOLDER, cache=False))
out = {"s": time.perf_counter() - t, "straggler": ra.straggler and ra.straggler.rank}
""",
    "ranks view, cold": "VIEW",
    "ranks view, re-open": "VIEW",
    "drill-down (app load of one rank)": """
from gpuviz.gui.qt_load_worker import load_and_analyze
t = time.perf_counter()
a = load_and_analyze(RANK)
out = {"s": time.perf_counter() - t, "slices": len(a.trace.slices)}
""",
    "drill-down (load_trace alone)": """
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.cache import from_cache
t = time.perf_counter()
tr = load_trace(RANK)
out = {"s": time.perf_counter() - t, "from_cache": from_cache(tr)}
""",
}

VIEW = """
from PySide6.QtWidgets import QApplication
from gpuviz.analysis.rank_reduction_map import reduce_folder
from gpuviz.gui.views.ranks.qt_ranks import QtRanksView
app = QApplication([])
t = time.perf_counter()
r = reduce_folder(FOLDER)
reduced_s = time.perf_counter() - t
view = QtRanksView(r.analysis, len(r.sources), reduced=r)
view.resize(1280, 760)
view.show()
view.finish_build()
app.processEvents()
out = {"s": time.perf_counter() - t, "reduce_s": reduced_s, "failed": len(r.failed),
       "straggler": r.analysis.straggler and r.analysis.straggler.rank,
       "reductions_kb": len(pickle.dumps(r)) / 1e3}
"""


def phase(name: str, folder: Path, rank: Path, cache: Path) -> dict[str, Any]:
    body = PHASES[name]
    body = VIEW if body == "VIEW" else body
    code = (
        "import json, pickle, time\n"
        f"FOLDER, RANK = {str(folder)!r}, {str(rank)!r}\n"
        f"{body}\nprint(json.dumps(out))\n"
    )
    env = gpuviz_env()
    env["GPUVIZ_CACHE_DIR"] = str(cache)
    env["QT_QPA_PLATFORM"] = "offscreen"
    if "GPUVIZ_CLUSTER" in os.environ:  # gpuviz_env() drops it: the reductions may use it
        env["GPUVIZ_CLUSTER"] = os.environ["GPUVIZ_CLUSTER"]
    code_rc, out, err, wall, (_, pss, _) = run_sampled(
        [sys.executable, "-c", code], env=env, cwd=REPO
    )
    if code_rc != 0:
        raise RuntimeError(f"{name} failed ({code_rc}):\n{err[-3000:]}")
    got: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    got["process_s"] = wall
    got["tree_pss_mb"] = pss / 2**20
    return got


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--world", type=int, default=64, help="ranks (default 64)")
    p.add_argument("--kernels", type=int, default=2000, help="kernels per rank (default 2000)")
    p.add_argument("--repeat", type=int, default=1, help="rounds (default 1)")
    p.add_argument("--data", type=Path, default=Path("/tmp/gpuviz-bench/cluster"))
    p.add_argument("--out", type=Path, help="write the figures here (JSON)")
    p.add_argument(
        "--no-whole",
        action="store_true",
        help="leave out the old way (every rank's events in one process: 17 GB at 1,024 ranks)",
    )
    a = p.parse_args(argv)
    folder = gen(a.world, a.kernels, a.data)
    rank = sorted(folder.iterdir())[0]
    size = sum(f.stat().st_size for f in folder.iterdir()) / 1e6
    print(f"{folder}: {a.world} ranks x {a.kernels} kernels, {size:.0f} MB", flush=True)
    runs: dict[str, list[dict[str, Any]]] = {}
    for k in range(a.repeat):
        cache = a.data / "ranks-app-cache"
        shutil.rmtree(cache, ignore_errors=True)  # cold: no entry of any rank
        for name in PHASES:
            if a.no_whole and name == "whole (old way)":
                continue
            r = phase(name, folder, rank, cache)
            runs.setdefault(name, []).append(r)
            extra = {key: v for key, v in r.items() if key not in ("s", "process_s", "tree_pss_mb")}
            print(
                f"  round {k + 1} {name:<36} {r['s']:7.2f} s (process {r['process_s']:5.1f} s)"
                f"  PSS {r['tree_pss_mb']:6.0f} MB  {extra}",
                flush=True,
            )
    summary: dict[str, Any] = {
        "world": a.world,
        "kernels": a.kernels,
        "mb": size,
        "cpus": os.cpu_count(),
        "load": list(os.getloadavg()),
    }
    for name, rs in runs.items():
        s = statistics.median(r["s"] for r in rs)
        pss = statistics.median(r["tree_pss_mb"] for r in rs)
        summary[name] = {"median_s": s, "median_tree_pss_mb": pss, "runs": rs}
        print(f"median {name:<36} {s:7.2f} s  PSS {pss:6.0f} MB")
    if a.out is not None:
        a.out.write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
