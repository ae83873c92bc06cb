"""The recording a ``gpuviz profile`` session makes when no step has come (yet).

A part of :class:`~gpuviz.engine.script.session.ScriptSession`, kept apart because it is its
own concern; the session owns the state it uses. Without ``--step-fn``, the profiler runs from
the script's start in case no step ever comes; the script's first optimizer (or step) ends
that recording, which is dropped. If neither has come after ``--duration`` seconds (with CUDA,
counted from the script's first CUDA call), those seconds are written as one range named
:data:`NO_STEP_RANGE`, and the run says so and suggests ``--step-fn``. With ``--step-fn``, the
same recording runs until the function is found. The timer's thread wakes the main thread
through :class:`~gpuviz.engine.script.signals.SessionSignals`.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import TYPE_CHECKING, Any

from gpuviz.engine.script.report import say
from gpuviz.engine.script.signals import StopRequested

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from gpuviz.engine.script.options import OutPlan, ProfileOptions, RankInfo
    from gpuviz.engine.script.signals import SessionSignals
    from gpuviz.engine.script.writing import TraceFiles

NO_STEP_RANGE = "gpuviz/no-step range"
SETUP_GRACE_S = 60.0
"""On a CUDA machine, the most the no-step countdown waits for the script's first CUDA call."""
_POLL_S = 0.25
"""The ``record_function`` around a recording that found no step."""


class NoStepRecordingMixin:
    """The no-step recording of a script session (mixed into ``ScriptSession``)."""

    if TYPE_CHECKING:  # what the session provides
        options: ProfileOptions
        plan: OutPlan
        rank: RankInfo | None
        files: TraceFiles
        warnings: list[str]
        no_step_range: str | None
        no_step_reason: str
        t0: float
        _torch: Any
        _provisional: Any
        _provisional_range: Any
        _closing: bool
        _step_fn: tuple[str, str] | None
        _step_fn_problem: str
        _timer_thread: threading.Timer | None
        _countdown_from: float | None
        _signals: SessionSignals

        def _own(self) -> AbstractContextManager[None]: ...
        def _activities(self, cuda: bool) -> list[Any]: ...

    def _on_optimizer_created(self) -> None:
        if self._provisional is not None and not self._closing and self._step_fn is None:
            self._end_provisional(keep=False, why="the script made an optimizer")

    def _on_step_fn_resolved(self) -> None:
        if self._provisional is not None and not self._closing:
            self._end_provisional(keep=False, why="--step-fn was found")

    def _on_step_fn_problem(self, text: str) -> None:
        """``--step-fn`` was found but marks no step: said with the --duration range, or now
        when that range is over."""
        self._step_fn_problem = text
        if self._provisional is None:
            say(f"--step-fn {self.options.step_fn}: {text}; no step will be marked")

    def _start_provisional(self) -> None:
        torch = self._torch
        under_launcher = self.rank is not None and self.rank.world_size > 1
        # GPUVIZ_PROFILE_PROVISIONAL=cpu (an experiment switch, benchmarks/bench_profile.py):
        # CPU activity only, to tell what CUPTI attached before the first step leaves behind.
        cpu_only = os.environ.get("GPUVIZ_PROFILE_PROVISIONAL") == "cpu"
        cuda = bool(torch.cuda.is_available()) and not under_launcher and not cpu_only
        with self._own():
            prof = torch.profiler.profile(
                activities=self._activities(cuda),
                record_shapes=self.options.record_shapes,
                profile_memory=self.options.memory,
                # Stacks here only on --stack: the Python tracer would slow the script's
                # imports and model building, and this range is only a fallback.
                with_stack=self.options.stack_no_step,
            )
            prof.start()
        self._provisional = prof
        self._provisional_range = torch.profiler.record_function(NO_STEP_RANGE)
        self._provisional_range.__enter__()
        if under_launcher:
            self.no_step_reason = (
                "CPU activity only: under a launcher it began before the script picked its GPU"
            )
        # On an H100 host examples/hf_trainer.py took over 10 s to reach its first CUDA call:
        # counted from the start, the range held only its set-up (and --stop ended it there).
        self._countdown_from = None if cuda else self.t0
        self._arm_timer(self.options.duration_s if not cuda else _POLL_S)

    def _arm_timer(self, delay: float) -> None:
        timer = threading.Timer(delay, self._wake_main)
        timer.daemon = True
        timer.start()
        self._timer_thread = timer

    def _wake_main(self) -> None:
        """Timer thread: start the countdown at the first CUDA call, then end the recording."""
        if self._provisional is None or self._closing:
            return
        if self._countdown_from is None:
            now = time.perf_counter()
            if self._torch.cuda.is_initialized() or now - self.t0 >= SETUP_GRACE_S:
                self._countdown_from = now
                self._arm_timer(self.options.duration_s)
            else:
                self._arm_timer(_POLL_S)
            return
        self._signals.wake_main()

    def _on_wake(self) -> None:
        if self._provisional is None or self._closing:
            return
        with self._signals.deferred():
            self._end_provisional(keep=True, why="")
        if self.options.stop:
            raise StopRequested()

    def _end_provisional(self, keep: bool, why: str) -> None:
        """Stop the no-step recording; write it (``keep``) or drop it; ``why`` is for readers."""
        del why
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
        note = f" ({self.no_step_reason})" if self.no_step_reason else ""
        start = self.t0 if self._countdown_from is None else self._countdown_from
        seconds = min(time.perf_counter() - start, self.options.duration_s)
        if start > self.t0 + 0.5:  # the countdown waited for the script's first CUDA call
            note += f" (counted from the first CUDA call, {start - self.t0:.1f} s in)"
        if not self.files.write(prof.profiler.kineto_results, self.plan.window_path(0), 0, t):
            self.warnings.append(self.files.errors[-1])
            return
        self.no_step_range = "written"
        if self._step_fn is not None:
            say(
                f"--step-fn {self.options.step_fn}: {self._step_fn_unresolved()}, so no step was "
                f"marked: the first {seconds:.1f} s were recorded as one range instead "
                f"(--duration){note}"
            )
            return
        say(
            f"no step was seen in the first {seconds:.1f} s (no optimizer.step(), no "
            f"gpuviz.step()): they were recorded as one range{note}. Mark the steps with "
            "--step-fn MODULE:FUNCTION (e.g. --step-fn __main__:generate)"
        )

    def _step_fn_unresolved(self) -> str:
        """Why ``--step-fn`` marked no step, in words."""
        assert self._step_fn is not None
        module, qualname = self._step_fn
        if self._step_fn_problem:
            return self._step_fn_problem
        if module == "__main__":
            return f"the def of {qualname} never ran"
        return f"the script did not import {module}"


__all__ = ["NO_STEP_RANGE", "SETUP_GRACE_S", "NoStepRecordingMixin"]
