"""One ``gpuviz profile`` run in this process: the script, the profiler, the events, the trace.

:meth:`ScriptSession.run` installs the step hooks (:mod:`gpuviz.engine.script.steps`), runs
the script as ``__main__`` (:mod:`gpuviz.engine.script.target`), and returns the script's exit
status. Along the way:

- **Steps.** At each step boundary the step is timed (``StepTimed``, with ``profiled``), and
  ``torch.profiler``'s ``step()`` is called with a schedule that is
  :class:`~gpuviz.engine.script.schedule.Schedule`'s, so the trace's ``ProfilerStep#N`` is
  step N. Each window's trace is written as it closes (``TraceReady``), with the fast writer of
  :mod:`gpuviz.engine.profiling`, into the file or the rank folder of
  :class:`~gpuviz.engine.script.options.OutPlan`. That export stalls the script once per
  window; the step after it is timed from the end of the stall.
- **No step.** Without ``--step-fn``, the profiler also runs from the script's start, in case
  no step ever comes. The script's first optimizer (or step) ends that recording, which is
  dropped. If neither has come after ``--duration`` seconds, those first seconds are written as
  one range (the main thread is told through ``_thread.interrupt_main`` with a signal number
  no program uses), and the run says so and suggests ``--step-fn``. Under a launcher (ranks),
  that recording is CPU-only: the script has not picked its GPU yet, and CUDA activity would
  put a context on GPU 0 from every rank.
- **Memory.** The memory sampler (:mod:`gpuviz.engine.sampler`) reads host RSS from the start,
  and the step's GPU once the script has used CUDA (``MemorySample``). ``--memory-snapshot``
  records the allocator's history over the profiled windows (:mod:`gpuviz.engine.memory_history`).
- **A profiler of the script's own.** ``torch.profiler`` cannot run twice. When the script
  starts its own, gpuviz stops its profiler (writing the window it was recording), says so, and
  records no more; the script's profiler runs as written. Steps are still timed.
- **The end.** However the script ends (return, ``sys.exit(n)``, an exception, Ctrl-C,
  SIGTERM, ``--stop``), what was recorded is written, with Ctrl-C and SIGTERM held off while it
  is, and the last event is ``Finished`` (status 0), ``Failed`` (another status or an
  exception, with the traceback) or ``Cancelled`` (Ctrl-C, SIGTERM).

gpuviz's own lines go to stderr, prefixed ``gpuviz:``; the script's output is untouched.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
import threading
import time
import traceback as tb_module
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from gpuviz.engine.events import (
    Cancelled,
    Event,
    EventWriter,
    Failed,
    Finished,
    Progress,
    Started,
    StepTimed,
    TraceReady,
    encode_event,
)
from gpuviz.engine.script.options import OutPlan, ProfileOptions, RankInfo, parse_step_fn
from gpuviz.engine.script.report import build_result, print_report, say
from gpuviz.engine.script.schedule import Phase
from gpuviz.engine.script.steps import StepSources, StepTimer, TimedStep
from gpuviz.engine.script.target import (
    STEP_DECORATOR,
    Target,
    compile_main,
    exit_code_of,
    print_exception,
    run_as_main,
    trim_traceback,
)

EXIT_CANCELLED = 130
EXIT_TERMINATED = 143
NO_STEP_RANGE = "gpuviz/no-step range"
"""The ``record_function`` around a recording that found no step."""

_WAKE_SIGNAL: Any = signal.SIGRTMIN + 5 if hasattr(signal, "SIGRTMIN") else signal.SIGUSR2
"""The signal number the session's timer uses to wake the main thread (never sent by the OS)."""


class StopRequested(BaseException):
    """``--stop``: the last window is written; end the script (status 0).

    A ``BaseException``, like ``SystemExit``: ``except Exception`` in the script lets it by.
    """


class Terminated(BaseException):
    """SIGTERM reached the script (a launcher stopping it): write what was recorded, exit 143."""


