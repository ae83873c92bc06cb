"""The Runner: one workload on one device selection, as a generator of typed, frozen events.

Usage (the in-thread executor: the caller's thread iterates)::

    runner = Runner(RunRequest("loops", {"n": 2000}, device="cuda", steps=5))
    for event in runner:          # Started, Progress, StepTimed, MemorySample, ..., Finished
        ...
    runner.cancel()               # from any thread: the run stops at the next step boundary

Constructing a Runner checks the request (workload, parameters, device) and raises
:class:`gpuviz.errors.BadInputError` before anything runs. Iterating it never raises for the
workload's own errors: they become one terminal event, ``Failed`` (with the message, the
traceback and the partial trace) or ``Cancelled``. A workload that calls ``sys.exit(5)`` fails
("the workload called sys.exit(5) in step 0"); it does not end the process. (``os._exit`` or a
crash does: run it in a child process, ``--isolate``, to keep the caller alive.) Ctrl-C:
``runner.interrupt()`` from the SIGINT handler (the CLI installs one) cancels, and inside the
workload's own code it stops the step at once; the run ends as ``Cancelled`` whenever the
cancel came before its last event. Whatever the end, the profiler, the memory sampler and the
strategies' state are stopped and freed, and the CUDA caching allocator is emptied, so the
process stays usable for the next run.

Order of a run (see :mod:`gpuviz.workloads.base` for a body's side of it): set-up and warm-ups
of each strategy (not traced, not timed); the profiled steps of every strategy in one profiler
window, whose trace is written at once (``TraceReady``); then ``--steps`` timed, unprofiled steps
of each strategy, which are the reported figures; then ``Finished`` with the result object.
Tracing comes first so that a run cancelled or killed during its timed steps keeps a whole
trace.

Multi-process workloads (``spec.multi_process``) are handed to
``gpuviz.engine.multiprocess.run_multiprocess(runner) -> Iterator[Event]`` (one child per rank),
imported when such a run starts; every other run is an :class:`~gpuviz.engine.inprocess.InProcessRun`
(the body of this class, in a lower module, so that the ranks can run one without importing
this module: no import circle).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpuviz.engine.events import Event
from gpuviz.engine.inprocess import NEEDS_CUDA, InProcessRun
from gpuviz.engine.request import RunRequest, default_trace_path
from gpuviz.errors import BadInputError
from gpuviz.workloads.registry import DEFAULT_STEPS


class Runner(InProcessRun):
    """Runs one :class:`RunRequest`; iterate it for events (see the module docstring).

    Its parameters, and the checks made at construction, are :class:`InProcessRun`'s; a
    multi-process workload is handed to :func:`gpuviz.engine.multiprocess.run_multiprocess`.
    """

    def __iter__(self) -> Iterator[Event]:
        if not self.spec.multi_process:
            return super().__iter__()
        self._start_once()
        try:
            from gpuviz.engine.multiprocess import run_multiprocess
        except ImportError as exc:
            raise BadInputError(
                f"{self.spec.name}: multi-process workloads need gpuviz.engine.multiprocess ({exc})"
            ) from None
        return iter(run_multiprocess(self))


def run_to_end(request: RunRequest, **kwargs: Any) -> list[Event]:
    """Run in this thread and return every event (tests, scripts)."""
    return list(Runner(request, **kwargs))


__all__ = [
    "DEFAULT_STEPS",
    "NEEDS_CUDA",
    "RunRequest",
    "Runner",
    "default_trace_path",
    "run_to_end",
]
