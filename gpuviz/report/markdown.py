"""The advice as Markdown: a report a user can paste into a bug or a pull request."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuviz.analysis.advisor.findings import finding_saving, fmt_ms, fmt_pct
from gpuviz.display import terminal_safe

if TYPE_CHECKING:
    from gpuviz.analysis.advisor import Advice

_SEVERITY_MARK = {"critical": "🔴", "warning": "🟠", "info": "🔵"}


def _code(text: str) -> str:
    """``text`` as inline code; backticks in a name cannot end the span early."""
    return "`" + terminal_safe(text, one_line=True).replace("`", "'") + "`"


def _plain(text: str) -> str:
    """Prose from the advisor, with control characters escaped (names in it are data)."""
    return terminal_safe(text)


def advice_markdown(advice: Advice, title: str = "") -> str:
    """A Markdown report: the trace, the mean step breakdown, every finding with its evidence.

    Parameters
    ----------
    advice : Advice
    title : str
        The report's heading (default: the trace's files).

    Returns
    -------
    str
    """
    sources = ", ".join(advice.sources)
    lines = [f"# gpuviz advice: {_plain(title or sources)}", "", f"Trace: {_code(sources)}", ""]
    if advice.warning_samples:  # as gpuviz advise prints them, under the trace
        lines += [f"- Import warning: {_code(w)}" for w in advice.warning_samples[:5]]
        lines.append("")
    st = advice.breakdown.steps
    if len(st):
        parts = advice.mean_step_parts()
        lines += [
            f"## Steps: {len(st)} ({', '.join(sorted(set(st.source)))}), mean {fmt_ms(parts['step'])}",
            "",
            "| per step (mean) | time | share |",
            "|---|---:|---:|",
        ]
        for key in ("compute", "comm", "copy", "set", "idle"):
            lines.append(
                f"| GPU {key} | {fmt_ms(parts[key])} | {fmt_pct(parts[key] / parts['step'])} |"
                if parts["step"]
                else f"| GPU {key} | {fmt_ms(parts[key])} | |"
            )
        for key in ("cpu ops", "cpu other"):
            label = "CPU in PyTorch ops" if key == "cpu ops" else "CPU outside ops"
            lines.append(f"| {label} | {fmt_ms(parts[key])} | |")
        lines.append("")
    lines += [f"## Findings ({len(advice.findings)})", ""]
    if not advice.findings:
        lines.append("None: nothing in this trace costs a noticeable share of the step time.")
    for i, f in enumerate(advice.findings, 1):
        lines += [
            f"### {i}. {_SEVERITY_MARK.get(f.severity, '')} {f.severity}: {_plain(f.title)} "
            f"({_code(f.kind)})",
            "",
            f"**Could save {finding_saving(f)}**. {_plain(f.saving_how)}",
            "",
            _plain(f.detail),
            "",
            f"**Fix:** {_plain(f.fix)}",
            "",
        ]
        if f.evidence:
            lines.append("Evidence:")
            for e in f.evidence:
                names = f": {', '.join(_code(n) for n in e.names[:3])}" if e.names else ""
                count = f" ({e.count}×)" if e.count and e.count > 1 else ""
                lines.append(
                    f"- {e.where}, {e.start_ns / 1e6:.3f}–{e.end_ns / 1e6:.3f} ms{count}{names}"
                )
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
