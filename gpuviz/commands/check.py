"""``gpuviz check NEW --against BASELINE``: the CI gate, comparing two runs of the same job.

Exit 0 when NEW is within the limits; 1 with a short report when its mean step grew by more
than ``--max-step-regression`` (default 5%), its peak GPU memory by more than
``--max-memory-regression`` (10%, when both runs recorded memory), or it has a finding at or
above ``--fail-on`` (critical) that the baseline has not; 2 for bad input (a folder whose
files are not one job among it); 3 when gpuviz itself failed ("internal error: ..." on
stderr, the traceback with ``--debug`` or ``GPUVIZ_DEBUG=1``), so that a CI gate never reads a
crash as a regression. Each run's import warnings are listed under its name (``--json``:
``import_warnings``, present when there are any). ``--json`` prints
the same as one object: the comparison (:class:`~gpuviz.analysis.run_compare.RunComparison`:
step time, peak memory, MFU, findings, kernel, op and module deltas), the limits, ``passed``
and ``regressions``.

:func:`format_comparison_brief` is also what ``gpuviz mcp``'s ``compare`` tool answers.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from gpuviz.display import echo, json_text, terminal_safe, warning_lines
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


EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
"""``gpuviz check``'s exit codes (DESIGN.md, Round 4): a CI gate must never read a crash as a
regression, so gpuviz's own failure has a code of its own."""
DEBUG_ENV = "GPUVIZ_DEBUG"
"""``1``: an internal failure prints its traceback (as ``--debug`` does)."""


def main(args: argparse.Namespace) -> int:
    """Compare ``args.new`` with ``args.against``: 0 within the limits, 1 a regression, 2 bad
    input (raised as :class:`~gpuviz.errors.BadInputError`), 3 an internal failure."""
    try:
        return _check(args)
    except (BadInputError, KeyboardInterrupt, BrokenPipeError):
        raise  # 2, 130 and a closed pipe: the CLI's own handling
    except OSError as exc:
        if exc.filename is None:
            return _internal(args, exc)
        # An input that cannot be read (no permission, a folder that vanished): bad input.
        raise BadInputError(f"{exc.filename}: {exc.strerror or exc}") from None
    except Exception as exc:  # gpuviz itself failed: its own code, never 1
        return _internal(args, exc)


def _internal(args: argparse.Namespace, exc: BaseException) -> int:
    """Say that gpuviz failed (one line; the traceback with ``--debug``); EXIT_INTERNAL."""
    import os
    import sys

    from gpuviz.display import echo_traceback

    debug = getattr(args, "debug", False) or os.environ.get(DEBUG_ENV, "0") not in ("", "0")
    if debug:
        echo_traceback()
    what = terminal_safe(f"{type(exc).__name__}: {exc}", one_line=True)
    hint = "" if debug else f" (--debug or {DEBUG_ENV}=1 prints the traceback)"
    echo(
        f"gpuviz check: internal error: {what}; exit {EXIT_INTERNAL}, not a regression{hint}",
        file=sys.stderr,
    )
    return EXIT_INTERNAL


def _check(args: argparse.Namespace) -> int:
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
        warned = {"baseline": baseline.warning_samples, "new": new.warning_samples}
        if any(warned.values()):
            out["import_warnings"] = {k: list(v) for k, v in warned.items()}
        echo(json_text(out))
    else:
        echo(format_comparison_brief(cmp, limits, regs))
    return EXIT_REGRESSION if regs else EXIT_OK


def _advise(path: str, what: str) -> Advice:
    from gpuviz.analysis.advisor import advise
    from gpuviz.commands.reading import read_trace

    if not Path(path).exists():
        raise BadInputError(f"{path}: no such file or folder ({what})")
    # What a memory limit left out is said on stderr as well, for --json's readers.
    advice = advise(read_trace(path, say_dropped=True))
    if len(advice.breakdown.steps) == 0:
        raise BadInputError(f"{path}: no steps: the trace has no events with a duration")
    return advice


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms"


def _pct(share: float) -> str:
    return f"{100 * share:+.1f}%"


def _finding_line(f: Finding) -> list[str]:
    from gpuviz.analysis.advisor.findings import fmt_ms, fmt_pct

    return [
        f"  [{f.severity}] {f.kind}: {terminal_safe(f.title, one_line=True)}; could save "
        f"{fmt_ms(f.saving_ns)} ({fmt_pct(f.share)} of the step time)",
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
                f"{fa.kind} {fa.severity} {fmt_ms(fa.saving_ns)} -> {fb.severity} "
                f"{fmt_ms(fb.saving_ns)}"
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
            f"MFU (mean over steps): {100 * a.mean:.1f}% -> {100 * b.mean:.1f}%: not "
            f"comparable, {cmp.peaks_differ}",
            one_line=True,
        )
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
