"""A serving trace's phases as text (``gpuviz summary``, the agents' answers): one row per
phase, then time to first token and time per output token. Unknown figures read
``unknown (why)``, never 0 (docs/serving.md)."""

from __future__ import annotations

from typing import Any

from gpuviz.report.shares import pct
from gpuviz.report.tables import text_table


def _ms(us: float | None) -> str:
    return "unknown" if us is None else f"{us / 1000.0:.3f}"


def _pct(x: float | None) -> str:
    return "unknown" if x is None else pct(x)


def serving_lines(serving: dict[str, Any]) -> list[str]:
    """The text of ``serving`` (the ``serving`` object of ``gpuviz summary --json``).

    Parameters
    ----------
    serving : dict
        :meth:`gpuviz.analysis.serving_phases.ServingReport.to_json`.

    Returns
    -------
    list of str
    """
    steps = serving.get("steps", [])
    sources = ", ".join(serving.get("sources", [])) or "serving"
    lines = [
        f"Serving steps ({sources}): {len(steps)} step{'s' if len(steps) != 1 else ''} by phase, times in ms"
    ]
    cells = []
    notes = []
    for p in serving.get("phases", []):
        tps = p.get("tokens_per_s")
        mfu = (">= " if p.get("mfu_is_lower_bound") else "") + _pct(p.get("mfu"))
        mbu = _pct(p.get("mbu"))
        if p.get("mbu") is not None:
            mbu = ">= " + mbu
        cells.append(
            [
                p["phase"],
                p["steps"],
                _ms(p["mean_step_us"]),
                _ms(p["median_step_us"]),
                "unknown" if p.get("tokens") is None else p["tokens"],
                "unknown" if tps is None else f"{tps:.0f}",
                "unknown" if p.get("requests_mean") is None else f"{p['requests_mean']:.1f}",
                p["graph_steps"],
                _ms(p.get("gap_mean_us")) if p.get("gap_mean_us") is not None else "-",
                mfu,
                mbu,
            ]
        )
        for what in ("mfu", "mbu"):
            if p.get(what) is None and p.get(f"{what}_note"):
                notes.append(f"  {p['phase']} {what.upper()} unknown ({p[f'{what}_note']})")
        if p.get("tokens") is None:
            notes.append(
                f"  {p['phase']} tokens unknown (a step's annotation does not record them)"
            )
    headers = [
        "phase",
        "steps",
        "mean",
        "median",
        "tokens",
        "tokens/s",
        "requests",
        "graphs",
        "gap",
        "MFU",
        "MBU",
    ]
    lines += text_table(headers, cells, left=(0,))
    ttft, tpot = serving.get("ttft_us"), serving.get("tpot_us")
    head = []
    head.append(
        f"TTFT {_ms(ttft)} ms (mean prefill step)" if ttft is not None else _why(serving, "TTFT")
    )
    head.append(
        f"TPOT {_ms(tpot)} ms (mean decode step and the gap before it)"
        if tpot is not None
        else _why(serving, "TPOT")
    )
    lines.append("  " + "; ".join(head))
    return lines + notes


def _why(serving: dict[str, Any], what: str) -> str:
    note = next((n for n in serving.get("notes", []) if n.startswith(what)), f"{what} unknown")
    return note
