"""The text of two runs compared (:class:`~gpuviz.analysis.run_compare.RunComparison`): what
``gpuviz check`` prints and the agents' ``compare`` tool answers (the commands and the agents
never import each other: the text lives here)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuviz.display import terminal_safe, warning_lines
from gpuviz.report.shares import pct

if TYPE_CHECKING:
    from gpuviz.analysis.advisor import Finding
    from gpuviz.analysis.diff import NameDiff
    from gpuviz.analysis.run_compare import Limits, Regression, RunComparison

DELTA_ROWS = 8


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms"


def _pct(share: float) -> str:
    return f"{100 * share:+.1f}%"


def _finding_line(f: Finding) -> list[str]:
    from gpuviz.analysis.advisor.findings import finding_saving

    return [
        f"  [{f.severity}] {f.kind}: {terminal_safe(f.title, one_line=True)}; could save "
        f"{finding_saving(f)}",
        f"    fix: {terminal_safe(f.fix, one_line=True)}",
    ]


def format_comparison_brief(
    cmp: RunComparison,
    limits: Limits | None = None,
    regs: list[Regression] | None = None,
    rows: int = DELTA_ROWS,
    labels: tuple[str, str] | None = None,
) -> str:
    """The comparison as a short text: the verdict and what changed per step (host syncs,
    copies, kernels, op calls), then step time, peak memory, MFU, the findings, then the
    kernel and op deltas and the module deltas.

    With ``limits`` (``gpuviz check``) it opens with the verdict and marks each figure ok or
    over its limit, and lists only the new findings at or above ``limits.fail_on``; without,
    it lists every new and gone finding. ``labels`` name the baseline and the new run
    (default: their files).
    """
    from gpuviz.analysis.advisor.findings import fmt_bytes

    lines = []
    base, new = labels or (", ".join(cmp.a.sources), ", ".join(cmp.b.sources))
    base, new = terminal_safe(base, one_line=True), terminal_safe(new, one_line=True)
    failed = {r.what for r in regs or []}
    if limits is not None:
        n = len(regs or [])
        verdict = f"FAILED: {n} regression{'s' if n != 1 else ''}" if n else "passed"
        lines.append(f"gpuviz check {verdict}")
    lines += [f"new:      {new}", *warning_lines(cmp.b.warning_samples)]
    lines += [f"baseline: {base}", *warning_lines(cmp.a.warning_samples), ""]
    if cmp.changes is not None:  # what changed, cause first: before the figures and limits
        from gpuviz.report.changes import format_changes

        lines += [*format_changes(cmp.changes), ""]

    pa, pb = cmp.parts_a, cmp.parts_b
    step = cmp.step_change
    line = f"mean step: {_ms(pa['step'])} -> {_ms(pb['step'])}"
    line += f" ({_pct(step)})" if step is not None else ""
    line += f"; steps: {len(cmp.a.breakdown.steps)} -> {len(cmp.b.breakdown.steps)}"
    if limits is not None:
        mark = "REGRESSION" if "step_time" in failed else "ok"
        line += f"  limit +{100 * limits.max_step_regression:g}%: {mark}"
    lines.append(line)

    mem = cmp.memory_change
    if mem is None and cmp.peak_a_bytes == 0 and cmp.peak_b_bytes is not None:
        lines.append("peak GPU memory: not compared (the baseline allocated nothing)")
    elif mem is None:
        lines.append(
            "peak GPU memory: not compared (recorded in "
            + _which(cmp.peak_a_bytes is not None, cmp.peak_b_bytes is not None)
            + "; record with gpuviz profile --memory)"
        )
    else:
        line = (
            f"peak GPU memory: {fmt_bytes(cmp.peak_a_bytes or 0)} -> "
            f"{fmt_bytes(cmp.peak_b_bytes or 0)} ({_pct(mem)})"
        )
        if limits is not None:
            mark = "REGRESSION" if "peak_memory" in failed else "ok"
            line += f"  limit +{100 * limits.max_memory_regression:g}%: {mark}"
        lines.append(line)

    lines.append(_mfu_line(cmp))

    parts = [
        f"{k} {pa[k] / 1e6:.3f}->{pb[k] / 1e6:.3f}"
        for k in ("compute", "comm", "copy", "set", "idle", "cpu ops", "cpu other")
        if pa[k] or pb[k]
    ]
    lines.append("mean step parts (ms; GPU parts per GPU): " + ", ".join(parts))

    level = limits.fail_on if limits is not None else "info"
    fresh = cmp.new_findings(level)
    lines.append("")
    head = f"new findings at {level} or above" if limits is not None else "new findings"
    lines.append(f"{head}: {len(fresh) or 'none'}")
    for f in fresh:
        lines += _finding_line(f)
    gone = cmp.gone_findings()
    if gone:
        lines.append("gone findings: " + ", ".join(f"{f.kind} ({f.severity})" for f in gone))
    kept = [(fa, fb) for fa in cmp.a.findings for fb in cmp.b.findings if fa.kind == fb.kind]
    if kept:
        from gpuviz.analysis.advisor.findings import fmt_ms

        lines.append(
            "in both: "
            + ", ".join(
                f"{fa.kind} {fa.severity} {fmt_ms(fa.saving_per_step_ns)}/step -> {fb.severity} "
                f"{fmt_ms(fb.saving_per_step_ns)}/step"
                for fa, fb in kept
            )
        )

    moved = cmp.deltas("kernel", "op", "op_device")[:rows]
    if moved:
        lines += [
            "",
            f"kernels and ops whose total time changed most (top {len(moved)}; op: host time, "
            "op_device: device time the op launched):",
        ]
        lines += [_delta_line(d) for d in moved]
    modules = cmp.deltas("module")[:rows]
    if modules:
        lines += [
            "",
            "modules whose device time changed most (the time their own code launched; work "
            f"outside any module by its op; top {len(modules)}):",
        ]
        lines += [_delta_line(d) for d in modules]
    elif not cmp.modules_compared:
        lines += ["", "modules: not compared (" + _stacks(cmp) + ")"]
    return "\n".join(lines)


def _delta_line(d: NameDiff) -> str:
    name = terminal_safe(d.name, one_line=True)
    name = name if len(name) <= 90 else name[:89] + "…"
    return (
        f"  {d.delta_ns / 1e6:+9.3f} ms  {d.what:<6} {d.status:<4} "
        f"{d.count_a}->{d.count_b} calls  {name}"
    )


def _mfu_line(cmp: RunComparison) -> str:
    """``MFU (mean over steps): 13.2% -> 9.8% (-3.4 points)``, or why it is not known."""
    a, b = cmp.mfu_a, cmp.mfu_b
    if a is not None and b is not None and cmp.peaks_differ:
        return terminal_safe(
            f"MFU (mean over steps): {pct(a.mean)} -> {pct(b.mean)}: not "
            f"comparable, {cmp.peaks_differ}",
            one_line=True,
        )
    if a is not None and b is not None:
        change = cmp.mfu_change or 0.0
        return f"MFU (mean over steps): {pct(a.mean)} -> {pct(b.mean)} ({100 * change:+.1f} points)"
    sides = [
        pct(x.mean) if x is not None else f"not known ({why})"
        for x, why in ((a, cmp.mfu_a_reason), (b, cmp.mfu_b_reason))
    ]
    if a is None and b is None and cmp.mfu_a_reason == cmp.mfu_b_reason:
        return f"MFU: not known ({terminal_safe(cmp.mfu_a_reason, one_line=True)})"
    return terminal_safe(f"MFU: baseline {sides[0]}, new {sides[1]}", one_line=True)


def _stacks(cmp: RunComparison) -> str:
    """Which run lacks Python stacks, when the modules were not compared."""
    from gpuviz.analysis.attribution import attribute

    has = [
        x.context is not None and attribute(x.context.trace).has_stacks() for x in (cmp.a, cmp.b)
    ]
    if all(has):
        return "no module launched device time in either run"
    which = "either run" if not any(has) else ("the baseline" if not has[0] else "the new run")
    return f"no Python stacks in {which}: record with gpuviz profile, or with_stack=True"


def _which(a: bool, b: bool) -> str:
    if a and not b:
        return "the baseline only"
    if b and not a:
        return "the new run only"
    return "neither run"


__all__ = ["DELTA_ROWS", "format_comparison_brief"]
