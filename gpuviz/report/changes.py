"""The text of what changed between two runs per step (:mod:`gpuviz.analysis.run_changes`):
the verdict, then the host syncs, copies, kernels and op calls a step that changed. What
``gpuviz check``, ``gpuviz advise --against`` and the agents' ``compare`` print first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuviz.display import terminal_safe

if TYPE_CHECKING:
    from gpuviz.analysis.run_changes import PerStep, RunChanges

ROWS = 6
"""Names listed per kind of change; the rest are counted."""


def _n(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if x != int(x) else f"{int(x)}"


def _bytes(x: float | None) -> str:
    from gpuviz.analysis.advisor.findings import fmt_bytes

    return fmt_bytes(round(x or 0))


def _name(text: str, width: int = 80) -> str:
    text = terminal_safe(text, one_line=True)
    return text if len(text) <= width else text[: width - 1] + "…"


def _listed(rows: list[PerStep], with_bytes: bool = False) -> str:
    cells = []
    for r in rows[:ROWS]:
        cell = f"{_name(r.name)} {_n(r.a)} -> {_n(r.b)}"
        if with_bytes:
            cell += f" ({_bytes(r.bytes_a)} -> {_bytes(r.bytes_b)})"
        cells.append(cell)
    more = f"; and {len(rows) - ROWS} more" if len(rows) > ROWS else ""
    return "; ".join(cells) + more


def format_changes(changes: RunChanges, labels: tuple[str, str] = ("baseline", "new")) -> list[str]:
    """``verdict: …`` and, per step (``labels``: baseline -> new), the host syncs, the copies,
    the kernels and the op calls that changed (a kind with no change says so in a word)."""
    a, b = changes.a, changes.b
    lines = [f"verdict: {terminal_safe(changes.verdict(), one_line=True)}"]
    lines.append(f"per step ({labels[0]} -> {labels[1]}; {a.steps} and {b.steps} steps):")
    syncs = [s for s in changes.syncs if s.a or s.b]
    head = f"  host syncs: {_n(a.sync_count)} -> {_n(b.sync_count)}"
    lines.append(head + (f" ({_listed(syncs)})" if syncs else ""))
    reads = [r for r in changes.reads if r.a or r.b]
    if reads:
        lines.append(
            f"  values read to Python without a GPU sync: {_n(a.read_count)} -> "
            f"{_n(b.read_count)} ({_listed(reads)})"
        )
    copies = [c for c in changes.copies if c.a or c.b]
    if copies:
        lines.append("  copies: " + _listed(copies, with_bytes=True))
    else:
        lines.append("  copies: none in either run")
    if changes.kernels:
        lines.append("  kernels called more or less often: " + _listed(changes.kernels))
    elif a.kernel_calls or b.kernel_calls:
        lines.append(f"  kernels: the same names, as often ({_n(a.kernel_calls)} a step)")
    else:
        lines.append("  kernels: none in either run")
    if changes.ops:
        lines.append("  ops called more or less often: " + _listed(changes.ops))
    else:
        lines.append("  op calls: the same")
    return lines


__all__ = ["format_changes"]
