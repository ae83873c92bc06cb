"""``gpuviz check NEW --against BASELINE``: the CI gate, comparing two runs of the same job.

Exit 0 when NEW is within the limits; 1 with a short report when its mean step grew by more
than ``--max-step-regression`` (default 5%), its peak GPU memory by more than
``--max-memory-regression`` (10%, when both runs recorded memory), or it has a finding at or
above ``--fail-on`` (critical) that the baseline has not; 2 for bad input. ``--json`` prints
the same as one object: the comparison (:class:`~gpuviz.analysis.run_compare.RunComparison`:
step time, peak memory, MFU, findings, kernel, op and module deltas), the limits, ``passed``
and ``regressions``.

:func:`format_comparison_brief` is also what ``gpuviz mcp``'s ``compare`` tool answers.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from gpuviz.display import echo, json_text, terminal_safe
from gpuviz.errors import BadInputError

if TYPE_CHECKING:
    from gpuviz.analysis.advisor import Advice, Finding
    from gpuviz.analysis.diff import NameDiff
    from gpuviz.analysis.run_compare import Limits, Regression, RunComparison

DELTA_ROWS = 8


def percent(text: str) -> float:
    """An argparse type: ``5%`` or ``5`` -> 0.05 (a share; never negative)."""
    raw = text.strip().removesuffix("%").strip()
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a percentage, e.g. 5%") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a percentage of 0 or more")
    return value / 100.0


def main(args: argparse.Namespace) -> int:
    """Compare ``args.new`` with ``args.against``; 0 within the limits, else 1."""
    from gpuviz.analysis.run_compare import Limits, compare_runs, regressions

    baseline = _advise(args.against, "--against")
    new = _advise(args.new, "NEW")
    limits = Limits(args.max_step_regression, args.max_memory_regression, args.fail_on)
    cmp = compare_runs(baseline, new)
    regs = regressions(cmp, limits)
    if args.json:
        out = cmp.to_json()
        out["limits"] = limits.to_json()
        out["passed"] = not regs
        out["regressions"] = [r.to_json() for r in regs]
        echo(json_text(out))
    else:
        echo(format_comparison_brief(cmp, limits, regs))
    return 1 if regs else 0


def _advise(path: str, what: str) -> Advice:
    from gpuviz.analysis.advisor import advise
    from gpuviz.commands.reading import read_trace

    if not Path(path).exists():
        raise BadInputError(f"{path}: no such file or folder ({what})")
    # Its report lists no import warnings: what a memory limit left out is said on stderr.
    advice = advise(read_trace(path, say_dropped=True))
    if len(advice.breakdown.steps) == 0:
        raise BadInputError(f"{path}: no steps: the trace has no events with a duration")
    return advice


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
    """The comparison as a short text, key numbers first: step time, peak memory, MFU,
    the findings, then the kernel and op deltas and the module deltas.

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
    lines += [f"new:      {new}", f"baseline: {base}", ""]

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
    if a is not None and b is not None:
        change = cmp.mfu_change or 0.0
        return (
            f"MFU (mean over steps): {100 * a.mean:.1f}% -> {100 * b.mean:.1f}% "
            f"({100 * change:+.1f} points)"
        )
    sides = [
        f"{100 * x.mean:.1f}%" if x is not None else f"not known ({why})"
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
