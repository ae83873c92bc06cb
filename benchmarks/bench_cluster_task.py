"""What one rank costs on a Dask worker against a local pool's child (issue 51).

    python benchmarks/bench_cluster_task.py --world 16 --kernels 10000 --repeat 3

The same ranks (``bench_cluster.py``'s folder of ``--world`` ranks of ``--kernels`` kernels)
are summarized one after the other by one process of each kind, in turn in each round, so
that every contender meets the same load:

- **pool child**: a forked child of a ``ProcessPoolExecutor``, set up as
  ``gpuviz summary``'s local pool sets its children (:mod:`gpuviz.commands.summary_ranks`);
- **dask worker, spawned**: the one worker of a ``LocalCluster`` started as Dask starts them
  (spawned: the nanny's ``MALLOC_TRIM_THRESHOLD_=65536`` reaches glibc, as it does on a
  cluster started with ``dask worker``), through gpuviz's task
  (:func:`gpuviz.trace.cluster.map_files`: the heap's thresholds raised for the task,
  :func:`gpuviz.trace.gcpause.heap_thresholds_raised`);
- **dask worker, spawned, as Dask leaves it**: the same worker given the same function
  without gpuviz's task around it (``client.map``);
- **dask worker, forked**: a worker forked as ``--cluster local`` forks them from the CLI
  (glibc was set up before the nanny's variable), through gpuviz's task.

Each prints its median wall time for the ranks and its ratio to the pool child's.
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from bench_cluster import gen  # also puts this checkout first on this path and the workers'


def _plain(path: str) -> object:
    """A rank's part as a task without gpuviz's wrapping (the worker's heap as Dask set it)."""
    from gpuviz.commands.summary_ranks import cluster_part

    return cluster_part(path, None, None)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--world", type=int, default=16, help="ranks (default 16)")
    p.add_argument("--kernels", type=int, default=10000, help="kernels per rank (default 10k)")
    p.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    p.add_argument("--data", type=Path, default=Path("/tmp/gpuviz-bench/cluster"))
    a = p.parse_args(argv)
    import dask
    from distributed import Client, LocalCluster

    from gpuviz.commands.summary_ranks import _child_init, cluster_part, part_of
    from gpuviz.trace import cluster

    folder = gen(a.world, a.kernels, a.data)
    files = sorted(str(f) for f in folder.iterdir())
    print(f"{folder}: {len(files)} ranks", flush=True)
    pool = ProcessPoolExecutor(
        1, mp_context=multiprocessing.get_context("fork"), initializer=_child_init
    )
    list(pool.map(abs, [1]))  # started
    started: list[Any] = []

    def one_worker(method: str, profile: bool = True) -> cluster.Cluster:
        settings = {
            "distributed.worker.multiprocessing-method": method,
            "distributed.worker.profile.enabled": profile,
        }
        with dask.config.set(settings):
            local = LocalCluster(
                n_workers=1,
                threads_per_worker=1,
                dashboard_address=":0",
                silence_logs=logging.CRITICAL,
            )
        on = cluster.Cluster(Client(local, set_as_default=False), f"local:1 ({method})", local)
        started.append(on)
        return on

    spawned, forked = one_worker("spawn"), one_worker("fork")
    quiet = one_worker("spawn", profile=False)

    def run_pool() -> None:
        list(pool.map(part_of, files, [None] * len(files)))

    def run_spawned_plain() -> None:
        client = spawned.client
        client.gather(client.map(_plain, files, pure=False))

    contenders = {
        "pool child": run_pool,
        "dask worker, spawned": lambda: cluster.map_files(spawned, cluster_part, files, None, None),
        "dask worker, spawned, as Dask leaves it": run_spawned_plain,
        "dask worker, forked": lambda: cluster.map_files(forked, cluster_part, files, None, None),
        "dask worker, spawned, profiler off": lambda: cluster.map_files(
            quiet, cluster_part, files, None, None
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in contenders}
    try:
        for k in range(a.repeat):
            for name, run in contenders.items():
                t = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - t)
                print(f"  round {k + 1} {name:<40} {times[name][-1]:6.2f} s", flush=True)
    finally:
        for on in started:
            on.close()
        pool.shutdown()
    ref = statistics.median(times["pool child"])
    for name, ts in times.items():
        s = statistics.median(ts)
        print(
            f"median {name:<40} {s:6.2f} s  {s / len(files) * 1e3:5.0f} ms a rank  "
            f"{s / ref:.2f}x the pool child  (load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
