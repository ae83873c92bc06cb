"""The protocol a workload body follows. Read this before writing a workload.

A *workload* has two halves:

1. A torch-free **declaration**, :class:`gpuviz.workloads.registry.WorkloadSpec`: name, title,
   help, typed parameters (:class:`gpuviz.workloads.params.Param`), flags (``multi_gpu``,
   ``multi_process``) and ``entry``, the ``"module:function"`` of its body. A built-in workload
   module (``gpuviz/workloads/loops.py``) defines it at module level as ``WORKLOAD``; the
   registry finds it there. Importing the module must not import torch.
2. A **body**: ``def build(ctx: RunContext) -> Plan``. It runs in the engine, may import torch
   (inside the function), and returns a :class:`Plan` of :class:`Strategy` objects. It should
   allocate nothing big itself: put allocations in each strategy's ``setup``.

How the Runner drives a plan (``gpuviz.engine.runner``)::

    for s in plan.strategies:            # in order
        if s.needs_cuda and no CUDA:     -> skipped, reason "needs CUDA" (never silent)
        elif s.skip_reason:              -> skipped with that reason
        s.setup()                        (untimed)
        s.step() x plan.warmup_steps     (untimed, before the profiler starts)
           an ``attempt`` strategy whose warm-up raises is reported as *failed* with
           s.failure_reason and the exception, and the run goes on without it
    profiler on (CPU + CUDA, shapes, memory):
        each runnable strategy: s.step() x profile_steps   -> StepTimed(profiled=True) -> trace
    profiler off:
        each runnable strategy: s.step() x --steps         -> StepTimed(profiled=False)
    s.teardown() for each strategy that was set up (also after a failure or a cancel)
    plan.teardown()

Each step is timed with ``perf_counter`` between two device synchronizations (``wall_ms``) and,
on CUDA, between two CUDA events recorded on the current stream (``gpu_ms``). A strategy that
uses its own streams must make them join the current stream before ``step`` returns (or
synchronize), so that the CUDA events enclose its work. Only unprofiled steps feed the reported
figures: the profiler distorts what it records.

``step`` returns the strategy's result or None. When ``plan.check`` is given, the Runner calls
it once per strategy with the result of its last warm-up step; it returns None when the result
is right, or a message; a wrong result fails the run (every strategy must give the loop's
result).

Per-strategy figures in the result (``gpuviz run --json``'s ``strategies``): the Runner adds
median/min wall and GPU times, the speedup over ``plan.baseline``, and, from the profiled step's
trace, kernel launches, GPU busy time and the share of GPU time idle between launches, and
stream overlap. A strategy adds its own with ``figures`` (fixed, e.g. ``{"streams": 4}``), with
``work`` (bytes or items a step handles: the Runner turns it into ``gb_per_s`` or
``items_per_s`` from the median time), or at run time with ``ctx.report(strategy, key, value)``.
``plan.summarize(result)`` may add whole-run figures to the result (it gets the result dict and
returns a dict merged into it).

DataParallel-like bodies report each replica's share of a step with
``ctx.split(replica, device, rows, gpu_ms)``, which the Runner turns into
:class:`gpuviz.engine.events.SplitRecorded` for the step in progress.

User workloads (``FILE.py:FUNC``) and plugin functions are wrapped into a one-strategy plan by
:func:`function_plan`: ``func(device, **params)`` is one step.

Multi-process workloads (``multi_process=True``, e.g. ``ddp``) are not driven by this loop in
one process: the Runner hands them to ``gpuviz.engine.multiprocess.run_multiprocess`` (see the
Runner's docstring), which starts one child per rank. Each rank's body still returns a Plan.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Strategy:
    """One way of doing the workload's job: the unit that steps are timed for.

    Parameters
    ----------
    name : str
        Short identifier; it is ``StepTimed.label`` (``for_loop``, ``vectorized``).
    step : callable
        One timed execution, ``step() -> result | None``.
    title : str
        A readable name for tables and the app.
    needs_cuda : bool
        Skipped with reason "needs CUDA" when the run's device is not CUDA.
    setup, teardown : callable, optional
        Run once before the warm-ups / once at the end (also after a failure). Untimed.
    skip_reason : str, optional
        When set, the strategy is reported as skipped with this reason and never runs.
    attempt : bool
        The strategy is an attempt that may fail by design (the tutorial's
        ``nn.DataParallel(function)``). If its warm-up raises, it is reported as
        ``status: "failed"`` with the exception and ``failure_reason``, and the run goes on.
    failure_reason : str
        Why an ``attempt`` fails, in words, shown next to the exception.
    work : float, optional
        What one step handles, in ``work_unit``: the Runner reports a rate from it.
    work_unit : {"bytes", "items", "flop"}
        ``bytes`` gives ``gb_per_s`` (1e9 bytes/s), ``items`` gives ``items_per_s``, ``flop``
        gives ``tflop_per_s``. Rates use the median GPU time where there is one, else wall.
    figures : dict
        Fixed figures merged into this strategy's entry in the result.
    repeatable : bool
        ``step`` keeps no count of its calls, so the Runner may call it once more, untimed,
        right before the timed steps (see ``REWARM_MAX_S`` in :mod:`gpuviz.engine.inprocess`).
        Leave it False for a step whose calls are numbered (epochs, a fault at call N).
    """

    name: str
    step: Callable[[], Any]
    title: str = ""
    needs_cuda: bool = False
    setup: Callable[[], None] | None = None
    teardown: Callable[[], None] | None = None
    skip_reason: str | None = None
    attempt: bool = False
    failure_reason: str = ""
    work: float | None = None
    work_unit: str = "items"
    figures: dict[str, Any] = field(default_factory=dict)
    repeatable: bool = False


@dataclass
class Plan:
    """What a body returns: the strategies to run and how to read them.

    Parameters
    ----------
    strategies : list of Strategy
        Run in this order.
    baseline : str, optional
        The strategy that speedups are relative to (``speedup = baseline median / median``).
    check : callable, optional
        ``check(strategy_name, result) -> None | str``: verifies a strategy's result.
    warmup_steps : int
        Untimed steps per strategy before the profiler starts.
    profile_steps : int
        Profiled steps per strategy (their trace is the run's trace).
    setup, teardown : callable, optional
        Whole-plan hooks around everything.
    summarize : callable, optional
        ``summarize(result) -> dict`` merged into the result at the end.
    figures : dict
        Fixed whole-run figures merged into the result (``{"n": 2000}``).
    """

    strategies: list[Strategy]
    baseline: str | None = None
    check: Callable[[str, Any], str | None] | None = None
    warmup_steps: int = 1
    profile_steps: int = 1
    setup: Callable[[], None] | None = None
    teardown: Callable[[], None] | None = None
    summarize: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    figures: dict[str, Any] = field(default_factory=dict)


class RunContext:
    """What a body gets: the device(s), the parameter values, and hooks to report.

    Attributes
    ----------
    device : torch.device
        The run's device (``cpu``, ``cuda:N``).
    devices : list of torch.device
        Every device of the run (the GPU set of a multi-GPU workload; ``[device]`` otherwise).
    params : dict
        The checked parameter values, defaults filled in.
    steps : int
        Timed steps per strategy (``--steps``).
    is_cuda : bool
        ``device.type == "cuda"``.
    rank, world_size : int
        For multi-process workloads (0 and 1 otherwise).
    """

    def __init__(
        self,
        device: Any,
        devices: list[Any],
        params: dict[str, Any],
        steps: int,
        *,
        rank: int = 0,
        world_size: int = 1,
        on_report: Callable[[str, str, Any], None] | None = None,
        on_split: Callable[[int, str, int, float | None], None] | None = None,
    ) -> None:
        self.device = device
        self.devices = devices
        self.params = params
        self.steps = steps
        self.rank = rank
        self.world_size = world_size
        self._on_report = on_report
        self._on_split = on_split

    @property
    def is_cuda(self) -> bool:
        """Whether the run's device is a CUDA device."""
        return getattr(self.device, "type", str(self.device)) == "cuda"

    def report(self, strategy: str, key: str, value: Any) -> None:
        """Add a figure (a JSON value) to ``strategy``'s entry in the result."""
        if self._on_report is not None:
            self._on_report(strategy, key, value)

    def split(self, replica: int, device: str, rows: int, gpu_ms: float | None = None) -> None:
        """Report one DataParallel replica's rows (and GPU time) for the step in progress."""
        if self._on_split is not None:
            self._on_split(replica, device, rows, gpu_ms)


def function_plan(func: Callable[..., Any], ctx: RunContext, label: str) -> Plan:
    """The one-strategy plan of a user or plugin function: ``func(device, **params)`` a step."""
    params = dict(ctx.params)
    device = ctx.device
    return Plan(strategies=[Strategy(name=label, step=lambda: func(device, **params), title=label)])


__all__ = ["Plan", "RunContext", "Strategy", "function_plan"]