class EventSink:
    """Where events go: the ``--events`` file and/or the app's pipe (``--events-fd``); thread-safe.

    A sink that breaks (a full disk, the app gone) is dropped with one line; the script goes on.
    """

    def __init__(self, events_path: str | None = None, events_fd: int | None = None) -> None:
        self._lock = threading.Lock()
        self._writer: EventWriter | None = EventWriter(events_path) if events_path else None
        self._pipe: io.TextIOWrapper | None = None
        if events_fd is not None:
            self._pipe = os.fdopen(events_fd, "w", encoding="utf-8", buffering=1)
        self.events: list[Event] = []  # the terminal and trace events, for the caller

    def emit(self, event: Event) -> None:
        """Send one event to every sink."""
        with self._lock:
            if isinstance(event, (TraceReady, Finished, Failed, Cancelled)):
                self.events.append(event)
            if self._writer is not None:
                try:
                    self._writer.write(event)
                except (OSError, ValueError) as exc:
                    say(f"could not write the events file: {exc}")
                    self._writer = None
            if self._pipe is not None:
                try:
                    self._pipe.write(encode_event(event) + "\n")
                except (OSError, ValueError):
                    self._pipe = None  # the reader is gone

    def close(self) -> None:
        """Close the sinks (idempotent)."""
        with self._lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
            if self._pipe is not None:
                with contextlib.suppress(OSError, ValueError):
                    self._pipe.close()
                self._pipe = None


