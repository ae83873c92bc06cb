"""The files of a rank folder on a Dask cluster (``--cluster ADDRESS``, ``GPUVIZ_CLUSTER``).

Past one machine the work on a rank folder runs on an existing distributed engine, Dask
(``dask.distributed``), not on a pool of gpuviz's own: the same client code reaches a
``LocalCluster`` on a laptop, a SLURM allocation (dask-jobqueue) or Kubernetes
(dask-kubernetes), wherever the traces were written. ``docs/cluster.md`` is the user guide.

- :func:`connect` opens a client: ``local`` or ``local:N`` starts a ``LocalCluster`` of N
  worker processes (default: one per core), one thread each (msgspec's decoding holds the
  GIL); anything else is a scheduler's address (``tcp://host:8786``, ``host:8786``), reached
  within :data:`CONNECT_S` or refused as bad input, naming it (exit 2).
- :func:`using` makes a cluster the one the commands' work goes to (:func:`active`): the rank
  summary (:mod:`gpuviz.commands.summary_ranks`) maps its per-rank reductions on it, and the
  importer (:func:`gpuviz.trace.kineto_parallel.read_files`) hands each file of a folder to a
  worker whole (:mod:`gpuviz.trace.cluster_decode`).
- :func:`map_files` is :func:`gpuviz.trace.rank_pool.map_ranks` on the cluster: results in
  file order, a bad file comes back as its one line (skipped and named with ``on_error``, else
  it raises :class:`~gpuviz.errors.BadInputError` as the local pool does), the caller's cancel
  and Ctrl-C cancel every task at once, and progress says ranks done per worker.

A worker that dies mid-task (killed, out of memory) is Dask's to handle: its tasks run again
on the others, up to ``distributed.scheduler.allowed-failures`` times (3); past that the rank
is reported as failed (``KilledWorker``), named. Dask is imported only here, and only when a
cluster is asked for: the ``cluster`` extra (``pip install gpuviz[cluster]``).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from gpuviz.errors import BadInputError, WorkFailedError

T = TypeVar("T")

ENV = "GPUVIZ_CLUSTER"
"""The cluster's address where ``--cluster`` is not given."""
CONNECT_S = 5.0
"""How long a scheduler may take to answer before it counts as unreachable."""
POLL_S = 0.05
"""While tasks run, the caller's cancel and the finished tasks are checked this often."""
EXTRA = "cluster"
"""The optional dependencies' name: ``pip install gpuviz[cluster]``."""

_ACTIVE: list[Cluster] = []


class Cluster:
    """A Dask client, and the ``LocalCluster`` it started, if any (closed with it).

    Parameters
    ----------
    client : distributed.Client
    address : str
        As the user gave it (messages name it).
    local : distributed.LocalCluster, optional
        Started for ``local[:N]``.
    """

    def __init__(self, client: Any, address: str, local: Any = None) -> None:
        self.client = client
        self.address = address
        self.local = local

    def workers(self) -> int:
        """Workers connected now."""
        return len(self.client.scheduler_info(n_workers=-1).get("workers", {}))

    def close(self) -> None:
        """Close the client, and stop the ``LocalCluster`` it started."""
        with contextlib.suppress(Exception):
            self.client.close(timeout=CONNECT_S)
        if self.local is not None:
            with contextlib.suppress(Exception):
                self.local.close(timeout=CONNECT_S)


def address_of(option: str | None) -> str | None:
    """The cluster asked for: ``--cluster``'s value, else ``GPUVIZ_CLUSTER``, else None."""
    text = option if option is not None else os.environ.get(ENV)
    text = (text or "").strip()
    return text or None


def local_workers(address: str) -> int | None:
    """Worker processes for ``local`` (one per usable core) or ``local:N``; None for a
    scheduler's address.

    Raises
    ------
    BadInputError
        ``local:`` followed by anything but a whole number from 1 to 1024.
    """
    if address != "local" and not address.startswith("local:"):
        return None
    if address == "local":
        return max(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1, 1)
    text = address.split(":", 1)[1]
    if not text.isdigit() or not 1 <= int(text) <= 1024:
        raise BadInputError(
            f"--cluster {address}: local:N needs N worker processes, a whole number from 1 to 1024"
        )
    return int(text)


