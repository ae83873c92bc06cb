"""Cluster benchmark (issue 51): a rank folder read by the local pool and by a Dask cluster.

    python benchmarks/bench_cluster.py --world 32 --kernels 2000 --workers 2     (2 cores)
    python benchmarks/bench_cluster.py --world 1024 --kernels 10000 --workers 16 \\
        --repeat 3 --out bench_cluster.json                 (the 16-core machine: ~17 GB)

A folder of ``--world`` ranks (``gen_trace.py --world N --all-ranks``, kept in ``--data``)
is summarized by ``gpuviz summary DIR --json --no-cache`` in fresh processes, side by side
in each round:

- **local pool**: no ``--cluster`` (the ranks a rank at a time in forked children,
  :mod:`gpuviz.commands.summary_ranks`);
- **cluster (warm)**: ``--cluster ADDRESS`` of a ``LocalCluster`` of ``--workers`` processes
  that this script started before the round, as a scheduler already running on a cluster
  is: the process tree measured is the client's alone;
- **cluster local:N (cold)**: ``--cluster local:N``: the client starts the LocalCluster
  itself (its start-up, about 3 s, and its workers are in the time and in the tree's PSS).

For each: the wall time, the peak PSS of the process tree (the sum of its processes'
proportional sets, sampled every 10 ms by ``bench_import.py``'s sampler), and whether the
JSON is the local pool's byte for byte. ``--command advise`` times that command instead,
whose passes the workers run a rank each where the folder is past the replay's limits
(:mod:`gpuviz.commands.advise_ranks`), beside a warm cluster with the whole trace assembled
on the client from the workers' decoding (``GPUVIZ_ADVISE_BY_RANK=0``,
:mod:`gpuviz.trace.cluster_decode`), and beside the by-rank passes with a shared cache that
starts empty (``--cache-dir``: pass 0 imports each rank into its entry, the later passes read
it back; under ``--no-cache`` each pass imports its ranks again). ``--command breakdown`` times
``breakdown --by BY`` (``--by``, default op; ``--stack`` generates ranks with Python frames
and modules, for ``--by module``), whose tables the workers make a rank each and the client sums
(:mod:`gpuviz.commands.breakdown_ranks`), beside a warm cluster with the whole trace
assembled on the client as before (``GPUVIZ_BREAKDOWN_BY_RANK=0``). ``--command check``
times ``check DIR --against DIR`` (each run compared from its ranks' parts where past the
replay's limits, :mod:`gpuviz.commands.check_ranks`) beside the same contenders
(``GPUVIZ_CHECK_BY_RANK=0``: both runs assembled whole on the client). Figures print as they
come and, with ``--out``, go to a JSON file with the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench_import import run_sampled  # the import benchmark's sampler

REPO = Path(__file__).resolve().parents[1]
# The cluster this script starts runs this checkout's gpuviz: its workers take this path.
sys.path.insert(0, str(REPO))
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p
)


def gpuviz_env() -> dict[str, str]:
    """The environment of a ``python -m gpuviz`` child: this checkout first on its path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    env.pop("GPUVIZ_CLUSTER", None)
    return env


