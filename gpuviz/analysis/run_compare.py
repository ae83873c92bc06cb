"""Two runs of one job side by side, and whether the second one regressed (``gpuviz check``).

:func:`compare_runs` puts together what ``gpuviz advise --against`` shows: the mean step and its
parts, the findings of each run, and the kernels, ops and modules whose total time changed most
(:func:`~gpuviz.analysis.diff.trace_diff`), plus each run's peak GPU memory from its
``[memory]`` events and its MFU (:func:`~gpuviz.analysis.hardware.hardware`, as
``gpuviz summary`` states it). :func:`regressions` holds that comparison against limits: the CI
gate of ``gpuviz check`` and the agents' ``compare`` tool read the same figures as the CLI and
the app.

Figures that a trace cannot give are omitted, never estimated: a run recorded without
``profile_memory`` has no peak, one without shapes (or on a device of unknown peaks) no MFU,
and one without Python stacks no module deltas.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuviz.analysis.advisor import SEVERITIES, Advice, Finding
from gpuviz.analysis.diff import WHAT, NameDiff, Totals, diff_of_totals, name_totals
from gpuviz.analysis.hardware import Hardware, MfuBrief, mfu_brief, mfu_unknown_reason
from gpuviz.analysis.memory import memory_series
from gpuviz.analysis.run_changes import RunChanges, StepCounts, changes_of, step_counts
from gpuviz.trace.model import Trace

FAIL_ON = ("critical", "warning")
"""The finding levels ``gpuviz check --fail-on`` accepts."""


def peak_allocated_bytes(trace: Trace) -> int | None:
    """The largest allocated-bytes peak of any GPU of the trace; None without ``[memory]`` events."""
    peaks = [m.peak_allocated_bytes for m in memory_series(trace, gpu_only=True)]
    return max(peaks) if peaks else None


@dataclass
class RunComparison:
    """A baseline run (A) and a new run (B) of the same job.

    Attributes
    ----------
    a, b : Advice
        What the advisor found in each (their breakdowns and findings).
    peak_a_bytes, peak_b_bytes : int or None
        Peak allocated GPU memory (the largest over devices); None where not recorded.
    diff : list of NameDiff
        Every kernel, op and (where both runs have Python stacks) module of either run,
        largest absolute time change (B - A) first.
    mfu_a, mfu_b : MfuBrief or None
        Each run's MFU over its steps; None where not known (``mfu_a_reason`` says why).
    mfu_a_reason, mfu_b_reason : str
        Why an MFU is not known ('' where it is).
    peaks_differ : str
        Where the runs' MFU was counted against different peaks (two kinds of GPU, or
        other ``--peak-tflops``), what they are: the MFUs are then not comparable and
        :attr:`mfu_change` is None; '' where the peaks are the same or unknown.
    changes : RunChanges or None
        What changed per step (:func:`~gpuviz.analysis.run_changes.run_changes`): the
        kernels, host syncs, copies and op calls, and the verdict.
    """

    a: Advice
    b: Advice
    peak_a_bytes: int | None
    peak_b_bytes: int | None
    diff: list[NameDiff] = field(default_factory=list)
    mfu_a: MfuBrief | None = None
    mfu_b: MfuBrief | None = None
    mfu_a_reason: str = ""
    mfu_b_reason: str = ""
    peaks_differ: str = ""
    changes: RunChanges | None = None

    def deltas(self, *what: str) -> list[NameDiff]:
        """The :attr:`diff` entries of these kinds (``kernel``, ``op``, ``op_device``,
        ``module``) whose time changed, largest absolute change first."""
        return [d for d in self.diff if d.what in what and d.delta_ns]

    @property
    def modules_compared(self) -> bool:
        """Whether both runs have Python stacks, so that their modules are compared."""
        return any(d.what == "module" for d in self.diff)

    @property
    def mfu_change(self) -> float | None:
        """B's mean MFU minus A's (in MFU's own units: 0.01 is one point); None unless both
        are known and counted against the same peaks (:attr:`peaks_differ`)."""
        if self.mfu_a is None or self.mfu_b is None or self.peaks_differ:
            return None
        return self.mfu_b.mean - self.mfu_a.mean

    @property
    def parts_a(self) -> dict[str, float]:
        """A's :meth:`~gpuviz.analysis.advisor.Advice.mean_step_parts` (ns)."""
        return self.a.mean_step_parts()

    @property
    def parts_b(self) -> dict[str, float]:
        """B's :meth:`~gpuviz.analysis.advisor.Advice.mean_step_parts` (ns)."""
        return self.b.mean_step_parts()

    @property
    def step_change(self) -> float | None:
        """B's mean step over A's, minus 1 (0.3 = 30% longer); None when A has no step time."""
        a, b = self.parts_a["step"], self.parts_b["step"]
        return b / a - 1.0 if a > 0 else None

    @property
    def memory_change(self) -> float | None:
        """B's peak over A's, minus 1; None unless both runs recorded memory."""
        if not self.peak_a_bytes or self.peak_b_bytes is None:
            return None
        return self.peak_b_bytes / self.peak_a_bytes - 1.0

    def new_findings(self, level: str = "info") -> list[Finding]:
        """B's findings at or above ``level`` whose kind A has not at that level, largest first.

        A kind that A had as ``info`` and B has as ``critical`` is new at ``critical``: it grew.
        """
        at = _at_or_above(level)
        seen = {f.kind for f in self.a.findings if f.severity in at}
        return [f for f in self.b.findings if f.severity in at and f.kind not in seen]

    def gone_findings(self) -> list[Finding]:
        """A's findings whose kind B does not have at all."""
        kinds = {f.kind for f in self.b.findings}
        return [f for f in self.a.findings if f.kind not in kinds]

    def to_json(self, top: int = 15) -> dict[str, Any]:
        """``{baseline, new, verdict, changes, step, parts, peak_memory, mfu, findings, diff,
        module_diff}`` (times in µs; ``verdict`` and ``changes``: :class:`RunChanges`; ``diff``: the ``top`` largest changes of any kind; ``module_diff``: the
        ``top`` modules, null unless both runs have Python stacks)."""
        pa, pb = self.parts_a, self.parts_b
        return {
            "baseline": list(self.a.sources),
            "new": list(self.b.sources),
            "verdict": self.changes.verdict() if self.changes is not None else None,
            "changes": self.changes.to_json(top) if self.changes is not None else None,
            "step": {
                "baseline_steps": len(self.a.breakdown.steps),
                "new_steps": len(self.b.breakdown.steps),
                "baseline_mean_us": pa["step"] / 1000.0,
                "new_mean_us": pb["step"] / 1000.0,
                "change": self.step_change,
            },
            "parts": {k: {"baseline_us": pa[k] / 1000.0, "new_us": pb[k] / 1000.0} for k in pa},
            "peak_memory": {
                "baseline_bytes": self.peak_a_bytes,
                "new_bytes": self.peak_b_bytes,
                "change": self.memory_change,
            },
            "mfu": {
                "baseline": self.mfu_a.to_json() if self.mfu_a is not None else None,
                "new": self.mfu_b.to_json() if self.mfu_b is not None else None,
                "change": self.mfu_change,
                "baseline_unknown": self.mfu_a_reason or None,
                "new_unknown": self.mfu_b_reason or None,
                "comparable": not self.peaks_differ,
                "not_comparable": self.peaks_differ or None,
            },
            "findings": {
                "new": [f.to_json() for f in self.new_findings()],
                "gone": [f.to_json() for f in self.gone_findings()],
                "baseline": [_brief(f) for f in self.a.findings],
                "current": [_brief(f) for f in self.b.findings],
            },
            "diff": [d.to_json() for d in self.diff[:top]],
            "module_diff": (
                [d.to_json() for d in self.deltas("module")[:top]]
                if self.modules_compared
                else None
            ),
        }


def _brief(f: Finding) -> dict[str, Any]:
    """A finding in brief: ``saving_us`` per step (as the advisor's), ``saving_total_us`` over
    the trace's steps."""
    return {
        "kind": f.kind,
        "severity": f.severity,
        "saving_us": f.saving_per_step_ns / 1000.0,
        "saving_total_us": f.saving_ns / 1000.0,
    }


def _at_or_above(level: str) -> set[str]:
    if level not in SEVERITIES:
        raise ValueError(f"level must be one of {SEVERITIES}, not {level!r}")
    return set(SEVERITIES[SEVERITIES.index(level) :])


def compare_runs(baseline: Advice, new: Advice) -> RunComparison:
    """Compare two advised runs (see the module docstring).

    Parameters
    ----------
    baseline, new : Advice
        :func:`~gpuviz.analysis.advisor.advise` of each trace (their contexts hold the traces).

    Returns
    -------
    RunComparison
    """
    return compare_inputs(run_inputs(baseline), run_inputs(new))


@dataclass
class RunInputs:
    """What :func:`compare_inputs` needs of one run: made from its whole trace
    (:func:`run_inputs`) or summed from its ranks' parts
    (:mod:`gpuviz.analysis.compare_parts`).

    Attributes
    ----------
    advice : Advice
    peak_bytes : int or None
        :func:`peak_allocated_bytes`.
    totals : Totals
        :func:`~gpuviz.analysis.diff.name_totals` of every kind.
    hardware : Hardware
        The advisor's hardware figures (its steps, peaks and FLOP warnings are read).
    calls_recorded : bool
        Whether any op call with shapes was recorded (:func:`mfu_unknown_reason`).
    counts : StepCounts
        :func:`~gpuviz.analysis.run_changes.step_counts` over the advice's steps.
    """

    advice: Advice
    peak_bytes: int | None
    totals: Totals
    hardware: Hardware
    calls_recorded: bool
    counts: StepCounts


def run_inputs(advice: Advice) -> RunInputs:
    """One run's :class:`RunInputs` from its whole trace (held by ``advice.context``)."""
    assert advice.context is not None
    trace = advice.context.trace
    # The advisor's own figures (low_mfu read them): hardware() over the same steps.
    hw: Hardware = advice.context.hardware
    return RunInputs(
        advice,
        peak_allocated_bytes(trace),
        {what: name_totals(trace, what) for what in WHAT},
        hw,
        bool(len(hw.calls.rows)),
        step_counts(trace, advice.breakdown.steps),
    )


def compare_inputs(a: RunInputs, b: RunInputs) -> RunComparison:
    """:func:`compare_runs` from each run's :class:`RunInputs`."""
    hw_a, hw_b = a.hardware, b.hardware
    mfu_a, mfu_b = mfu_brief(hw_a), mfu_brief(hw_b)
    return RunComparison(
        a=a.advice,
        b=b.advice,
        peak_a_bytes=a.peak_bytes,
        peak_b_bytes=b.peak_bytes,
        diff=diff_of_totals(a.totals, b.totals),
        mfu_a=mfu_a,
        mfu_b=mfu_b,
        mfu_a_reason="" if mfu_a is not None else mfu_unknown_reason(hw_a, a.calls_recorded),
        mfu_b_reason="" if mfu_b is not None else mfu_unknown_reason(hw_b, b.calls_recorded),
        peaks_differ=peaks_difference(hw_a, hw_b),
        changes=changes_of(a.counts, b.counts),
    )


def peaks_difference(a: Hardware, b: Hardware) -> str:
    """How the peaks two runs' MFU is counted against differ ('' where they are the same, or
    either is unknown): ``the peaks differ: NVIDIA A100 SXM4 80GB (bf16 312 TFLOP/s) vs
    NVIDIA H100 SXM5 80GB (bf16 989 TFLOP/s)``. An MFU is a share of its device's peak, so
    2% of an A100 and 6% of an H100 are not a change of 4 points."""
    pa, pb = a.peaks.peaks, b.peaks.peaks
    if pa is None or pb is None or pa == pb:
        return ""

    def said(p: Any) -> str:
        figures = [
            f"{name} {value:g}"
            for name in ("bf16", "fp16", "tf32", "fp32")
            if (value := getattr(p, f"{name}_tflops", None))
        ]
        return f"{p.label} ({', '.join(figures[:2])} TFLOP/s)" if figures else p.label

    return f"the peaks differ: {said(pa)} vs {said(pb)}"


@dataclass(frozen=True)
class Limits:
    """What ``gpuviz check`` lets pass.

    Attributes
    ----------
    max_step_regression : float
        The mean step may grow by this share (0.05: 5%).
    max_memory_regression : float
        The peak allocated memory may grow by this share.
    fail_on : str
        New findings at this level or above fail (one of :data:`FAIL_ON`).
    """

    max_step_regression: float = 0.05
    max_memory_regression: float = 0.10
    fail_on: str = "critical"

    def to_json(self) -> dict[str, Any]:
        """The limits as ``gpuviz check --json`` reports them."""
        return {
            "max_step_regression": self.max_step_regression,
            "max_memory_regression": self.max_memory_regression,
            "fail_on": self.fail_on,
        }


@dataclass(frozen=True)
class Regression:
    """One way the new run is worse than the limits allow.

    Attributes
    ----------
    what : str
        ``step_time``, ``peak_memory`` or ``finding``.
    change : float or None
        The growth (0.3: 30%) for step time and memory; None for a finding.
    limit : float or None
        The allowed growth; None for a finding.
    kind : str or None
        The finding's kind, for a finding.
    """

    what: str
    change: float | None = None
    limit: float | None = None
    kind: str | None = None

    def to_json(self) -> dict[str, Any]:
        """``{what, change?, limit?, kind?}``."""
        out: dict[str, Any] = {"what": self.what}
        for key in ("change", "limit", "kind"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


def regressions(cmp: RunComparison, limits: Limits) -> list[Regression]:
    """Where the new run exceeds ``limits``: step time, then memory, then new findings."""
    out = []
    step = cmp.step_change
    if step is not None and step > limits.max_step_regression:
        out.append(Regression("step_time", step, limits.max_step_regression))
    mem = cmp.memory_change
    if mem is not None and mem > limits.max_memory_regression:
        out.append(Regression("peak_memory", mem, limits.max_memory_regression))
    out += [Regression("finding", kind=f.kind) for f in cmp.new_findings(limits.fail_on)]
    return out


__all__ = [
    "FAIL_ON",
    "Limits",
    "Regression",
    "RunComparison",
    "RunInputs",
    "compare_inputs",
    "compare_runs",
    "peak_allocated_bytes",
    "peaks_difference",
    "regressions",
    "run_inputs",
]
