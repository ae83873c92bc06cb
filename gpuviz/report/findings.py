"""Findings as text: a finding's headline, numbers, fix, saving and evidence, as ``gpuviz
advise`` prints them and the agents' findings answer quotes them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuviz.display import terminal_safe

if TYPE_CHECKING:
    from gpuviz.analysis.advisor import Finding

TOP = 3
"""Names of each kind (ops, modules, lines) that :func:`code_names` gives."""


def _safe(text: str, one_line: bool = False) -> str:
    return terminal_safe(text, one_line=one_line)


def _short(name: str, width: int = 100) -> str:
    name = _safe(name, one_line=True)
    return name if len(name) <= width else name[: width - 1] + "…"


def format_finding(n: int, f: Finding, evidence: int = 5) -> list[str]:
    """One finding as text: headline, numbers, fix, saving, evidence.

    Parameters
    ----------
    n : int
        Its number in the list (``1.``, ``2.``, ...).
    f : Finding
        The finding (:func:`~gpuviz.analysis.advisor.advise`).
    evidence : int
        The most evidence lines shown; a last line counts the rest.

    Returns
    -------
    list of str
        The lines, indented under the headline, names and prose escaped
        (:func:`~gpuviz.display.terminal_safe`).
    """
    from gpuviz.analysis.advisor.findings import saving_phrase

    lines = [
        f"{n}. [{f.severity}] {f.kind}: {_safe(f.title, one_line=True)}",
        f"   could save {saving_phrase(f.saving_ns, f.share, f.step_ns)}",
        f"   {_safe(f.detail)}",
        f"   Fix: {_safe(f.fix)}",
        f"   Saving: {_safe(f.saving_how)}",
    ]
    if f.evidence:
        lines.append("   Evidence:")
    for e in f.evidence[:evidence]:
        what = ""
        if e.names:
            what = ": " + "; ".join(_short(x, 80) for x in e.names[:3])
        count = f" ({e.count}×)" if e.count and e.count > 1 else ""
        lines.append(
            f"   - {e.where} at {e.start_ns / 1e6:.3f}–{e.end_ns / 1e6:.3f} ms{count}{what}"
        )
    if len(f.evidence) > evidence:
        lines.append(f"   - … {len(f.evidence) - evidence} more")
    for label, key in (("Ops", "ops"), ("Modules", "modules"), ("Lines", "lines")):
        found = code_names(f, key)
        if found:
            lines.append(f"   {label}: " + "; ".join(_short(x, 80) for x in found))
    return lines


def code_names(f: Finding, key: str) -> list[str]:
    """The top :data:`TOP` names of one kind over a finding's evidence, most telling evidence
    first.

    Parameters
    ----------
    f : Finding
        The finding.
    key : str
        ``"ops"``, ``"modules"`` or ``"lines"``: the evidence's field to read.

    Returns
    -------
    list of str
        At most :data:`TOP` names, each once, as the trace spells them (not escaped).
    """
    out: list[str] = []
    for e in f.evidence:
        for name in getattr(e, key) or ():
            if name not in out:
                out.append(name)
    return out[:TOP]