def gen(world: int, kernels: int, data: Path, stack: bool = False) -> Path:
    """The rank folder, generated once (``gen_trace.py``; ``stack``: with Python frames and
    modules, ``--stack``) and reused."""
    out = data / f"w{world}-k{kernels}{'-stack' * stack}"
    if not out.exists():
        print(f"generating {out} …", flush=True)
        tmp = out.with_name(out.name + ".part")
        subprocess.run(
            [
                sys.executable,
                str(REPO / "benchmarks" / "gen_trace.py"),
                "--kernels",
                str(kernels),
                "--devices",
                "1",
                "--world",
                str(world),
                "--all-ranks",
                "--straggler",
                "1",
                "--out",
                str(tmp),
                "--jobs",
                str(os.cpu_count() or 1),
                *(["--stack"] if stack else []),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,  # a line per rank file
        )
        tmp.rename(out)
    return out


def run(cmd: list[str]) -> dict[str, Any]:
    """One fresh process: wall time, tree PSS peak (MB), its stdout."""
    code, out, err, wall, (_, pss, _) = run_sampled(cmd, env=gpuviz_env(), cwd=REPO)
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd[:6])}… failed ({code}):\n{err[-3000:]}")
    return {"s": wall, "tree_pss_mb": pss / 2**20, "stdout": out, "stderr": err.strip()[-400:]}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--world", type=int, default=32, help="ranks (default 32)")
    p.add_argument("--kernels", type=int, default=2000, help="kernels per rank (default 2000)")
    p.add_argument("--workers", type=int, default=2, help="the cluster's worker processes")
    p.add_argument("--repeat", type=int, default=1, help="rounds (default 1)")
    p.add_argument(
        "--command", default="summary", choices=("summary", "advise", "breakdown", "check")
    )
    p.add_argument("--by", default="op", help="breakdown's --by (default op)")
    p.add_argument(
        "--stack",
        action="store_true",
        help="ranks with Python frames and nn.Module scopes (for breakdown --by module)",
    )
    p.add_argument("--data", type=Path, default=Path("/tmp/gpuviz-bench/cluster"))
    p.add_argument("--no-cold", action="store_true", help="leave out --cluster local:N")
    p.add_argument("--out", type=Path, help="write the figures here (JSON)")
    p.add_argument(
        "--leave-out",
        action="append",
        default=[],
        metavar="TEXT",
        help="leave out the contenders whose name holds TEXT (the local pool always runs: "
        "the JSON is checked against it)",
    )
    a = p.parse_args(argv)
    from distributed import LocalCluster

    folder = gen(a.world, a.kernels, a.data, a.stack)
    size = sum(f.stat().st_size for f in folder.iterdir()) / 1e6
    print(f"{folder}: {a.world} ranks x {a.kernels} kernels, {size:.0f} MB", flush=True)
    base = [sys.executable, "-m", "gpuviz", a.command, str(folder), "--json", "--no-cache"]
    if a.command == "check":  # the folder against itself: both runs compared, exit 0
        base[4:4] = ["--against", str(folder)]
    if a.command == "breakdown":
        base += ["--by", a.by]
    runs: dict[str, list[dict[str, Any]]] = {}
    with LocalCluster(
        n_workers=a.workers,
        threads_per_worker=1,
        dashboard_address=":0",
        silence_logs=logging.CRITICAL,
    ) as cluster:
        warm = [*base, "--cluster", cluster.scheduler_address]
        contenders: dict[str, list[str]] = {
            "local pool": base,
            f"cluster (warm, {a.workers} workers)": warm,
        }
        by_rank_off = {
            "breakdown": "GPUVIZ_BREAKDOWN_BY_RANK",
            "advise": "GPUVIZ_ADVISE_BY_RANK",
            "check": "GPUVIZ_CHECK_BY_RANK",
        }
        if a.command in by_rank_off:  # the route before the ranks' passes: for comparison
            contenders["cluster (warm, whole trace)"] = [
                "env",
                f"{by_rank_off[a.command]}=0",
                *warm,
            ]
        cache_dir = a.data / "bench-rank-cache"
        if a.command in (
            "advise",
            "check",
        ):  # their later passes read the ranks' entries pass 0 wrote
            contenders["cluster (warm, rank cache)"] = [
                *(x for x in warm if x != "--no-cache"),
                "--cache-dir",
                str(cache_dir),
            ]
        if not a.no_cold:
            contenders[f"cluster local:{a.workers} (cold)"] = [
                *base,
                "--cluster",
                f"local:{a.workers}",
            ]
        for name in [n for n in contenders if n != "local pool"]:
            if any(t in name for t in a.leave_out):
                del contenders[name]
        for k in range(a.repeat):
            for name, cmd in contenders.items():
                shutil.rmtree(cache_dir, ignore_errors=True)  # each run starts without entries
                r = run(cmd)
                runs.setdefault(name, []).append(r)
                same = r["stdout"] == runs["local pool"][k]["stdout"]
                r["json_identical"] = same
                print(
                    f"  round {k + 1} {name:<28} {r['s']:7.2f} s  PSS {r['tree_pss_mb']:7.0f} MB"
                    f"  JSON identical: {'yes' if same else 'NO'}",
                    flush=True,
                )
    summary: dict[str, Any] = {
        "world": a.world,
        "kernels": a.kernels,
        "stack": a.stack,
        "mb": size,
        "workers": a.workers,
        "command": a.command + (f" --by {a.by}" if a.command == "breakdown" else ""),
        "cpus": os.cpu_count(),
        "load": list(os.getloadavg()),
    }
    ref = statistics.median(r["s"] for r in runs["local pool"])
    for name, rs in runs.items():
        s = statistics.median(r["s"] for r in rs)
        pss = statistics.median(r["tree_pss_mb"] for r in rs)
        ok = all(r["json_identical"] for r in rs)
        summary[name] = {"median_s": s, "median_tree_pss_mb": pss, "json_identical": ok}
        print(
            f"median {name:<28} {s:7.2f} s ({s / ref:.2f}x the local pool)  PSS {pss:7.0f} MB"
            f"  JSON identical: {'yes' if ok else 'NO'}  ({s / a.world * 1e3:.0f} ms a rank)"
        )
    if a.out is not None:
        a.out.write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
