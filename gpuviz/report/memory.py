"""Allocator sites as text: bytes, blocks, ``file:line  function`` and a folded stack, as
``gpuviz memory`` and the agents' memory answer print them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuviz.analysis.allocator import SiteRow
    from gpuviz.trace.allocator_columns import AllocatorSnapshot

STACK_LINES = 6
"""The most lines a folded stack takes (the last says how many more were left out)."""


def fold_stack(
    frames: list[tuple[str, int, str]], site_frame: tuple[str, int, str] | None
) -> list[str]:
    """A stack as a few lines, innermost first: library frames before the site are folded,
    repeats elided, and the user's own frames kept."""
    from gpuviz.analysis.allocator import is_user_frame
    from gpuviz.display import terminal_safe

    out: list[str] = []
    start = frames.index(site_frame) if site_frame in frames else 0
    if start:
        out.append(f"… {start} frame{'s' if start > 1 else ''} in torch, C++ or the library")
    folded = 0
    for fn, line, name in frames[start:]:
        if not is_user_frame(fn) and out:
            folded += 1
            continue
        if folded:
            out.append(f"… {folded} library frame{'s' if folded > 1 else ''}")
            folded = 0
        text = terminal_safe(f"{fn}:{line} {name}", one_line=True)
        if out and out[-1] == text:
            continue
        out.append(text)
    if folded:
        out.append(f"… {folded} library frame{'s' if folded > 1 else ''}")
    if len(out) > STACK_LINES:
        out = [*out[: STACK_LINES - 1], f"… {len(out) - STACK_LINES + 1} more"]
    return out


def site_lines(snap: AllocatorSnapshot, rows: list[SiteRow], stacks: bool) -> list[str]:
    """Sites as report lines: bytes, blocks, ``file:line  function``, and folded stacks.

    Parameters
    ----------
    snap : AllocatorSnapshot
        The snapshot the sites are of (its frames and stacks).
    rows : list of SiteRow
        The sites, in the order to print.
    stacks : bool
        Also each site's stack, folded by :func:`fold_stack`, under its line.

    Returns
    -------
    list of str
        The lines, names escaped (:func:`~gpuviz.display.terminal_safe`).
    """
    from gpuviz.display import format_bytes, terminal_safe

    lines = []
    for r in rows:
        where = terminal_safe(f"{r.site}  {r.function}", one_line=True)
        lines.append(
            f"  {format_bytes(r.bytes):>11}  {r.blocks:>6} block{'s' if r.blocks != 1 else ' '}  {where}"
        )
        if stacks and r.stack >= 0:
            site = snap.frame_info(r.frame) if r.frame >= 0 else None
            for s in fold_stack(snap.stack_frames(r.stack), site):
                lines.append(f"{'':>30}{s}")
    return lines
