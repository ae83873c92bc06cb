"""The advisor: a trace's step breakdown and its findings, ranked by what fixing them saves.

``advise(trace)`` runs every rule (one module per finding kind, each a ``check(ctx)`` function
over an :class:`~gpuviz.analysis.advisor.context.AdviceContext`) and returns an
:class:`Advice`: the step breakdown and the findings, largest saving first. ``docs/advisor.md``
gives each rule's condition, thresholds, reasons and saving estimate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from gpuviz.analysis.advisor.context import AdviceContext
from gpuviz.analysis.advisor.findings import KINDS, SEVERITIES, Evidence, Finding
from gpuviz.analysis.steps import PARTS, StepBreakdown
from gpuviz.trace.model import Trace

__all__ = ["KINDS", "SEVERITIES", "Advice", "AdviceContext", "Evidence", "Finding", "advise"]


@dataclass
class Advice:
    """What the advisor found in one trace.

    Attributes
    ----------
    sources : list of str
        The trace's files.
    breakdown : StepBreakdown
        Steps, and where their time went.
    findings : list of Finding
        Largest saving first.
    errors : dict of str to str
        Rule kind -> message, for a rule that failed on this trace (the others still ran).
    context : AdviceContext
        The shared figures, for views that want more (the rank analysis, the idle gaps).
    warning_samples : list of str
        The trace's import warnings (``Trace.warnings.samples``): what the reader of the
        advice must know of its input, such as two files that claimed one rank.
    """

    sources: list[str]
    breakdown: StepBreakdown
    findings: list[Finding]
    errors: dict[str, str] = field(default_factory=dict)
    context: AdviceContext | None = None
    warning_samples: list[str] = field(default_factory=list)

    def mean_step_parts(self) -> dict[str, float]:
        """Mean per step (ns) of the step length, each GPU part (per GPU), and the CPU split.

        Keys: ``step``, ``compute``, ``comm``, ``copy``, ``set``, ``idle``, ``cpu ops``,
        ``cpu other``. GPU parts are averaged over the GPUs of each step.
        """
        b = self.breakdown
        d, n = b.devices, max(len(b.steps), 1)
        gpus = max(len(d) / n, 1.0)
        out = {"step": float(b.steps.duration_ns.sum()) / n}
        for p in PARTS:
            out[p] = float(getattr(d, f"{p}_ns").sum()) / n / gpus
        out["cpu ops"] = float(b.cpu_op_ns.sum()) / n
        out["cpu other"] = float(b.cpu_other_ns.sum()) / n
        return out

    def finding(self, kind: str) -> Finding | None:
        """The finding of one kind, or None."""
        return next((f for f in self.findings if f.kind == kind), None)

    def to_json(self) -> dict[str, Any]:
        """``{"sources": [...], "steps": [...], "findings": [...]}`` (``gpuviz advise --json``).

        ``"errors"`` (rule kind -> message) and ``"import_warnings"`` (list of str) are added
        when there are any.
        """
        out: dict[str, Any] = {
            "sources": list(self.sources),
            "steps": self.breakdown.to_json(),
            "findings": [f.to_json() for f in self.findings],
        }
        if self.errors:
            out["errors"] = dict(self.errors)
        if self.warning_samples:
            out["import_warnings"] = list(self.warning_samples)
        return out


def rules() -> dict[str, Callable[[AdviceContext], list[Finding]]]:
    """Kind -> its rule's ``check`` function, in :data:`KINDS` order."""
    return {kind: import_module(f"gpuviz.analysis.advisor.{kind}").check for kind in KINDS}


def sorted_findings(findings: list[Finding]) -> list[Finding]:
    """``findings`` in the advisor's order: largest saving a step first (what every text
    states), then over the trace, then severity, then kind."""
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(
        findings, key=lambda f: (-f.saving_per_step_ns, -f.saving_ns, -order[f.severity], f.kind)
    )


def advise(trace: Trace, kinds: list[str] | None = None) -> Advice:
    """Run the rules over ``trace``.

    Parameters
    ----------
    trace : Trace
    kinds : list of str, optional
        Run only these rules (default: all of :data:`KINDS`).

    Returns
    -------
    Advice
        A rule that raises is recorded in ``errors``; the others still report.
    """
    ctx = AdviceContext(trace)
    findings: list[Finding] = []
    errors: dict[str, str] = {}
    for kind, check in rules().items():
        if kinds is not None and kind not in kinds:
            continue
        try:
            findings.extend(check(ctx))
        except Exception as exc:  # one broken rule must not hide the others' findings
            errors[kind] = f"{type(exc).__name__}: {exc}"
    try:
        from gpuviz.analysis.advisor.where import with_code

        findings = with_code(trace, findings)
    except Exception as exc:  # the findings stand without their code locations
        errors["where"] = f"{type(exc).__name__}: {exc}"
    findings = sorted_findings(findings)
    if kinds is None or {"host_sync", "launch_bound"} <= set(kinds):
        from gpuviz.analysis.advisor.host_sync import cause_before_symptom

        try:  # the syncs' launch-bound symptom after the syncs themselves
            findings = cause_before_symptom(ctx, findings)
        except Exception as exc:  # the findings stand in their order of saving
            errors["host_sync"] = f"{type(exc).__name__}: {exc}"
    samples = list(getattr(trace.warnings, "samples", []) or [])
    return Advice(trace.sources, ctx.breakdown, findings, errors, ctx, samples)