class ScriptSession:
    """Runs one script under the profiler (see the module docstring).

    Parameters
    ----------
    options : ProfileOptions
        Checked options.
    target : Target
        The resolved script or module.
    plan : OutPlan
        Where the traces go.
    rank : RankInfo, optional
        The launcher's rank, when there is one.
    sink : EventSink, optional
        Default: from ``options.events`` and ``options.events_fd``.
    """

    def __init__(
        self,
        options: ProfileOptions,
        target: Target,
        plan: OutPlan,
        rank: RankInfo | None = None,
        sink: EventSink | None = None,
    ) -> None:
        self.options = options
        self.target = target
        self.plan = plan
        self.rank = rank
        self.schedule = options.schedule
        self.sink = sink or EventSink(options.events, options.events_fd)
        self.step = 0
        self.steps: list[TimedStep] = []
        self.traces: list[str] = []
        self.exports: list[dict[str, float]] = []
        self.warnings: list[str] = []
        self.exit_code = 0
        self.stopped = False
        self.no_step_range: str | None = None  # "written" or "dropped"
        self.no_step_reason = ""
        self.snapshot: str | None = None
        self.partial_window: str | None = None  # the trace of a window cut short
        self.device: str | None = None  # the steps' device, once known
        self._step_fn = parse_step_fn(options.step_fn) if options.step_fn else None
        self._torch: Any = None
        self._prof: Any = None
        self._provisional: Any = None
        self._provisional_range: Any = None
        self._own_depth = 0
        self._foreign_seen = False
        self._closing = False
        self._trace_window = 0
        self._windows_saved = 0
        self._sampler: Any = None
        self._sampler_cuda = False
        self._history: Any = None
        self._history_done = False
        self._timer_thread: threading.Timer | None = None
        self._undo: list[Callable[[], None]] = []
        self._sources: StepSources | None = None
        self._timer: StepTimer | None = None
        self._last_device: Any = None
        self._saved_signals: dict[int, Any] = {}
        self._holding = False
        self._held: list[int] = []
        self._wake_handler: Any = None
        self.t0 = time.perf_counter()

    # ================================================================================= running
    def run(self) -> int:
        """Run the script to its end; returns its exit status (see the module docstring)."""
        import torch

        main_qual = self._step_fn[1] if self._step_fn and self._step_fn[0] == "__main__" else None
        compile_error: BaseException | None = None
        try:  # BadInputError (no source for --step-fn) leaves here: exit 2, nothing started
            code, decorated = compile_main(self.target, main_qual)
        except (SyntaxError, ValueError) as exc:  # the script's own error: Python's exit 1
            compile_error, code, decorated = exc, None, 0
        self._torch = torch
        self.t0 = time.perf_counter()
        cuda = bool(torch.cuda.is_available())
        self.sink.emit(
            Started(
                workload=f"profile:{self.target.label}",
                params=self._params(),
                device="cuda" if cuda else "cpu",
                devices=["cuda" if cuda else "cpu"],
                torch_version=str(torch.__version__),
            )
        )
        self._timer = StepTimer(self.t0)
        self._sources = StepSources(
            self._on_boundary, self._step_fn, self._on_optimizer_created, say
        )
        outcome: Event | None = None
        error_exc: BaseException | None = None
        try:
            if compile_error is not None or code is None:
                raise compile_error or RuntimeError("the script did not compile")
            if main_qual is not None and not decorated:
                say(
                    f"--step-fn __main__:{main_qual}: {self.target.label} defines no such "
                    "function; no step will be marked"
                )
            self._install()
            extra = {STEP_DECORATOR: self._sources.decorator()} if main_qual else None
            run_as_main(self.target, code, extra)
        except SystemExit as exc:
            self.exit_code = exit_code_of(exc)
        except StopRequested:
            self.stopped = True
            self.exit_code = 0
        except KeyboardInterrupt as exc:
            self._hold_signals()
            print_exception(exc)
            self.exit_code = EXIT_CANCELLED
            outcome = Cancelled(None)
        except Terminated:
            self._hold_signals()
            say("stopped by SIGTERM")
            self.exit_code = EXIT_TERMINATED
            outcome = Cancelled(None)
        except BaseException as exc:
            self._hold_signals()
            print_exception(exc)
            self.exit_code = 1
            error_exc = exc
            tb = trim_traceback(exc.__traceback__)
            outcome = Failed(
                f"{type(exc).__name__}: {exc}",
                "".join(tb_module.format_exception(type(exc), exc, tb)),
            )
        finally:
            self._hold_signals()
            self._finish(error_exc)
        self._end(outcome)
        return self.exit_code

    def _params(self) -> dict[str, Any]:
        p = self.options.to_json()
        for key in ("events_fd", "json"):
            p.pop(key, None)
        p["out"] = str(self.plan.trace)
        if self.rank is not None:
            p.update(rank=self.rank.rank, world_size=self.rank.world_size)
        return p

    # ---------------------------------------------------------------------------- installing
    def _install(self) -> None:
        from gpuviz.engine.profiling import release_cupti_after_tracing

        torch = self._torch
        assert self._sources is not None
        release_cupti_after_tracing()  # else steps after the window pay CUPTI's cost (+27%)
        self._sources.install()
        self._undo.append(self._sources.uninstall)
        self._patch_profiler_start()
        self._install_signals()
        self._start_sampler(None)
        self._prof = torch.profiler.profile(
            activities=self._activities(cuda=bool(torch.cuda.is_initialized())),
            schedule=self._action,
            on_trace_ready=self._on_trace_ready,
            record_shapes=self.options.record_shapes,
            profile_memory=self.options.memory,
            with_stack=self.options.stack,
        )
        if self.schedule.phase(0) is not Phase.NONE:
            self._before_window()
        with self._own():
            self._prof.start()
        if self.schedule.phase(0) in (Phase.RECORD, Phase.RECORD_AND_SAVE):
            self._after_window_start(0)
        elif self._step_fn is None and os.environ.get("GPUVIZ_PROFILE_PROVISIONAL") != "0":
            # GPUVIZ_PROFILE_PROVISIONAL=0 (an experiment switch, benchmarks/bench_profile.py):
            # no recording before the first step.
            self._start_provisional()

    def _activities(self, cuda: bool) -> list[Any]:
        acts = [self._torch.profiler.ProfilerActivity.CPU]
        # GPUVIZ_PROFILE_CUPTI=0 (an experiment switch, benchmarks/bench_profile.py): CPU
        # activity only, so CUPTI never attaches.
        if cuda and os.environ.get("GPUVIZ_PROFILE_CUPTI") != "0":
            acts.append(self._torch.profiler.ProfilerActivity.CUDA)
        return acts

    def _action(self, step: int) -> Any:
        """The schedule, in torch's terms (``torch.profiler.profile(schedule=...)``)."""
        action = self._torch.profiler.ProfilerAction
        return {
            Phase.NONE: action.NONE,
            Phase.WARMUP: action.WARMUP,
            Phase.RECORD: action.RECORD,
            Phase.RECORD_AND_SAVE: action.RECORD_AND_SAVE,
        }[self.schedule.phase(step)]

    @contextlib.contextmanager
    def _own(self) -> Iterator[None]:
        """gpuviz's own profiler calls: not a profiler of the script's.

        They run on the steps' GPU: stopping the profiler synchronizes the current device,
        which must not start a CUDA context on GPU 0 for a script that uses another one.
        """
        self._own_depth += 1
        device = self._last_device
        try:
            with warnings.catch_warnings():
                # "Profiler won't be using warmup" and friends: the schedule is the user's.
                warnings.simplefilter("ignore")
                if device is not None:
                    with self._torch.cuda.device(device):
                        yield
                else:
                    yield
        finally:
            self._own_depth -= 1

    def _patch_profiler_start(self) -> None:
        # Every torch profiler (torch.profiler.profile, the autograd profiler, Lightning's,
        # the HF Trainer's) prepares its Kineto session here.
        cls = self._torch.autograd.profiler.profile
        original = cls.__dict__.get("_prepare_trace")
        if original is None:
            return
        session = self

        def _prepare_trace(prof: Any, *args: Any, **kwargs: Any) -> Any:
            if session._own_depth == 0 and not session._closing:
                session._on_foreign_profiler()
            return original(prof, *args, **kwargs)

        cls._prepare_trace = _prepare_trace
        self._undo.append(lambda: setattr(cls, "_prepare_trace", original))

    def _install_signals(self) -> None:
        """SIGTERM ends the script like Ctrl-C does; the wake signal serves the no-step timer."""
        if threading.current_thread() is not threading.main_thread():
            return

        def on_term(_signum: int, _frame: Any) -> None:
            raise Terminated()

        def on_wake(_signum: int, _frame: Any) -> None:
            self._on_wake()

        self._wake_handler = on_wake
        for sig, handler in (
            (signal.SIGINT, None),
            (signal.SIGTERM, on_term),
            (_WAKE_SIGNAL, on_wake),
        ):
            try:
                old = signal.getsignal(sig)
                if handler is not None:
                    signal.signal(sig, handler)
            except (ValueError, OSError):
                continue
            self._saved_signals[sig] = old

    def _hold_signals(self) -> None:
        """From now on Ctrl-C and SIGTERM wait until the trace is written (main thread only)."""
        self._closing = True
        if self._holding or threading.current_thread() is not threading.main_thread():
            return
        self._holding = True

        def hold(signum: int, _frame: Any) -> None:
            self._held.append(signum)
            say("writing what was recorded; the run ends right after")

        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, hold)

    @contextlib.contextmanager
    def _signals_deferred(self) -> Iterator[None]:
        """Ctrl-C during a window's start or export waits until it is done, then interrupts
        the script as usual (a trace cut mid-write would be lost)."""
        if self._holding or threading.current_thread() is not threading.main_thread():
            yield
            return
        got: list[int] = []
        saved = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError, OSError):
                saved[sig] = signal.signal(sig, lambda signum, _f: got.append(signum))
        try:
            yield
        finally:
            for sig, old in saved.items():
                with contextlib.suppress(ValueError, OSError, TypeError):
                    signal.signal(sig, old)
        if signal.SIGINT in got:
            raise KeyboardInterrupt
        if signal.SIGTERM in got:
            raise Terminated()

    def _release_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig, old in self._saved_signals.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(sig, old if old is not None else signal.SIG_DFL)
        self._saved_signals = {}

    # ------------------------------------------------------------------------------ boundaries
    def _on_boundary(self, source: str, device: Any) -> None:
        if self._closing:
            return
        assert self._timer is not None
        if self._provisional is not None:
            self._end_provisional(keep=False, why=f"steps end at {source}")
        k = self.step
        profiled = self._profiling_now()
        if device is None and self._torch.cuda.is_initialized():
            device = self._torch.device("cuda", self._torch.cuda.current_device())
        if device is not None and getattr(device, "type", "") == "cuda":
            self._last_device = device
            if not self._sampler_cuda:
                self._start_sampler(device)
        self._timer.end(k, profiled, device)
        self.step = k + 1
        heavy = self._advance_profiler(k)
        if self._prof is None and os.environ.get("GPUVIZ_PROFILE_STEP_HOOK") == "0":
            assert self._sources is not None  # the sources called this
            self._sources.pause()  # an experiment switch (benchmarks/bench_profile.py)
        if heavy:
            self._timer.restart(device)
        self._emit_steps(self._timer.ready())
        total = (self.schedule.last_step or -1) + 1 if self.options.stop else 0
        self.sink.emit(Progress(self.step, total))
        if (
            self.options.stop
            and self.schedule.last_step is not None
            and k >= self.schedule.last_step
        ):
            raise StopRequested()

    def _profiling_now(self) -> bool:
        if self._provisional is not None:
            return True
        prof = self._prof
        if prof is None:
            return False
        return prof.current_action != self._torch.profiler.ProfilerAction.NONE

    def _advance_profiler(self, k: int) -> bool:
        """``prof.step()`` at the end of step ``k``; True when it did real work (a window)."""
        prof = self._prof
        if prof is None:
            return False
        actions = self._torch.profiler.ProfilerAction
        before = prof.current_action
        nxt = self.schedule.phase(k + 1)
        last = self.schedule.last_step
        if before == actions.NONE and nxt is Phase.NONE:
            if last is not None and k >= last:
                self._drop_profiler()  # every window is done: no more ProfilerStep ranges
            else:
                with self._own():
                    prof.step()
            return False
        if before in (actions.NONE, actions.RECORD_AND_SAVE) and nxt is not Phase.NONE:
            if not self._before_window(check_foreign=before == actions.NONE):
                return True  # the script's own profiler runs: gpuviz stood aside
        self._trace_window = self.schedule.window(k) or 0
        t = time.perf_counter()
        with self._signals_deferred(), self._own():
            prof.step()
        if before == actions.RECORD_AND_SAVE and self.exports:
            self.exports[-1]["stall_s"] = time.perf_counter() - t
        after = prof.current_action
        if after in (actions.RECORD, actions.RECORD_AND_SAVE) and before != actions.RECORD:
            self._after_window_start(k + 1)
        if last is not None and k >= last:
            self._finish_history()
            self._drop_profiler()
        return True

    def _before_window(self, check_foreign: bool = True) -> bool:
        """A profiler session is about to be prepared: pick its activities, start the
        allocator history. False when another profiler is running (gpuviz stands aside)."""
        torch = self._torch
        prof = self._prof
        if check_foreign and torch.autograd.profiler._is_profiler_enabled:
            self._on_foreign_profiler()
            return False
        cuda = bool(torch.cuda.is_initialized())
        if prof is not None:
            # The profiler was made before the script ran: CUDA activity only once the script
            # uses CUDA (before that it would start CUDA itself, on GPU 0, from every rank).
            prof.activities = set(self._activities(cuda))
            cuda_activity = torch.profiler.ProfilerActivity.CUDA in prof.activities
            prof.use_device = "cuda" if cuda_activity else None  # "cuda" adds CUDA activity
        if self.options.memory_snapshot and self._history is None:
            self._start_history(cuda)
        return True

    def _after_window_start(self, step: int) -> None:
        """The profiler records from ``step`` on: add the trace's metadata."""
        torch = self._torch
        prof = self._prof
        if prof is None or prof.current_action in (
            torch.profiler.ProfilerAction.NONE,
            torch.profiler.ProfilerAction.WARMUP,
        ):
            return
        with contextlib.suppress(Exception):
            dist = torch.distributed
            initialized = dist.is_available() and dist.is_initialized()
            if self.rank is not None and not initialized:
                # torch writes distributedInfo only for an initialized process group. json.dumps
                # keeps the space after each colon that HTA's rank regex needs.
                prof.add_metadata_json(
                    "distributedInfo",
                    json.dumps({"rank": self.rank.rank, "world_size": self.rank.world_size}),
                )
            prof.add_metadata_json(
                "gpuviz",
                json.dumps(
                    {
                        "script": self.target.label,
                        "window": self.schedule.window(step),
                        "steps": list(
                            self.schedule.recorded_steps(self.schedule.window(step) or 0)
                        ),
                    }
                ),
            )

    def _drop_profiler(self) -> None:
        prof, self._prof = self._prof, None
        if prof is not None:
            with self._own():
                with contextlib.suppress(Exception):
                    prof.stop()

    def _on_trace_ready(self, prof: Any) -> None:
        from gpuviz.engine.profiling import write_trace

        results = prof.profiler.kineto_results
        if results is None:
            return
        path = self.plan.window_path(self._trace_window)
        try:
            write_s = write_trace(results, path)
        except Exception as exc:
            self.warnings.append(f"writing {path} failed: {exc}")
            say(f"writing the trace {path} failed: {exc}")
            return
        self._windows_saved += 1
        self.exports.append({"window": float(self._trace_window), "write_s": write_s})
        self.traces.append(str(path))
        self.sink.emit(TraceReady(str(path)))

    # ------------------------------------------------------------------- the no-step recording
    def _on_optimizer_created(self) -> None:
        if self._provisional is not None and not self._closing:
            self._end_provisional(keep=False, why="the script made an optimizer")

    def _start_provisional(self) -> None:
        torch = self._torch
        under_launcher = self.rank is not None and self.rank.world_size > 1
        cuda = bool(torch.cuda.is_available()) and not under_launcher
        with self._own():
            prof = torch.profiler.profile(
                activities=self._activities(cuda),
                record_shapes=self.options.record_shapes,
                profile_memory=self.options.memory,
                with_stack=self.options.stack,
            )
            prof.start()
        self._provisional = prof
        self._provisional_range = torch.profiler.record_function(NO_STEP_RANGE)
        self._provisional_range.__enter__()
        if under_launcher:
            self.no_step_reason = (
                "CPU activity only: under a launcher it began before the script picked its GPU"
            )
        timer = threading.Timer(self.options.duration_s, self._wake_main)
        timer.daemon = True
        timer.start()
        self._timer_thread = timer

    def _wake_main(self) -> None:
        """Timer thread: ask the main thread to end the no-step recording."""
        import _thread

        if self._provisional is None or self._closing:
            return
        if signal.getsignal(_WAKE_SIGNAL) is getattr(self, "_wake_handler", None):
            _thread.interrupt_main(_WAKE_SIGNAL)

    def _on_wake(self) -> None:
        if self._provisional is None or self._closing:
            return
        with self._signals_deferred():
            self._end_provisional(keep=True, why="")
        if self.options.stop:
            raise StopRequested()

    def _end_provisional(self, keep: bool, why: str) -> None:
        prof, self._provisional = self._provisional, None
        if self._timer_thread is not None:
            self._timer_thread.cancel()
        if prof is None:
            return
        torch = self._torch
        with self._own():
            with contextlib.suppress(Exception):
                if self._provisional_range is not None:
                    self._provisional_range.__exit__(None, None, None)
            self._provisional_range = None
            if not torch.cuda.is_initialized() and hasattr(prof.profiler, "use_device"):
                prof.profiler.use_device = None  # stopping must not start CUDA on GPU 0
            t = time.perf_counter()
            prof.stop()
        if not keep:
            self.no_step_range = "dropped"
            del prof
            return
        from gpuviz.engine.profiling import write_trace

        elapsed = time.perf_counter() - self.t0
        path = self.plan.window_path(0)
        try:
            write_s = write_trace(prof.profiler.kineto_results, path)
        except Exception as exc:
            self.warnings.append(f"writing {path} failed: {exc}")
            say(f"writing the trace {path} failed: {exc}")
            return
        self.no_step_range = "written"
        self.exports.append({"window": 0.0, "write_s": write_s, "stall_s": time.perf_counter() - t})
        self.traces.append(str(path))
        self.sink.emit(TraceReady(str(path)))
        say(
            f"no step was seen in the first {min(elapsed, self.options.duration_s):.1f} s (no "
            "optimizer.step(), no gpuviz.step()): they were recorded as one range"
            + (f" ({self.no_step_reason})" if self.no_step_reason else "")
            + ". Mark the steps with --step-fn MODULE:FUNCTION (e.g. --step-fn __main__:generate)"
        )
        del why

    # ------------------------------------------------------------------ another profiler
    def _on_foreign_profiler(self) -> None:
        if self._foreign_seen:
            return
        self._foreign_seen = True
        where = _caller_outside_torch()
        if self._provisional is not None:
            self._end_provisional(keep=False, why="the script's own profiler")
        written_before = len(self.traces)
        if self._prof is not None:
            self._trace_window = self.schedule.window(self.step) or 0
            self._drop_profiler()
            if len(self.traces) > written_before:
                self.partial_window = self.traces[-1]
        msg = (
            f"the script starts torch.profiler itself{f' ({where})' if where else ''}; two "
            "profilers cannot run at once, so gpuviz records no trace from here on (steps are "
            "still timed). Remove the script's profiler to let gpuviz trace it"
        )
        if len(self.traces) > written_before:
            msg += f". The window recorded so far is in {self.traces[-1]}"
        say(msg)
        self.warnings.append("the script started its own torch.profiler: gpuviz stood aside")

    # ---------------------------------------------------------------------------- memory
    def _start_sampler(self, device: Any) -> None:
        from gpuviz.engine.sampler import MemorySampler

        torch = self._torch
        if os.environ.get("GPUVIZ_PROFILE_SAMPLER") == "0":
            return  # an experiment switch (benchmarks/bench_profile.py): no memory samples
        if self._sampler is not None:
            self._sampler.stop()
        devices = [device] if device is not None else [torch.device("cpu")]
        self._sampler_cuda = device is not None
        if device is not None:
            self.device = f"cuda:{device.index if device.index is not None else 0}"
        try:
            self._sampler = MemorySampler(devices, self.t0, emit=self.sink.emit)
        except ImportError as exc:  # psutil missing: the run goes on without memory samples
            self._sampler = None
            if not self._sampler_cuda or device is None:
                say(f"no memory samples: {exc}")
            return
        self._sampler.start()

    def _start_history(self, cuda: bool) -> None:
        from gpuviz.engine.memory_history import MemoryHistory, snapshot_path_for

        path = snapshot_path_for(self.plan.trace, self.plan.rank)
        self._history = MemoryHistory(path, self.options.snapshot_entries)
        if not cuda:
            reason = "needs CUDA" + (
                " (the script has not used CUDA when profiling starts)"
                if self._torch.cuda.is_available()
                else ""
            )
        else:
            reason = self._history.start()
        if reason:
            say(f"--memory-snapshot: {reason}; no allocator snapshot")
            self.warnings.append(f"--memory-snapshot: {reason}")
            self._history_done = True

    def _finish_history(self, error: BaseException | None = None) -> None:
        h = self._history
        if h is None or self._history_done:
            return
        self._history_done = True
        try:
            if error is not None:
                h.on_error(error)
            written = h.finish()
        except Exception as exc:
            say(f"--memory-snapshot: writing the snapshot failed: {exc}")
            return
        if written is not None:
            self.snapshot = str(written)
        if h.error:
            self.warnings.append(h.error)

    # ------------------------------------------------------------------------------- the end
    def _finish(self, error: BaseException | None) -> None:
        """Stop everything and write what was recorded (never raises)."""
        self._closing = True
        torch = self._torch
        try:
            if self._provisional is not None:
                self._end_provisional(keep=True, why="the script ended")
            if self._prof is not None:
                self._trace_window = self.schedule.window(self.step) or 0
                recording = self._prof.current_action not in (
                    torch.profiler.ProfilerAction.NONE,
                    torch.profiler.ProfilerAction.WARMUP,
                )
                t = time.perf_counter()
                written = len(self.traces)
                self._drop_profiler()
                if recording and len(self.traces) > written:
                    self.exports[-1]["stall_s"] = time.perf_counter() - t
                    self.partial_window = self.traces[-1]
            self._finish_history(error)
        except Exception as exc:
            say(f"stopping the profiler failed: {exc}")
            self.warnings.append(f"stopping the profiler failed: {exc}")
        if self._timer is not None:
            with contextlib.suppress(Exception):
                self._emit_steps(self._timer.flush())
        if self._sampler is not None:
            with contextlib.suppress(Exception):
                self._sampler.stop()
        for undo in reversed(self._undo):
            with contextlib.suppress(Exception):
                undo()
        self._undo = []

    def _emit_steps(self, steps: list[TimedStep]) -> None:
        label = self.target.stem
        for s in steps:
            self.steps.append(s)
            self.sink.emit(StepTimed(s.step, label, s.wall_ms, s.gpu_ms, s.profiled))

    def _end(self, outcome: Event | None) -> None:
        result = build_result(self)
        partial = self.traces[0] if self.traces else None
        if isinstance(outcome, Cancelled):
            event: Event = Cancelled(partial)
        elif isinstance(outcome, Failed):
            event = Failed(outcome.error, outcome.traceback, partial)
        elif self.exit_code != 0:
            event = Failed(f"the script exited with status {self.exit_code}", "", partial)
        else:
            event = Finished(result)
        print_report(result, self)
        self.sink.emit(event)
        self.sink.close()
        if self.options.json:
            sys.stdout.write(json.dumps(result, default=str) + "\n")
            sys.stdout.flush()
        self._release_signals()
        if self._held and self.exit_code == 0:
            self.exit_code = EXIT_CANCELLED


def _caller_outside_torch() -> str:
    """``file:line`` of the innermost frame that is neither torch's nor gpuviz's."""
    import torch

    skip = (os.path.dirname(torch.__file__), str(Path(__file__).resolve().parents[2]))
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if (
            not filename.startswith(skip)
            and "lightning" not in filename
            and ("transformers" not in filename)
        ):
            return f"{os.path.basename(filename)}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    return ""


__all__ = ["EventSink", "ScriptSession", "StopRequested", "Terminated"]
