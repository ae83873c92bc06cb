"""One workload run in this process, as a generator of typed, frozen events.

:class:`InProcessRun` is the single-process body of :class:`gpuviz.engine.runner.Runner` (which
adds the hand-over of multi-process workloads to :mod:`gpuviz.engine.multiprocess`); each rank
of a multi-process run is an ``InProcessRun`` too. See :mod:`gpuviz.engine.runner` for the
order of a run and how it ends.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import threading
import time
import traceback as tb_module
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from gpuviz.engine.events import (
    Cancelled,
    Event,
    Failed,
    Finished,
    MemorySample,
    Progress,
    SplitRecorded,
    Started,
    StepTimed,
    TraceReady,
)
from gpuviz.engine.memory_history import add_snapshot_result, start_memory_history
from gpuviz.engine.request import RunRequest, default_trace_path
from gpuviz.engine.run_result import StrategyState, memory_peaks, strategy_entries
from gpuviz.errors import BadInputError
from gpuviz.workloads.base import Plan, RunContext, function_plan
from gpuviz.workloads.params import check_params
from gpuviz.workloads.registry import WorkloadSpec, resolve_workload

NEEDS_CUDA = "needs CUDA"

TIMED_FLUSH_S = 0.05
"""Timed steps' events are sent at least this often (20 Hz, as the memory samples)."""

REWARM_MAX_S = 1.0
"""A repeatable strategy whose warm-up step took at most this long gets one more untimed step
right before its timed steps, as a plain ``fn(); for ...: timed(fn)`` loop has. Between its
warm-up and its timed steps the Runner checks the result, profiles and writes the trace, and
collects garbage: the GPU idles meanwhile, and the first short steps after that ran slower on
an H100 (``benchmarks/overhead_probe.py``). Longer steps are not worth the extra step."""

PAUSE_ENV = "GPUVIZ_PAUSE_AT"
"""Tests only: a phase (``set-up``, ``profiling``, ``export``, ``timed``, ``finishing``) at
which the run waits, after printing ``gpuviz: paused at PHASE`` on stderr, until it is
cancelled (at most a minute), so that a test can send Ctrl-C exactly there."""


def collect_garbage() -> None:
    """A full collection, on the main thread only.

    Elsewhere (the app's thread executor) a collection may free Qt objects of closed windows,
    whose destructors then run on this thread: one took Qt's lock and waited for the GIL while
    the GUI thread, holding the GIL, waited for that lock (CI hung in
    ``test_cancel_in_thread_run_stops_profiler_and_sampler``). There, the app collects on its
    GUI thread (``gpuviz.gui.app.collect_on_gui_thread``).
    """
    if threading.current_thread() is threading.main_thread():
        gc.collect()


class _Cancel(Exception):
    """Raised inside the run when a cancel was asked for."""


class WrongResultError(Exception):
    """A strategy's result differs from the baseline's."""


class WorkloadExitError(Exception):
    """The workload's own code called ``sys.exit`` (raised SystemExit): a workload failure."""


def _exit_error(exc: SystemExit, where: str) -> WorkloadExitError:
    call = "sys.exit()" if exc.code is None else f"sys.exit({exc.code!r})"
    return WorkloadExitError(f"the workload called {call} {where}")


