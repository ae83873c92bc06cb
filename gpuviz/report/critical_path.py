"""The critical path and what-if predictions as text and JSON (``gpuviz critical-path``,
``gpuviz whatif``; the JSON is :func:`gpuviz.analysis.critical_path.path_json`'s).

:func:`step_graph` (re-exported from :mod:`gpuviz.analysis.dep_graph`) builds a step's graph.
"""

from __future__ import annotations

from typing import Any

from gpuviz.analysis.critical_path import critical_path, path_json, rank_json, replay
from gpuviz.analysis.dep_graph import StepGraph, step_graph
from gpuviz.analysis.whatif import Change, Prediction, predict
from gpuviz.report.tables import text_table
from gpuviz.trace.model import Trace


def path_report(trace: Trace, g: StepGraph, top: int = 10) -> dict[str, Any]:
    """The critical path of ``g`` as recorded, as JSON."""
    rp = replay(g)
    return path_json(trace, g, rp, critical_path(g, rp), top)


__all__ = ["format_path", "format_whatif", "path_report", "step_graph", "whatif_report"]


def _ms(us: float) -> str:
    return f"{us / 1000.0:.3f}"


def _rank(rank: int | None) -> str:
    return "-" if rank is None else str(rank)


def _pct(share: float) -> str:
    return f"{100.0 * share:.1f}%"


def format_path(j: dict[str, Any], title: str = "critical path") -> list[str]:
    """The lines of one critical path (:func:`path_report`'s JSON)."""
    ranks = ", ".join(_rank(r) for r in j["ranks"])
    lines = [
        f"{title} of step {j['step']} (rank {ranks}): {_ms(j['span_us'])} ms "
        f"of a {_ms(j['step_us'])} ms step"
    ]
    lines += text_table(
        ("category", "ms", "share"),
        [(c, _ms(v["us"]), _pct(v["share"])) for c, v in j["by_category"].items()],
        left=(0,),
    )
    if len(j["ranks"]) > 1:
        on = ", ".join(
            f"rank {_rank(r['rank'])} {_ms(r['us'])} ms ({_pct(r['share'])})"
            for r in j["ranks_on_path"]
        )
        lines.append(f"ranks on it: {on}")
    for key, what in (("kernels", "kernels, copies and sets"), ("ops", "top-level ops (CPU)")):
        if j[key]:
            lines.append(f"{what} on it:")
            lines += text_table(
                ("ms", "share", "calls", "rank", "name"),
                [
                    (_ms(r["us"]), _pct(r["share"]), r["calls"], _rank(r["rank"]), r["name"])
                    for r in j[key]
                ],
                left=(4,),
            )
    for note in j.get("notes", []):
        lines.append(f"note: {note}")
    return lines


def whatif_report(
    trace: Trace, g: StepGraph, changes: list[Change], top: int = 10
) -> tuple[dict[str, Any], Prediction]:
    """The prediction of ``changes`` on ``g`` as JSON::

        {"step", "changes": [{"change", "matched_nodes", "matched_us"}],
         "measured_step_us", "predicted_step_us", "saving_us",
         "ranks": [{"rank", "measured_us", "predicted_us"}],
         "critical_path_before": path JSON, "critical_path_after": path JSON}

    A rank's step is its window; the step's time is its longest rank's.
    """
    p = predict(trace, g, changes)
    before = path_report(trace, g, top)
    measured = int(p.measured_ns.max()) if len(p.measured_ns) else 0
    predicted = int(p.predicted_ns.max()) if len(p.predicted_ns) else 0
    after = path_json(trace, g, p.replay, p.path, top, step_ns=predicted)
    out = {
        "step": int(g.number),
        "changes": [
            {"change": c.label(), "matched_nodes": m, "matched_us": round(ns / 1000.0, 3)}
            for c, m, ns in zip(changes, p.matched, p.matched_ns, strict=True)
        ],
        "measured_step_us": round(measured / 1000.0, 3),
        "predicted_step_us": round(predicted / 1000.0, 3),
        "saving_us": round((measured - predicted) / 1000.0, 3),
        "ranks": [
            {
                "rank": rank_json(int(r)),
                "measured_us": round(m / 1000.0, 3),
                "predicted_us": round(q / 1000.0, 3),
            }
            for r, m, q in zip(
                g.ranks.tolist(), p.measured_ns.tolist(), p.predicted_ns.tolist(), strict=True
            )
        ],
        "critical_path_before": before,
        "critical_path_after": after,
    }
    return out, p


def format_whatif(j: dict[str, Any]) -> list[str]:
    """The lines of a what-if (:func:`whatif_report`'s JSON)."""
    lines = [f"what if, step {j['step']}:"]
    for c in j["changes"]:
        lines.append(
            f"  {c['change']}: {c['matched_nodes']} piece{'s' if c['matched_nodes'] != 1 else ''} "
            f"of work, {_ms(c['matched_us'])} ms"
        )
    m, q = j["measured_step_us"], j["predicted_step_us"]
    share = (m - q) / m if m else 0.0
    lines.append(
        f"step: {_ms(m)} ms recorded, {_ms(q)} ms predicted by replay "
        f"(saves {_ms(m - q)} ms, {_pct(share)})"
    )
    if len(j["ranks"]) > 1:
        for r in j["ranks"]:
            lines.append(
                f"  rank {_rank(r['rank'])}: {_ms(r['measured_us'])} -> {_ms(r['predicted_us'])} ms"
            )
    lines += format_path(j["critical_path_after"], "new critical path")
    return lines
