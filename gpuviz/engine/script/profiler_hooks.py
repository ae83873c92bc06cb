"""Where every torch profiler starts and stops, as a ``gpuviz profile`` session sees it.

A part of :class:`~gpuviz.engine.script.session.ScriptSession`, kept apart because it is its
own concern; the session owns the state it uses. ``torch.profiler`` cannot run twice: when the
script starts its own, gpuviz stops its profiler (writing the window it was recording), says
so, and records no more; steps are still timed. Every stop (gpuviz's windows, its no-step
recording, the script's own profilers) completes CUPTI's teardown
(:func:`gpuviz.engine.cupti.teardown_completed`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gpuviz.engine.cupti import teardown_completed
from gpuviz.engine.script.report import say
from gpuviz.engine.script.target import caller_outside_torch

if TYPE_CHECKING:
    from gpuviz.engine.script.schedule import Schedule


class ProfilerHooksMixin:
    """The profiler start and stop hooks of a script session (mixed into ``ScriptSession``)."""

    if TYPE_CHECKING:  # what the session provides
        schedule: Schedule
        step: int
        warnings: list[str]
        partial_window: str | None
        _torch: Any
        _prof: Any
        _provisional: Any
        _own_depth: int
        _closing: bool
        _foreign_seen: bool
        _trace_window: int
        _undo: list[Callable[[], None]]

        @property
        def traces(self) -> list[str]: ...
        def _drop_profiler(self) -> None: ...
        def _end_provisional(self, keep: bool, why: str) -> None: ...

    def _patch_profiler_start(self) -> None:
        # Every torch profiler (torch.profiler.profile, the autograd profiler, Lightning's,
        # the HF Trainer's) prepares its Kineto session here.
        cls = self._torch.autograd.profiler.profile
        session = self
        original = cls.__dict__.get("_prepare_trace")
        if original is not None:

            def _prepare_trace(prof: Any, *args: Any, **kwargs: Any) -> Any:
                if session._own_depth == 0 and not session._closing:
                    session._on_foreign_profiler()
                return original(prof, *args, **kwargs)

            cls._prepare_trace = _prepare_trace
            self._undo.append(lambda: setattr(cls, "_prepare_trace", original))
        original_exit = cls.__dict__.get("__exit__")
        if original_exit is not None:
            # Every trace stops here: gpuviz's windows and its no-step recording (through
            # torch.profiler's stop_trace) and the script's own profilers. Under gpuviz a stop
            # asks for CUPTI's teardown, which may wait for a CUDA call that never comes, so
            # each one is completed; a stop that starts the next window runs under
            # teardown_skipped() (TEARDOWN_CUPTI=0), where this does nothing.
            def __exit__(prof: Any, *args: Any) -> Any:
                with teardown_completed():
                    return original_exit(prof, *args)

            cls.__exit__ = __exit__
            self._undo.append(lambda: setattr(cls, "__exit__", original_exit))

    def _on_foreign_profiler(self) -> None:
        if self._foreign_seen:
            return
        self._foreign_seen = True
        where = caller_outside_torch()
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


__all__ = ["ProfilerHooksMixin"]