def _describe(exc: BaseException) -> str:
    """An exception in one line for ``Failed.error`` and warnings."""
    if isinstance(exc, WorkloadExitError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


class InProcessRun:
    """Runs one :class:`RunRequest` in this process; iterate it for events.

    See :mod:`gpuviz.engine.runner` for the order of a run and how it ends.

    Parameters
    ----------
    request : RunRequest
        What to run.
    emit_async : callable, optional
        A thread-safe sink for memory samples, called from the sampler thread as they are
        taken (the child process uses it to stream them live). Without it, samples are yielded
        between steps.
    sample_interval_s : float
        The memory sampler's period.
    spec : WorkloadSpec, optional
        The workload, when the caller has resolved it already (a rank runs its workload as a
        one-process one).

    Raises
    ------
    BadInputError
        At construction: unknown workload, bad user file, bad parameter, bad device.
    """

    def __init__(
        self,
        request: RunRequest,
        *,
        emit_async: Callable[[MemorySample], None] | None = None,
        sample_interval_s: float = 0.05,
        spec: WorkloadSpec | None = None,
    ) -> None:
        from gpuviz.engine.devices import resolve_devices

        if request.steps < 1:
            raise BadInputError(f"--steps {request.steps}: must be 1 or more")
        self.request = request
        self.spec = spec or resolve_workload(request.workload)
        self.params = check_params(self.spec.params, request.params, workload=self.spec.name)
        self.device, self.devices = resolve_devices(
            request.device, request.gpus, multi_gpu=self.spec.multi_gpu, workload=self.spec.name
        )
        self.trace_path: Path | None = None
        if request.profile:
            self.trace_path = (
                Path(request.out)
                if request.out
                else default_trace_path(self.spec.name, self.spec.multi_process)
            )
        self._emit_async = emit_async
        self._sample_interval_s = sample_interval_s
        self._cancel = threading.Event()
        self._started = False
        # True while the workload's own code runs in a step, set-up or warm-up (see interrupt).
        self._interruptible = False

    # -- control ----------------------------------------------------------------------------
    def cancel(self) -> None:
        """Ask the run to stop at the next step boundary (thread-safe)."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        """Whether a cancel was asked for."""
        return self._cancel.is_set()

    def interrupt(self) -> None:
        """Ctrl-C: cancel, and stop the workload's own code at once if it is running.

        Call it from a SIGINT handler in the thread that iterates the run (the CLI does).
        Inside a step, set-up or warm-up it raises KeyboardInterrupt there, which ends the run
        as ``Cancelled`` without waiting for a long step; anywhere else (the profiler's export,
        the run's own bookkeeping and cleanup) it only cancels, and the run stops at its next
        boundary with everything stopped and the partial trace kept.

        Why not let Ctrl-C raise wherever it lands: a KeyboardInterrupt that lands in a
        finalizer run by a garbage collection is dropped by Python ("Exception ignored in"),
        which lost Ctrl-C presses (the run then finished with exit code 0), and one that lands
        in the cleanup would leave it half done. The cancel is set first, so even a
        KeyboardInterrupt that the workload's code swallows stops the run at the next step.
        """
        self._cancel.set()
        if self._interruptible:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def _workload_code(self, where: str, interruptible: bool = True) -> Iterator[None]:
        """Around a call into the workload's own code (``where``: "in step 3", for messages).

        Ctrl-C may stop it at once (see :meth:`interrupt`), and its ``sys.exit()`` is a
        workload failure, not the end of the process that runs it.
        """
        self._interruptible = interruptible
        try:
            yield
        except SystemExit as exc:
            raise _exit_error(exc, where) from exc
        finally:
            self._interruptible = False

    def _timed_step(
        self, timer: Any, step: Callable[[], Any], n: int
    ) -> tuple[float, float | None]:
        """``timer.time(step)`` as workload code, as :meth:`_workload_code` would run it.

        Written out for the timed steps, which run back to back: the context manager's
        generator and its message cost microseconds of host work between two steps.
        """
        self._interruptible = True
        try:
            return timer.time(step)
        except SystemExit as exc:
            raise _exit_error(exc, f"in step {n}") from exc
        finally:
            self._interruptible = False

    def _pause_for_tests(self, phase: str) -> None:
        # See PAUSE_ENV: lets a test send Ctrl-C at an exact phase of the run.
        if os.environ.get(PAUSE_ENV) != phase:
            return
        print(f"gpuviz: paused at {phase}", file=sys.stderr, flush=True)
        deadline = time.monotonic() + 60.0
        while not self._cancel.is_set() and time.monotonic() < deadline:
            time.sleep(0.005)

    def _stop_if_cancelled(self) -> None:
        if self._cancel.is_set():
            raise _Cancel()

    def __iter__(self) -> Iterator[Event]:
        self._start_once()
        return self._run()

    def _start_once(self) -> None:
        if self._started:
            raise RuntimeError("a Runner runs once; make a new one")
        self._started = True

    # -- the run ----------------------------------------------------------------------------
    def _run(self) -> Iterator[Event]:
        import torch

        from gpuviz.engine.profiling import ProfilerSession, step_range_name
        from gpuviz.engine.sampler import MemorySampler
        from gpuviz.engine.timing import StepTimer

        t0 = time.perf_counter()
        yield Started(
            workload=self.spec.name,
            params=dict(self.params),
            device=str(self.device),
            devices=[str(d) for d in self.devices],
            torch_version=str(torch.__version__),
        )
        cuda = self.device.type == "cuda"
        states: list[StrategyState] = []
        step_log: list[dict[str, Any]] = []
        pending_splits: list[SplitRecorded] = []
        current_step = [0]
        reports: dict[str, dict[str, Any]] = {}

        def on_report(strategy: str, key: str, value: Any) -> None:
            reports.setdefault(strategy, {})[key] = value

        def on_split(replica: int, device: str, rows: int, gpu_ms: float | None) -> None:
            pending_splits.append(SplitRecorded(current_step[0], replica, device, rows, gpu_ms))

        sampler = MemorySampler(self.devices, t0, self._emit_async, self._sample_interval_s)
        session: ProfilerSession | None = None
        history: Any = None  # --memory-snapshot: gpuviz.engine.memory_history.MemoryHistory
        snapshot_note: str | None = None
        plan: Plan | None = None
        outcome: Event | None = None
        trace_reported = False
        device_ctx = torch.cuda.device(self.device) if cuda else contextlib.nullcontext()
        if cuda:
            # reset_peak_memory_stats does not initialize CUDA itself: on a fresh process whose
            # devices were named (multi-GPU runs, ranks) it raises "Invalid device argument".
            torch.cuda.init()
            for d in self.devices:
                if d.type == "cuda":
                    torch.cuda.reset_peak_memory_stats(d)
        sampler.start()
        try:
            self._pause_for_tests("set-up")
            self._stop_if_cancelled()
            with device_ctx:
                ctx = RunContext(
                    self.device,
                    self.devices,
                    dict(self.params),
                    self.request.steps,
                    on_report=on_report,
                    on_split=on_split,
                )
                with self._workload_code("while it was loaded"):
                    plan = self._build(ctx)
                timer = StepTimer(self.device, between_steps=sampler.between_steps)

                def drained() -> Iterator[Event]:
                    yield from sampler.drain()
                    while pending_splits:
                        yield pending_splits.pop(0)
                    self._stop_if_cancelled()

                if self.request.memory_snapshot and self.request.profile:
                    # from set-up on, so that an out of memory in set-up or warm-up is caught
                    history, snapshot_note = start_memory_history(
                        self.trace_path, self.request.snapshot_entries
                    )
                if plan.setup is not None:
                    with self._workload_code("in its set-up"):
                        plan.setup()
                # Set-up and warm-ups: neither traced nor timed.
                baseline_result: list[Any] = []
                for s in plan.strategies:
                    st = StrategyState(s)
                    states.append(st)
                    if s.needs_cuda and not cuda:
                        st.status, st.reason = "skipped", NEEDS_CUDA
                        continue
                    if s.skip_reason:
                        st.status, st.reason = "skipped", s.skip_reason
                        continue
                    st.set_up = True
                    try:
                        with self._workload_code(f"in the set-up or warm-up of {s.name}"):
                            if s.setup is not None:
                                s.setup()
                            result = None
                            for _ in range(max(1, plan.warmup_steps)):
                                w0 = time.perf_counter()
                                result = s.step()
                            timer.synchronize()
                            st.warmup_s = time.perf_counter() - w0
                    except Exception as exc:
                        if not s.attempt or isinstance(exc, WorkloadExitError):
                            raise
                        st.status, st.error = "failed", f"{type(exc).__name__}: {exc}"
                        st.reason = s.failure_reason or None
                        del exc
                        self._teardown_one(st)
                        continue
                    if plan.check is not None:
                        with self._workload_code(f"checking the result of {s.name}"):
                            problem = plan.check(s.name, result)
                        if problem:
                            raise WrongResultError(f"{s.name} gave a wrong result: {problem}")
                    del result
                    yield from drained()
                del baseline_result
                runnable = [st for st in states if st.status == "ok"]
                per = self.request.steps + (plan.profile_steps if self.request.profile else 0)
                total = per * len(runnable)
                yield Progress(0, total)

                def profiled_step(st: StrategyState) -> Iterator[Event]:
                    self._stop_if_cancelled()
                    name = st.strategy.name
                    with (
                        torch.profiler.record_function(step_range_name(name, current_step[0])),
                        self._workload_code(f"in step {current_step[0]}"),
                    ):
                        wall, gpu = timer.time(st.strategy.step)
                    st.profiled_wall_ms.append(wall)
                    if gpu is not None:
                        st.profiled_gpu_ms.append(gpu)
                    ev = StepTimed(current_step[0], name, wall, gpu, True)
                    step_log.append({k: v for k, v in asdict(ev).items() if v is not None})
                    current_step[0] += 1
                    yield ev
                    yield Progress(current_step[0], total)

                if self.request.profile and runnable and self.trace_path is not None:
                    session = ProfilerSession(
                        self.trace_path, plan.profile_steps * len(runnable), cuda
                    )
                    collect_garbage()
                    session.start()
                    self._pause_for_tests("profiling")
                    for st in runnable:
                        for _ in range(plan.profile_steps):
                            yield from profiled_step(st)
                            session.step()
                            yield from drained()
                    self._pause_for_tests("export")
                    session.stop()
                    if history is not None:
                        history.finish()
                    if session.written is not None:
                        trace_reported = True
                        yield TraceReady(str(session.written))

                def timed_steps(st: StrategyState) -> Iterator[Event]:
                    # Short steps run back to back, their events held and sent at most every
                    # TIMED_FLUSH_S: yielding between two 55 µs steps (event objects, the
                    # consumer's work, draining samples) cost about 5% of the step on an H100
                    # (benchmarks/overhead_probe.py). Long steps still report one by one.
                    held: list[tuple[int, float, float | None]] = []

                    def flush() -> Iterator[Event]:
                        for step, wall, gpu in held:
                            ev = StepTimed(step, st.strategy.name, wall, gpu, False)
                            step_log.append({k: v for k, v in asdict(ev).items() if v is not None})
                            yield ev
                            yield Progress(step + 1, total)
                        held.clear()

                    step = st.strategy.step
                    if st.strategy.repeatable and st.warmup_s <= REWARM_MAX_S:
                        with self._workload_code(f"in a warm-up of {st.strategy.name}"):
                            st.strategy.step()
                        timer.synchronize()
                    last_flush = time.perf_counter()
                    try:
                        for _ in range(self.request.steps):
                            self._stop_if_cancelled()
                            wall, gpu = self._timed_step(timer, step, current_step[0])
                            st.wall_ms.append(wall)
                            if gpu is not None:
                                st.gpu_ms.append(gpu)
                            held.append((current_step[0], wall, gpu))
                            current_step[0] += 1
                            if time.perf_counter() - last_flush >= TIMED_FLUSH_S:
                                yield from flush()
                                yield from drained()
                                last_flush = time.perf_counter()
                    except GeneratorExit:
                        raise
                    except BaseException:
                        yield from flush()  # nothing measured is lost to a failure or a cancel
                        raise
                    yield from flush()
                    yield from drained()

                for st in runnable:
                    self._pause_for_tests("timed")
                    # A strategy's timed steps must not pay for the garbage of the one before
                    # (a 100k-element for loop left a full collection to the next strategy).
                    collect_garbage()
                    with sampler.stepping():
                        yield from timed_steps(st)
                self._pause_for_tests("finishing")
                result = self._result(plan, states, step_log, reports, session, sampler)
                add_snapshot_result(result, history, snapshot_note)
            outcome = Finished(result)
        except (_Cancel, KeyboardInterrupt):
            outcome = Cancelled(None)
        except Exception as exc:
            if history is not None:  # the snapshot at the failure, before it is reported
                history.on_error(exc)
            outcome = Failed(_describe(exc), tb_module.format_exc(), None)
            del exc
        finally:
            # Always stop what we started; an unfinished profiler writes its partial trace here.
            cleanup_error = self._cleanup(session, states, plan, sampler)
            if history is not None:
                history.finish()
        plan = None
        states = []
        self._free_memory(cuda)
        partial = None
        if session is not None and session.written is not None:
            partial = str(session.written)
            if not trace_reported and not isinstance(outcome, Finished):
                yield TraceReady(partial)
        yield from sampler.drain()
        if isinstance(outcome, Finished) and self._cancel.is_set():
            # Cancelled after the last step (while the result or the cleanup was made): a
            # cancel still, with the trace kept, never a silent success.
            outcome = Cancelled(None)
        if isinstance(outcome, Cancelled):
            yield Cancelled(partial)
        elif isinstance(outcome, Failed):
            yield Failed(outcome.error, outcome.traceback, partial)
        elif isinstance(outcome, Finished):
            if cleanup_error:
                outcome.result.setdefault("warnings", []).append(cleanup_error)
            yield outcome

    def _build(self, ctx: RunContext) -> Plan:
        body = self.spec.load()
        if self.spec.kind == "function":
            label = self.spec.entry.rpartition(":")[2] or self.spec.name
            return function_plan(body, ctx, label)
        plan = body(ctx)
        if not isinstance(plan, Plan):
            raise TypeError(f"{self.spec.entry} returned {type(plan).__name__}, not a Plan")
        return plan

    def _teardown_one(self, st: StrategyState) -> str | None:
        if not st.set_up or st.strategy.teardown is None:
            st.set_up = False
            return None
        st.set_up = False
        try:
            with self._workload_code(f"in the teardown of {st.strategy.name}", interruptible=False):
                st.strategy.teardown()
        except Exception as exc:
            return f"teardown of {st.strategy.name} failed: {_describe(exc)}"
        return None

    def _cleanup(
        self, session: Any, states: list[StrategyState], plan: Plan | None, sampler: Any
    ) -> str | None:
        errors = []
        if session is not None:
            try:
                session.stop()
            except Exception as exc:  # the trace is lost, the process must live on
                errors.append(f"stopping the profiler failed: {exc}")
        for st in states:
            err = self._teardown_one(st)
            if err:
                errors.append(err)
        if plan is not None and plan.teardown is not None:
            try:
                with self._workload_code("in its teardown", interruptible=False):
                    plan.teardown()
            except Exception as exc:
                errors.append(f"teardown failed: {exc}")
        sampler.stop()
        return "; ".join(errors) or None

    def _free_memory(self, cuda: bool) -> None:
        collect_garbage()
        if cuda:
            import torch

            with contextlib.suppress(Exception):
                torch.cuda.synchronize(self.device)
            with contextlib.suppress(Exception):
                torch.cuda.empty_cache()

    # -- the result object ------------------------------------------------------------------
    def _result(
        self,
        plan: Plan,
        states: list[StrategyState],
        step_log: list[dict[str, Any]],
        reports: dict[str, dict[str, Any]],
        session: Any,
        sampler: Any,
    ) -> dict[str, Any]:
        import torch

        figures = session.figures if session is not None else {}
        strategies, skipped = strategy_entries(states, plan.baseline, figures, reports)
        rss, mem_devices = memory_peaks(self.devices, sampler.peaks)
        result: dict[str, Any] = {
            "workload": self.spec.name,
            "title": self.spec.title,
            "device": str(self.device),
            "devices": [str(d) for d in self.devices],
            "params": dict(self.params),
            "torch_version": str(torch.__version__),
            "steps_per_strategy": self.request.steps,
            "steps": step_log,
            "baseline": plan.baseline,
            "strategies": strategies,
            "skipped": skipped,
            "memory": {"peak_rss_bytes": rss, "devices": mem_devices},
            "trace": str(session.written) if session is not None and session.written else None,
        }
        if session is not None and session.write_s is not None:
            result["trace_write_s"] = session.write_s
            result["profiler_stop_s"] = session.stop_s
            result["trace_figures_s"] = session.figures_s
        if session is not None and session.error:
            result.setdefault("warnings", []).append(session.error)
        result.update(plan.figures)
        if plan.summarize is not None:
            with self._workload_code("summing up its result", interruptible=False):
                result.update(plan.summarize(result))
        return result


__all__ = ["NEEDS_CUDA", "InProcessRun", "WrongResultError"]