def connect(address: str, *, fork: bool = False) -> Cluster:
    """A client of the cluster at ``address`` (see the module docstring).

    Parameters
    ----------
    address : str
    fork : bool
        A ``LocalCluster``'s workers are forked from this process where the import's children
        are (:func:`~gpuviz.trace.kineto_worker_sizing.start_method`: Linux, unless
        ``GPUVIZ_IMPORT_START=spawn``), not spawned: each spawned worker first imports Python,
        Dask, numpy and gpuviz again (0.7 s for 2 on the idle 2-core VM, 0.2 s forked). For
        the CLI, whose process is small and has no other thread when the cluster starts; the
        app's (Qt's threads) keeps Dask's spawn.

    Raises
    ------
    BadInputError
        Dask is not installed, ``address`` is malformed, or its scheduler did not answer within
        :data:`CONNECT_S`: one line naming the address.
    """
    n = local_workers(address)
    try:
        import logging

        from distributed import Client, LocalCluster
    except ImportError:
        raise BadInputError(
            f"--cluster {address}: needs Dask (pip install 'gpuviz[{EXTRA}]', or "
            "pip install 'dask[distributed]')"
        ) from None
    if n is not None:
        import dask

        from gpuviz.trace.kineto_worker_sizing import start_method

        method = start_method() if fork else "spawn"
        try:
            with dask.config.set({"distributed.worker.multiprocessing-method": method}):
                cluster = LocalCluster(
                    n_workers=n,
                    threads_per_worker=1,  # msgspec's decoding holds the GIL: processes
                    processes=True,
                    dashboard_address=":0",  # any free port: 8787 may be another cluster's
                    silence_logs=logging.CRITICAL,  # a worker stopped at the end is no error
                )
        except (OSError, RuntimeError, TimeoutError) as exc:
            raise WorkFailedError(
                f"--cluster {address}: the LocalCluster did not start ({_one_line(exc)})"
            ) from None
        return Cluster(Client(cluster, set_as_default=False), address, cluster)
    target = address if "://" in address else f"tcp://{address}"
    try:
        client = Client(target, timeout=CONNECT_S, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BadInputError(f"--cluster {address}: cannot reach the scheduler ({why})") from None
    return Cluster(client, address)


def active() -> Cluster | None:
    """The cluster that rank-folder work goes to now (:func:`using`), or None: the local pool."""
    return _ACTIVE[-1] if _ACTIVE else None


@contextlib.contextmanager
def using(address: str | None, *, fork: bool = False) -> Iterator[Cluster | None]:
    """Connect to ``address`` (nothing for None; ``fork``: as :func:`connect`'s), make it
    :func:`active` within the block, and close it (and any ``LocalCluster`` it started) after,
    Ctrl-C included."""
    if address is None:
        yield None
        return
    cluster = connect(address, fork=fork)
    _ACTIVE.append(cluster)
    try:
        yield cluster
    finally:
        _ACTIVE.remove(cluster)
        cluster.close()


class Progress:
    """Ranks done, and how many each worker did (``per_worker``: address -> count)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.per_worker: dict[str, int] = {}

    def line(self) -> str:
        """``12/32 ranks done; by worker: tcp://10.0.0.5:40211 7, tcp://10.0.0.6:33117 5``."""
        parts = ", ".join(f"{w} {n}" for w, n in sorted(self.per_worker.items()))
        return f"{self.done}/{self.total} ranks done" + (f"; by worker: {parts}" if parts else "")


def map_files(
    cluster: Cluster,
    func: Callable[..., T],
    files: Sequence[str],
    *args: Any,
    progress: Callable[[Progress], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    on_error: Callable[[str], None] | None = None,
    scatter: bool = False,
) -> list[T | None]:
    """``func(file, *args)`` for each file, on the cluster's workers: in file order.

    Parameters
    ----------
    cluster : Cluster
    func : callable
        A module-level function (the workers import it by name).
    files : sequence of str
        Paths as the workers see them (shared storage).
    *args
        Passed to every call after the file.
    progress : callable, optional
        Given the :class:`Progress` each time ranks finish.
    cancelled : callable, optional
        Polled while waiting: when it turns true every task is cancelled and
        :class:`~gpuviz.trace.errors.ImportCancelledError` is raised.
    on_error : callable, optional
        Given: a file that cannot be read (or whose worker died past Dask's retries) is passed
        to it (its one line), its result is None, and the others stand. Else the first such
        file in file order raises.
    scatter : bool
        Send ``args`` to each worker once, ahead of the tasks (Dask sends a task's arguments
        with each task: 128 tasks given 5 MB took 2.7 s where 5 kB took 0.3 s on the 2-core
        VM). For arguments that grow with the job, such as the by-rank advise's job figures.

    Returns
    -------
    list
        One per file, in the order of ``files`` (None for a file that failed, with ``on_error``).

    Raises
    ------
    BadInputError
        A file could not be read (without ``on_error``): one line naming it.
    WorkFailedError
        A file's task failed past Dask's retries (its workers died), without ``on_error``.
    """
    from distributed import as_completed
    from distributed.scheduler import KilledWorker

    from gpuviz.trace.errors import ImportCancelledError

    client = cluster.client
    results: list[tuple[bool, Any] | None] = [None] * len(files)
    token = _token()
    keys = [f"gpuviz-rank-{i}-{token}" for i in range(len(files))]
    # One submission for all, and each task says which worker ran it: a scheduler round trip
    # per task (submit, who_has, result) cost 19 ms a task on the 2-core VM.
    shared: list[Any] = []
    if scatter and args:
        shared = client.scatter(list(args), broadcast=True, hash=False)
        # each task takes the workers' copies (a future in an argument list is resolved)
        per_task = [[fut] * len(files) for fut in shared]
        futures = client.map(_Task(func, ()), list(files), *per_task, key=keys, pure=False)
    else:
        futures = client.map(_Task(func, args), list(files), key=keys, pure=False)
    index = {k: i for i, k in enumerate(keys)}
    state = Progress(len(files))
    died: set[int] = set()
    try:
        ready = as_completed(futures, loop=client.loop)
        while not ready.is_empty():
            batch = ready.next_batch(block=False)
            if cancelled is not None and cancelled():
                raise ImportCancelledError()
            if not batch:
                time.sleep(POLL_S)
                continue
            done = [f for f in batch if f.status == "finished"]
            try:
                values = client.gather(done) if done else []
            except Exception:  # a result lost meanwhile (its worker died): each on its own
                done, values = [], []
            got = {fut.key: v for fut, v in zip(done, values)}
            for fut in batch:
                i = index[fut.key]
                try:
                    worker, results[i] = got[fut.key] if fut.key in got else fut.result()
                except KilledWorker as exc:
                    died.add(i)
                    results[i] = (False, f"{files[i]}: its worker died ({_one_line(exc)})")
                    worker = "died"
                except Exception as exc:  # not the file's fault: the task could not run
                    raise WorkFailedError(
                        f"{files[i]}: the task failed on the cluster ({_one_line(exc)}); "
                        "the workers need the same gpuviz and Python packages as this client"
                    ) from None
                if worker != "died":
                    state.per_worker[worker] = state.per_worker.get(worker, 0) + 1
                fut.release()
                state.done += 1
            if progress is not None:
                progress(state)
    finally:
        # At once: cancelled, Ctrl-C, an error or done (then there is nothing to cancel).
        with contextlib.suppress(Exception):
            client.cancel([f for f in futures if not f.done()], force=True)
        for fut in shared:  # the workers' copies of the arguments
            with contextlib.suppress(Exception):
                fut.release()
    out: list[T | None] = []
    for i, r in enumerate(results):
        assert r is not None  # every task finished
        ok, value = r
        if not ok:
            if on_error is None:
                raise WorkFailedError(value) if i in died else BadInputError(value)
            on_error(value)
            value = None
        out.append(value)
    return out


class _Task:
    """``func(path, *args)`` guarded as the local pool's (a bad file comes back as its one
    line), with the address of the worker that ran it (picklable, unlike a lambda)."""

    def __init__(self, func: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.func = func
        self.args = args

    def __call__(self, path: str, *shared: Any) -> tuple[str, tuple[bool, Any]]:
        from gpuviz.trace.gcpause import heap_thresholds_raised
        from gpuviz.trace.rank_pool import _guarded

        try:
            from distributed import get_worker

            worker = str(get_worker().address)
        except (ImportError, ValueError):
            worker = "?"
        # Dask's nanny fixes glibc's thresholds in its workers: a rank's import took 1.2-1.45x
        # as long there as in the local pool's children (gcpause.heap_thresholds_raised).
        with heap_thresholds_raised():
            return worker, _guarded(lambda p: self.func(p, *self.args, *shared), path)


def _token() -> str:
    import uuid

    return uuid.uuid4().hex[:12]


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


__all__ = [
    "CONNECT_S",
    "ENV",
    "EXTRA",
    "Cluster",
    "Progress",
    "active",
    "address_of",
    "connect",
    "local_workers",
    "map_files",
    "using",
]
