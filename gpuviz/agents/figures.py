"""The figures behind the agents' answers, as data (:mod:`gpuviz.agents.schemas`).

Each function here builds one tool's ``structuredContent`` from the same analyses its text
is written from, most of it through the analyses' own ``to_json`` (what the CLI's ``--json``
prints), so that the text and the data cannot disagree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuviz.agents.answers import mfu_json, name

if TYPE_CHECKING:
    from gpuviz.analysis.advisor import Advice
    from gpuviz.analysis.breakdown_table import Breakdown
    from gpuviz.analysis.hardware import Hardware
    from gpuviz.analysis.summary import Summary
    from gpuviz.trace.model import Trace

NAME = 1000
"""Characters of a name from a file that the figures keep."""


def finding_brief_json(f: Any) -> dict[str, Any]:
    """A finding without its evidence (:class:`~gpuviz.agents.schemas.FindingBrief`)."""
    out = f.to_json()
    out.pop("evidence", None)
    out.pop("detail", None)
    return out


def _named(
    table: Breakdown | None, trace: Trace | None, kinds: tuple[str, ...] | None
) -> list[Any]:
    from gpuviz.agents.breakdown_answer import device_total_ns, top_self

    if table is None or trace is None:
        return []
    total = device_total_ns(trace, table)
    return [
        {
            "name": ("* " if r.kind == "outside" else "") + name(r.key, NAME),
            "device_self_us": r.device_self_ns / 1000.0,
            "share": r.device_self_ns / total if total > 0 else None,
        }
        for r in top_self(table, 10, kinds)
    ]


def trace_overview_json(
    advice: Advice,
    summary: Summary,
    hw: Hardware | None,
    ops: Breakdown | None,
    modules: Breakdown | None,
    modules_missing: str | None,
) -> dict[str, Any]:
    """``overview``'s figures of a trace (:class:`~gpuviz.agents.schemas.TraceOverview`)."""
    ctx = advice.context
    trace = ctx.trace if ctx is not None else None
    gpus = []
    for d in summary.devices:
        props = ctx.device_properties(-1 if d.rank is None else d.rank, d.device) if ctx else {}
        model = props.get("name")
        gpus.append(
            {
                "rank": d.rank,
                "device": d.device,
                "model": name(str(model), 200) if model else None,
                "busy_share": float(d.utilization),
            }
        )
    steps = advice.breakdown.steps
    parts = advice.mean_step_parts() if len(steps) else {}
    mfu, why = mfu_json(hw) if summary.has_gpu_events else (None, "no GPU events in the trace")
    return {
        "ranks": [r for r in summary.ranks if r is not None],
        "gpus": gpus,
        "span_us": summary.span_ns / 1000.0,
        "events": summary.events,
        "steps": len(steps),
        "step_sources": sorted(set(steps.source)) if len(steps) else [],
        "mean_step_us": parts["step"] / 1000.0 if parts else None,
        "mean_step_parts_us": {k: v / 1000.0 for k, v in parts.items() if k != "step"},
        "mfu": mfu,
        "mfu_unknown": why,
        "top_ops": _named(ops, trace, ("op",)),
        "top_modules": _named(modules, trace, None),
        "modules_unknown": modules_missing,
        "top_kernels": [
            {"name": name(k.name, NAME), "total_us": k.total_ns / 1000.0, "count": k.count}
            for k in summary.top_kernels
        ],
        "findings": [finding_brief_json(f) for f in advice.findings],
        "rule_errors": {k: name(v, NAME) for k, v in advice.errors.items()},
        "serving": serving_brief_json(advice),
    }


def serving_brief_json(advice: Advice) -> dict[str, Any] | None:
    """A serving trace's phases, TTFT and TPOT (the ``serving`` object of ``gpuviz summary
    --json`` without its step rows), or None for a training trace."""
    ctx = advice.context
    report = ctx.serving if ctx is not None else None
    if report is None:
        return None
    out = report.to_json()
    out.pop("steps", None)
    return dict(out)
