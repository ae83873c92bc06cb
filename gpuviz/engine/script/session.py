"""One ``gpuviz profile`` run in this process: the script, the profiler, the events, the trace.

:meth:`ScriptSession.run` installs the step hooks (:mod:`gpuviz.engine.script.steps`), runs
the script as ``__main__`` (:mod:`gpuviz.engine.script.target`), and returns the script's exit
status. Along the way:

- **Steps.** At each step boundary the step is timed (``StepTimed``, with ``profiled``), and
  ``torch.profiler``'s ``step()`` is called with a schedule that is
  :class:`~gpuviz.engine.script.schedule.Schedule`'s, so the trace's ``ProfilerStep#N`` is
  step N. Each window's trace is written as it closes (``TraceReady``), by
  :class:`~gpuviz.engine.script.writing.TraceFiles`, into the file or the rank folder of
  :class:`~gpuviz.engine.script.options.OutPlan`. That export stalls the script once per
  window; the step after it is timed from the end of the stall.
- **No step.** Without ``--step-fn``, the profiler also runs from the script's start, in case
  no step ever comes. The script's first optimizer (or step) ends that recording, which is
  dropped. If neither has come after ``--duration`` seconds, those first seconds are written as
  one range (with CUDA, counted from the script's first CUDA call) (the main thread is told through ``_thread.interrupt_main`` with a signal number
  no program uses, :mod:`gpuviz.engine.script.signals`), and the run says so and suggests
  ``--step-fn``. With ``--step-fn``, the same recording runs until the function is found
  (wrapped); if it never is, that range is what is written, and one line says why. Under a
  launcher (ranks), that recording is CPU-only: the script has not picked its GPU yet, and
  CUDA activity would put a context on GPU 0 from every rank.
- **Memory.** The memory sampler (:mod:`gpuviz.engine.sampler`) reads host RSS from the start,
  and the step's GPU once the script has used CUDA (``MemorySample``), at 10 Hz. ``--memory-snapshot``
  records the allocator's history over the profiled windows (:mod:`gpuviz.engine.memory_history`).
- **A profiler of the script's own.** ``torch.profiler`` cannot run twice. When the script
  starts its own, gpuviz stops its profiler (writing the window it was recording), says so, and
  records no more; the script's profiler runs as written. Steps are still timed.
- **Forks.** A child forked by the script is disarmed and ends with its own status, without
  a report or a trace (:mod:`gpuviz.engine.script.forking`).
- **The end.** However the script ends (return, ``sys.exit(n)``, an exception, Ctrl-C,
  SIGTERM, ``--stop``), what was recorded is written, with Ctrl-C and SIGTERM held off while it
  is, and the last event is ``Finished`` (status 0), ``Failed`` (another status or an
  exception, with the traceback) or ``Cancelled`` (Ctrl-C, SIGTERM).

gpuviz's own lines go to stderr, prefixed ``gpuviz:``; the script's output is untouched.

The parts kept apart: the no-step recording (:mod:`gpuviz.engine.script.no_step`) and the
profiler's start and stop hooks, with a profiler of the script's own
(:mod:`gpuviz.engine.script.profiler_hooks`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
import traceback as tb_module
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from gpuviz.engine.cupti import teardown_skipped
from gpuviz.engine.events import (
    Cancelled,
    Event,
    Failed,
    Finished,
    Started,
    StepTimed,
)
from gpuviz.engine.script import forking
from gpuviz.engine.script.memory import SessionMemory
from gpuviz.engine.script.no_step import NoStepRecordingMixin
from gpuviz.engine.script.options import OutPlan, ProfileOptions, RankInfo, parse_step_fn
from gpuviz.engine.script.profiler_hooks import ProfilerHooksMixin
from gpuviz.engine.script.report import build_result, print_report, say
from gpuviz.engine.script.schedule import Phase
from gpuviz.engine.script.signals import SessionSignals, StopRequested, Terminated
from gpuviz.engine.script.step_timer import StepTimer, TimedStep
from gpuviz.engine.script.steps import StepSources
from gpuviz.engine.script.target import (
    STEP_DECORATOR,
    Target,
    compile_main,
    exit_code_of,
    print_exception,
    run_as_main,
    trim_traceback,
)
from gpuviz.engine.script.writing import EventSink, TraceFiles, open_sink

EXIT_CANCELLED = 130
EXIT_TERMINATED = 143


class ScriptSession(NoStepRecordingMixin, ProfilerHooksMixin):
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
        self.sink = sink or open_sink(options.events, options.events_fd)
        self.files = TraceFiles(self.sink)
        self.step = 0
        self.steps: list[TimedStep] = []
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
        self.memory = SessionMemory(self.warnings)
        self._timer_thread: threading.Timer | None = None
        self._countdown_from: float | None = None
        self._undo: list[Callable[[], None]] = []
        self._sources: StepSources | None = None
        self._timer: StepTimer | None = None
        self._last_device: Any = None
        self._signals = SessionSignals(
            self._on_wake, lambda: say("writing what was recorded; the run ends right after")
        )
        self._child = False  # a forked child of the script's (see forking)
        self._step_fn_problem = ""
        self._step_label = target.stem  # read at every step: a Path made once, not per step
        # GPUVIZ_PROFILE_STEP_HOOK=0 (an experiment switch, benchmarks/bench_profile.py): the
        # step hook pauses once the last window is written.
        self._pause_after_windows = os.environ.get("GPUVIZ_PROFILE_STEP_HOOK") == "0"
        self.t0 = time.perf_counter()

    @property
    def traces(self) -> list[str]:
        """The trace files written, in order."""
        return self.files.traces

    @property
    def exports(self) -> list[dict[str, float]]:
        """How long each trace took to write (and the stall it caused)."""
        return self.files.exports

    @property
    def write_errors(self) -> list[str]:
        """The windows whose trace could not be written, with the cause."""
        return self.files.errors

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
            self._on_boundary,
            self._step_fn,
            self._on_optimizer_created,
            say,
            on_step_fn_resolved=self._on_step_fn_resolved,
            on_step_fn_problem=self._on_step_fn_problem,
        )
        outcome: Event | None = None
        error_exc: BaseException | None = None
        try:
            if compile_error is not None or code is None:
                raise compile_error or RuntimeError("the script did not compile")
            if main_qual is not None and not decorated:
                # Said once the --duration range is written (_end_provisional).
                self._step_fn_problem = f"{self.target.label} defines no such function"
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
            if self._child:  # a fork of the script's: the parent records (see forking)
                forking.exit_child(self.exit_code)
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
        from gpuviz.engine.cupti import release_cupti_after_tracing

        torch = self._torch
        assert self._sources is not None
        release_cupti_after_tracing()  # else steps after the window pay CUPTI's cost (+27%)
        forking.watch(self._disarm_in_child, before=self.sink.flush)
        self._undo.append(forking.unwatch)
        self._sources.install()
        self._undo.append(self._sources.uninstall)
        if self.options.compile_info:
            from gpuviz.engine.compile_info import compile_info_folder, enable_compile_info

            # Before the script compiles anything: Inductor writes each graph's provenance
            # beside the trace (NAME.compile/), where every command that reads it looks.
            self._undo.append(enable_compile_info(compile_info_folder(self.plan.base)))
        self._patch_profiler_start()
        # The app's child (its pipe given): its Cancel is SIGINT, whatever the app inherited.
        self._signals.install(take_sigint=self.options.events_fd is not None)
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
        elif (self._step_fn is None or not self._sources.step_fn_wrapped) and os.environ.get(
            "GPUVIZ_PROFILE_PROVISIONAL"
        ) != "0":
            # Also while --step-fn is not found yet: it may never be (a wrong name), and the
            # recording then falls back to the --duration range. GPUVIZ_PROFILE_PROVISIONAL=0
            # (an experiment switch, benchmarks/bench_profile.py): no recording before the
            # first step.
            self._start_provisional()

    def _activities(self, cuda: bool) -> list[Any]:
        acts = [self._torch.profiler.ProfilerActivity.CPU]
        if cuda:
            acts.append(self._torch.profiler.ProfilerActivity.CUDA)
        return acts

    def _action(self, step: int) -> Any:
        """The schedule, in torch's terms (``torch.profiler.profile(schedule=...)``)."""
        return self._torch.profiler.ProfilerAction[self.schedule.phase(step).name]

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

    def _hold_signals(self) -> None:
        """From now on Ctrl-C and SIGTERM wait until the trace is written (not in a fork)."""
        self._closing = True
        if not self._child:
            self._signals.hold()

    # ------------------------------------------------------------------------------ boundaries
    def _on_boundary(self, source: str, device: Any) -> None:
        if self._closing:
            return
        assert self._timer is not None
        if self._provisional is not None:
            self._end_provisional(keep=False, why=f"steps end at {source}")
        # This runs on the script's thread at every step, so each line is the script's cost.
        # In a real launch-bound step's cold caches it cost far more than in a loop
        # (benchmarks/boundary_ab.py on an H200 host: a median of 51 us, and switching it off
        # saved 0.75% of a 9.5 ms step); without the layers it had (Progress made and locked
        # each step, the checks of a profiler already dropped), 25 us, and no saving seen.
        k = self.step
        prof = self._prof
        profiled = prof is not None and self._profiling_now()
        if device is None and self._torch.cuda.is_initialized():
            device = self._torch.device("cuda", self._torch.cuda.current_device())
        if (
            device is not None
            and device is not self._last_device
            and getattr(device, "type", "") == "cuda"
        ):
            self._last_device = device
            if not self.memory.sampler_cuda:
                self._start_sampler(device)
        timer = self._timer
        timer.end(k, profiled, device)
        self.step = k + 1
        if prof is not None and self._advance_profiler(k):
            timer.restart(device)
        if self._pause_after_windows and self._prof is None:
            assert self._sources is not None  # the sources called this
            self._sources.pause()
        steps = timer.ready()
        if steps:
            self._emit_steps(steps)
        total = (self.schedule.last_step or -1) + 1 if self.options.stop else 0
        self.sink.progress(self.step, total)
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
                # Waiting: torch's prof.step() would only close and open a "ProfilerStep#N"
                # range that nothing records (about 32 us a step on an H200 host, half of
                # gpuviz's cost before the window). Count the step as it does; the step
                # before the window calls it (its range and next action follow step_num).
                prof.step_num += 1
            return False
        if before in (actions.NONE, actions.RECORD_AND_SAVE) and nxt is not Phase.NONE:
            if not self._before_window(check_foreign=before == actions.NONE):
                return True  # the script's own profiler runs: gpuviz stood aside
        self._trace_window = self.schedule.window(k) or 0
        t = time.perf_counter()
        with self._signals.deferred(), self._own():
            if before == actions.RECORD_AND_SAVE and nxt is not Phase.NONE:
                # It stops the trace and starts the next window's: CUPTI stays attached (the
                # patched __exit__ tears down at the last window's stop).
                with teardown_skipped():
                    prof.step()
            else:
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
        if self.options.memory_snapshot and self.memory.history is None:
            from gpuviz.engine.memory_history import snapshot_path_for

            path = snapshot_path_for(self.plan.trace, self.plan.rank)
            self.memory.start_history(torch, path, self.options.snapshot_entries, cuda)
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
            with self._own(), contextlib.suppress(Exception):
                prof.stop()

    def _on_trace_ready(self, prof: Any) -> None:
        results = prof.profiler.kineto_results
        if results is None:
            return
        path = self.plan.window_path(self._trace_window)
        if self.files.write(results, path, self._trace_window):
            self._windows_saved += 1
        else:
            self.warnings.append(self.files.errors[-1])

    # ---------------------------------------------------------------------------- forks
    def _disarm_in_child(self) -> None:
        """In a child forked by the script: leave the recording to the parent (see
        :mod:`~gpuviz.engine.script.forking`). Only references are dropped and Python state
        restored: the profiler's and the sampler's threads do not exist here."""
        self._child = True
        self._closing = True
        forking.keep(
            self._prof, self._provisional, self._provisional_range, *self.memory.detach(),
            self._timer, *self.sink.detach(),
        )  # fmt: skip
        self._prof = self._provisional = self._provisional_range = self._timer_thread = None
        self.sink = self.files.sink = EventSink()
        for undo in reversed(self._undo):
            with contextlib.suppress(Exception):
                undo()
        self._undo = []
        self._signals.release()

    # ---------------------------------------------------------------------------- memory
    def _start_sampler(self, device: Any) -> None:
        label = self.memory.start_sampler(self._torch, device, self.t0, self.sink.emit)
        if label is not None:
            self.device = label

    def _finish_history(self, error: BaseException | None = None) -> None:
        self.memory.finish_history(error)
        self.snapshot = self.memory.snapshot

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
        with contextlib.suppress(Exception):
            self.memory.stop_sampler()
        for undo in reversed(self._undo):
            with contextlib.suppress(Exception):
                undo()
        self._undo = []

    def _emit_steps(self, steps: list[TimedStep]) -> None:
        self.steps.extend(steps)
        if self.sink.streaming:
            label = self._step_label
            for s in steps:
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
        self._signals.release()
        if self._signals.held and self.exit_code == 0:
            self.exit_code = EXIT_CANCELLED


__all__ = ["EventSink", "ScriptSession", "StopRequested", "Terminated"]
