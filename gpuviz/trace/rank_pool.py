"""One function over the files of many ranks, in a pool of processes: results in file order.

Both the rank snapshots (:mod:`gpuviz.analysis.allocator_ranks`: the standard library's
unpickler never releases the GIL) and ``gpuviz summary`` of a rank folder
(:mod:`gpuviz.commands.summary_ranks`: each rank imported alone) read one file per task, in
children forked as the trace importer's are (:func:`~gpuviz.trace.kineto_worker.start_method`),
and get only small results back. :func:`map_ranks` is that pool:

- a bad file comes back as its one line (an exception with a custom constructor, such as
  TraceFormatError, does not survive the trip back), and the first one in file order raises
  :class:`~gpuviz.errors.BadInputError`, as reading the files one after the other would;
- a child that the system kills (out of memory) fails the call, naming a file it had not
  finished (``multiprocessing.Pool`` would wait for it forever);
- the children are stopped as soon as the call returns or raises (cancelled, Ctrl-C).
"""

from __future__ import annotations

import multiprocessing
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from gpuviz.errors import BadInputError, WorkFailedError

T = TypeVar("T")

POLL_S = 0.05
"""While the pool reads, the caller's cancel is checked this often."""


def map_ranks(
    func: Callable[[Any], T],
    files: Sequence[Any],
    workers: int,
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    on_error: Callable[[str], None] | None = None,
    initializer: Callable[[], None] | None = None,
) -> list[T | None]:
    """``func(file)`` for each file: in ``workers`` processes, or here, one after the other,
    for fewer than 2.

    Parameters
    ----------
    func
        A module-level function (it is sent to the children by name).
    files
        The files (paths, as ``func`` takes them).
    workers
        Processes.
    progress
        ``progress(fraction)`` as files finish.
    cancelled
        Polled while waiting: when it turns true, the files not started are dropped and
        :class:`~gpuviz.trace.errors.ImportCancelledError` is raised.
    on_error
        Given: a file that cannot be read is passed to it (its one line) and its result is
        None, and the others are read. Else the first such file (in ``files``' order) raises.
    initializer
        Run in each child when it starts (not here, for fewer than 2 workers).

    Returns
    -------
    list
        In the order of ``files``.

    Raises
    ------
    BadInputError
        A file could not be read (without ``on_error``): one line naming it.
    WorkFailedError
        A child ended while reading (killed by the system): the message names a file it had
        not finished.
    """
    from gpuviz.trace.errors import ImportCancelledError
    from gpuviz.trace.kineto_worker import start_method

    results: list[tuple[bool, Any] | None] = [None] * len(files)
    if workers < 2:
        for i, f in enumerate(files):
            if cancelled is not None and cancelled():
                raise ImportCancelledError()
            ok, value = results[i] = _guarded(func, f)
            if not ok and on_error is None:
                break
            if progress is not None:
                progress((i + 1) / len(files))
    else:
        context = multiprocessing.get_context(start_method())
        pool = ProcessPoolExecutor(workers, mp_context=context, initializer=initializer)
        try:
            with warnings.catch_warnings():
                # Python 3.12 warns of any fork in a process that has threads (the app reads
                # on one): a child runs the reader alone, needing no lock those threads hold.
                warnings.simplefilter("ignore", DeprecationWarning)
                pending: dict[Future[tuple[bool, Any]], int] = {
                    pool.submit(_guarded, func, f): i for i, f in enumerate(files)
                }
            done_count = 0
            while pending:
                done, _ = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
                if cancelled is not None and cancelled():
                    raise ImportCancelledError()
                for fut in done:
                    i = pending.pop(fut)
                    try:
                        results[i] = fut.result()
                    except BrokenProcessPool:
                        first = min(j for j, r in enumerate(results) if r is None)
                        raise WorkFailedError(
                            f"{files[first]}: the process reading it stopped (killed by the "
                            f"system: out of memory?)"
                        ) from None
                    done_count += 1
                if done and progress is not None:
                    progress(done_count / len(files))
        finally:
            # At once: done, or cancelled, or Ctrl-C (which children that ignore it leave to
            # this process), or a failure; children still reading are stopped, not waited
            # for (then the shutdown only reaps them).
            for child in list((getattr(pool, "_processes", None) or {}).values()):
                child.terminate()
            pool.shutdown(wait=True, cancel_futures=True)
    out: list[T | None] = []
    for r in results:
        if r is None:
            continue
        ok, value = r
        if not ok:
            if on_error is None:
                raise BadInputError(value)
            on_error(value)
            value = None
        out.append(value)
    return out


def _guarded(func: Callable[[Any], T], path: Any) -> tuple[bool, Any]:
    # Runs in a child: a bad file comes back as its one line. Anything else is a bug and
    # travels as it is.
    try:
        return True, func(path)
    except (BadInputError, OSError, EOFError) as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return False, text if str(path) in text else f"{path}: {text}"
