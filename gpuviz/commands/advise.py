"""``gpuviz advise TRACE [--against TRACE2] [--json]``: why a trace is slow, and what to fix.

Prints the step breakdown and the findings, largest saving first, each with its numbers, fix,
estimated saving and evidence; ``--json`` prints ``{"sources", "steps", "findings"}``.
``--against B`` compares: both breakdowns and both findings side by side, then the kernels and
ops whose total time changed most, after a verdict on what changed per step (the GPU work
kernel for kernel, host syncs, copies, op calls: :mod:`gpuviz.analysis.run_changes`; ``--json``:
``{"a": {...}, "b": {...}, "verdict", "changes", "diff": [...]}``).

With ``--cluster``, a rank folder is advised a rank a task on the cluster's workers where the
by-rank passes apply (:mod:`gpuviz.commands.advise_ranks`; the same output, plus
``incomplete`` where a rank file failed and was skipped), else read whole as before.

:func:`print_top_findings` is what ``gpuviz run`` and ``gpuviz profile`` call at the end.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from gpuviz.display import echo, json_text, warning_lines
from gpuviz.errors import BadInputError
from gpuviz.report.findings import format_finding
from gpuviz.report.tables import text_table

if TYPE_CHECKING:
    from gpuviz.analysis.advisor import Advice
    from gpuviz.analysis.diff import NameDiff
    from gpuviz.analysis.run_changes import RunChanges

TOP = 3
DIFF_ROWS = 15


def main(args: argparse.Namespace) -> int:
    """Load the trace(s), advise, print text or JSON."""
    from gpuviz.commands.advise_ranks import advise_by_rank_on_cluster

    by_rank = advise_by_rank_on_cluster(Path(args.trace), args)  # --cluster (None: whole)
    if by_rank is not None:
        advice, incomplete = by_rank
        if args.json:
            out = advice.to_json()
            echo(json_text({**out, "incomplete": incomplete} if incomplete else out))
        else:
            echo(format_advice(advice, incomplete))
        return 0
    advice = _advise_path(
        args.trace,
        args.json,
        getattr(args, "capture_trace", None),
        getattr(args, "compile_info", None),
    )
    if args.against:
        from gpuviz.analysis.diff import trace_diff
        from gpuviz.analysis.run_changes import run_changes

        other = _advise_path(args.against, args.json)
        diff = trace_diff(_trace_of(advice), _trace_of(other))
        changes = run_changes(
            _trace_of(advice), advice.breakdown.steps, _trace_of(other), other.breakdown.steps
        )
        if args.json:
            echo(
                json_text(
                    {
                        "a": advice.to_json(),
                        "b": other.to_json(),
                        "verdict": changes.verdict(),
                        "changes": changes.to_json(),
                        "diff": [d.to_json() for d in diff],
                    }
                )
            )
        else:
            echo(format_comparison(advice, other, diff, changes))
        return 0
    if args.json:
        echo(json_text(advice.to_json()))
    else:
        echo(format_advice(advice))
    return 0


def _advise_path(
    path: str,
    json_out: bool = False,
    capture_trace: str | None = None,
    compile_info: str | None = None,
) -> Advice:
    from gpuviz.analysis.advisor import advise
    from gpuviz.commands.reading import read_trace

    if not Path(path).exists():
        raise BadInputError(f"{path}: no such file or folder")
    # With its graph captures, so that evidence in graph replays names the captured code.
    trace = read_trace(
        path,
        say_dropped=json_out,
        captures=True,
        capture_trace=capture_trace,
        compile_info=compile_info,
    )
    return advise(trace)


def _trace_of(advice: Advice) -> Any:
    assert advice.context is not None
    return advice.context.trace


def _safe(text: str, one_line: bool = False) -> str:
    from gpuviz.display import terminal_safe

    return terminal_safe(text, one_line=one_line)


def _short(name: str, width: int = 100) -> str:
    name = _safe(name, one_line=True)
    return name if len(name) <= width else name[: width - 1] + "…"


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3f}"


# -- text -------------------------------------------------------------------------------------
def format_breakdown(advice: Advice, max_rows: int = 24) -> list[str]:
    """The step breakdown as table lines: one row per step and GPU (times in ms)."""
    from gpuviz.analysis.activity import rank_value

    b = advice.breakdown
    st, d = b.steps, b.devices
    if len(st) == 0:
        return ["No steps: the trace has no events with a duration."]
    sources = sorted(set(st.source))
    lines = [
        f"Steps: {len(st)} from {', '.join(sources)}, {_ms(float(st.duration_ns.sum()))} ms in all "
        "(times in ms; GPU parts are exclusive and add up to the step)"
    ]
    head = [
        "rank",
        "step",
        "length",
        "cpu ops",
        "cpu other",
        "gpu",
        "compute",
        "comm",
        "copy",
        "set",
        "idle",
    ]
    rows: list[list[str]] = []
    by_step: dict[int, list[int]] = {}
    for j in range(len(d)):
        by_step.setdefault(int(d.step[j]), []).append(j)
    for i in range(len(st)):
        rank = rank_value(int(st.rank[i]))
        base = [
            "-" if rank is None else str(rank),
            st.label(i),
            _ms(float(st.duration_ns[i])),
            _ms(float(b.cpu_op_ns[i])),
            _ms(float(b.cpu_other_ns[i])),
        ]
        devs = by_step.get(i, [])
        if not devs:
            rows.append([*base, "-", "", "", "", "", ""])
        for j in devs:
            rows.append(
                [
                    *base,
                    str(int(d.device[j])),
                    *(
                        _ms(float(getattr(d, f"{p}_ns")[j]))
                        for p in ("compute", "comm", "copy", "set", "idle")
                    ),
                ]
            )
    shown = rows[:max_rows]
    lines += text_table(head, shown, left=(1,))
    if len(rows) > max_rows:
        lines.append(f"  … {len(rows) - max_rows} more rows (--json has them all)")
    return lines


def format_advice(advice: Advice, incomplete: dict[str, Any] | None = None) -> str:
    """The whole text report: sources (the rank files left out under them: ``incomplete``,
    ``--cluster``), step breakdown, findings."""
    lines = [f"trace: {_safe(', '.join(advice.sources))}"]
    lines += warning_lines(advice.warning_samples)
    if incomplete is not None:
        from gpuviz.commands.cluster_ranks import incomplete_line

        lines.append(incomplete_line(incomplete))
    lines.append("")
    lines += format_breakdown(advice)
    lines.append("")
    if advice.findings:
        lines.append("Findings, largest saving first:")
        for i, f in enumerate(advice.findings, 1):
            lines += format_finding(i, f)
            lines.append("")
    else:
        lines.append(
            "No findings: nothing in this trace costs a noticeable share of the step time."
        )
    for kind, msg in advice.errors.items():
        lines.append(f"rule {kind} failed on this trace: {_safe(msg, one_line=True)}")
    return "\n".join(lines).rstrip()


def format_comparison(
    a: Advice, b: Advice, diff: list[NameDiff], changes: RunChanges | None = None
) -> str:
    """A and B side by side: the verdict and what changed per step (``changes``), mean step
    parts, findings, then the kernel and op diff."""
    from gpuviz.analysis.advisor.findings import fmt_ms

    lines = [f"A: {_safe(', '.join(a.sources))}", *warning_lines(a.warning_samples)]
    lines += [f"B: {_safe(', '.join(b.sources))}", *warning_lines(b.warning_samples), ""]
    if changes is not None:
        from gpuviz.report.changes import format_changes

        lines += [*format_changes(changes, ("A", "B")), ""]
    ma, mb = a.mean_step_parts(), b.mean_step_parts()
    lines.append("Mean per step (ms; GPU parts are per GPU)")
    rows = []
    for k in ma:
        delta = mb[k] - ma[k]
        ratio = f"{mb[k] / ma[k]:.2f}x" if ma[k] else "-"
        rows.append([k, _ms(ma[k]), _ms(mb[k]), f"{delta / 1e6:+.3f}", ratio])
    lines += text_table(["", "A", "B", "B-A", "B/A"], rows, left=(0,))
    lines += ["", "Findings (severity, saving per step)"]
    fa = {f.kind: f for f in a.findings}
    fb = {f.kind: f for f in b.findings}
    rows = []
    for kind in [f.kind for f in a.findings] + [k for k in fb if k not in fa]:
        cell = [
            (f"{x.severity} {fmt_ms(x.saving_per_step_ns)}/step" if (x := side.get(kind)) else "-")
            for side in (fa, fb)
        ]
        rows.append([kind, *cell])
    lines += text_table(["kind", "A", "B"], rows, left=(0, 1, 2)) if rows else ["  none in either"]
    lines += [
        "",
        f"Kernels, ops and modules whose time changed most (top {DIFF_ROWS}; ms; op: host "
        "time, op_device and module: device time launched there)",
    ]
    rows = [
        [
            d.what,
            d.status,
            str(d.count_a),
            str(d.count_b),
            _ms(d.total_a_ns),
            _ms(d.total_b_ns),
            f"{d.delta_ns / 1e6:+.3f}",
            _short(d.name, 70),
        ]
        for d in diff[:DIFF_ROWS]
    ]
    lines += text_table(
        ["what", "status", "count A", "count B", "total A", "total B", "B-A", "name"],
        rows,
        left=(0, 1, 7),
    )
    return "\n".join(lines)


# -- for gpuviz run / gpuviz profile ---------------------------------------------------------------
def print_top_findings(path: str | Path, n: int = TOP, file: IO[str] | None = None) -> int:
    """Advise on the trace at ``path`` and print its ``n`` top findings, briefly.

    Never raises: a trace that cannot be advised on prints one line saying why. Returns how
    many findings were printed.
    """
    out = file if file is not None else sys.stdout
    from gpuviz.analysis.advisor.findings import saving_phrase

    try:
        advice = _advise_path(str(path))
    except Exception as exc:  # the run itself succeeded: say why there is no advice, go on
        echo(f"advice: none ({type(exc).__name__}: {_safe(str(exc), one_line=True)})", file=out)
        return 0
    if not advice.findings:
        gpu = advice.context is not None and len(advice.context.activity) > 0
        echo(
            "advice: no findings (gpuviz advise TRACE for the step breakdown)"
            if gpu
            else "advice: no GPU work in this trace, nothing to advise on",
            file=out,
        )
        return 0
    echo(
        f"advice: top {min(n, len(advice.findings))} of {len(advice.findings)} findings "
        f"(gpuviz advise {_safe(str(path), one_line=True)} for all, with evidence):",
        file=out,
    )
    for i, f in enumerate(advice.findings[:n], 1):
        echo(
            f"  {i}. [{f.severity}] {f.kind}: {_safe(f.title, one_line=True)}; could save "
            f"{saving_phrase(f.saving_ns, f.share, f.step_ns)}",
            file=out,
        )
        echo(f"     fix: {_safe(f.fix, one_line=True)}", file=out)
    return min(n, len(advice.findings))
