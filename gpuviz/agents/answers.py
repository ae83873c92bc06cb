"""The text the agents' tools answer about a trace: overview, findings, events, comparison.

Answers lead with the key numbers, then the detail, and stay under :data:`LIMIT` characters
unless the agent asks for ``detail``. Every figure comes from the analyses the CLI uses
(:func:`~gpuviz.analysis.advisor.advise`, :func:`~gpuviz.analysis.summary.summarize`), and the
findings are written by :func:`~gpuviz.report.findings.format_finding`, as ``gpuviz advise``
writes them.
Names from files are data: they pass through :func:`~gpuviz.display.terminal_safe`, as in the
CLI (:func:`fit` escapes the whole answer once more; escaping twice changes nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gpuviz.display import terminal_safe
from gpuviz.report.shares import pct

if TYPE_CHECKING:
    from gpuviz.analysis.advisor import Advice, Finding
    from gpuviz.analysis.hardware import Hardware
    from gpuviz.analysis.summary import Summary
    from gpuviz.trace.model import Trace

LIMIT = 4000
"""Characters an answer keeps by default."""
DETAIL_LIMIT = 40000
"""…and with ``detail=true``."""

EVENTS_LIMIT = 50
"""Slices ``events`` lists unless told otherwise."""
EVENTS_MAX = 2000


def fit(text: str, detail: bool = False) -> str:
    """``text`` escaped and cut at a line to fit the answer's limit, saying what was left out."""
    text = terminal_safe(text)
    limit = DETAIL_LIMIT if detail else LIMIT
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit - 120)
    cut = cut if cut > 0 else limit - 120
    more = "" if detail else "; ask again with detail=true for more"
    return f"{text[:cut]}\n… {len(text) - cut} more characters left out{more}."


def name(text: str, width: int = 100) -> str:
    """A name from a file on one line, cut to ``width``."""
    text = terminal_safe(text, one_line=True)
    return text if len(text) <= width else text[: width - 1] + "…"


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms"


def _share(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%" if whole > 0 else "-"


# -- overview ---------------------------------------------------------------------------------
def _devices(advice: Advice, summary: Summary) -> str:
    ctx = advice.context
    gpus = [(d.rank, d.device) for d in summary.devices]
    if not gpus:
        return "no GPU"
    models: dict[str, int] = {}
    for rank, dev in gpus:
        props = ctx.device_properties(-1 if rank is None else rank, dev) if ctx else {}
        label = str(props.get("name") or "model not recorded")
        models[label] = models.get(label, 0) + 1
    kinds = ", ".join(f"{n}× {name(m, 60)}" if n > 1 else name(m, 60) for m, n in models.items())
    return f"{len(gpus)} GPU{'s' if len(gpus) != 1 else ''} ({kinds})"


def _ranks(summary: Summary) -> str:
    if summary.ranks == [None]:
        return "one process"
    n = len(summary.ranks)
    return f"{n} rank{'s' if n != 1 else ''} ({', '.join(str(r) for r in summary.ranks)})"


def _steps_line(advice: Advice) -> str:
    st = advice.breakdown.steps
    if len(st) == 0:
        return "no steps (no events with a duration)"
    sources = ", ".join(sorted(set(st.source)))
    n = f"{len(st)} step{'s' if len(st) != 1 else ''}"
    return f"{n} (from {sources}), mean step {_ms(advice.mean_step_parts()['step'])}"


def _parts_line(advice: Advice) -> str:
    p = advice.mean_step_parts()
    step = p["step"]
    gpu = ", ".join(
        f"{k} {p[k] / 1e6:.3f} ({_share(p[k], step)})"
        for k in ("compute", "comm", "copy", "set", "idle")
        if p[k] > 0 or k in ("compute", "idle")
    )
    return (
        f"Mean step {_ms(step)}: GPU time (ms, per GPU, exclusive parts) {gpu}; CPU inside "
        f"PyTorch ops {p['cpu ops'] / 1e6:.3f}, outside ops {p['cpu other'] / 1e6:.3f}."
    )


def _rank_steps_line(advice: Advice) -> str | None:
    st = advice.breakdown.steps
    ranks = sorted({int(r) for r in st.rank.tolist()})
    if len(ranks) < 2:
        return None
    means = {r: float(st.duration_ns[st.rank == r].mean()) for r in ranks}
    if len(ranks) <= 8:
        text = ", ".join(f"rank {r} {v / 1e6:.3f}" for r, v in means.items())
    else:
        lo, hi = min(means, key=means.__getitem__), max(means, key=means.__getitem__)
        text = f"fastest rank {lo} {means[lo] / 1e6:.3f}, slowest rank {hi} {means[hi] / 1e6:.3f}"
    return f"Mean step per rank (ms): {text}."


def finding_brief(i: int, f: Finding, detail: bool) -> list[str]:
    """A finding in three lines: headline with its saving, its numbers, its fix."""
    from gpuviz.analysis.advisor.findings import finding_saving

    text = terminal_safe(f.detail, one_line=True)
    if not detail and len(text) > 400:
        text = text[:399] + "…"
    from gpuviz.report.findings import code_names

    lines = [
        f"{i}. [{f.severity}] {f.kind}: {name(f.title, 200)}; could save {finding_saving(f)}",
        f"   {text}",
        f"   Fix: {terminal_safe(f.fix, one_line=True)}",
    ]
    # Where in the code its evidence comes from (the advisor's ops, modules, lines).
    where = [
        f"{label} {', '.join(name(x, 70) for x in found)}"
        for label, key in (("ops", "ops"), ("modules", "modules"), ("lines", "lines"))
        if (found := code_names(f, key))
    ]
    if where:
        lines.append(f"   Where: {'; '.join(where)}")
    return lines


def mfu_line(hw: Hardware) -> str:
    """``MFU: mean 2.0% over 5 steps (range 1.9–2.0%), against the dense bf16 peak …``, or
    why it is not known (``gpuviz summary``'s figures: :func:`~gpuviz.analysis.hardware.hardware`)."""
    from gpuviz.analysis.hardware import mfu_brief, mfu_unknown_reason

    b = mfu_brief(hw)
    if b is None:
        return f"MFU: not known ({terminal_safe(mfu_unknown_reason(hw), one_line=True)})."
    peaks = ", ".join(f"{k} {v:g} TFLOP/s" for k, v in sorted(b.precisions.items()))
    of = f" of {name(b.peak_label, 80)}" if b.peak_label else ""
    # FLOPs known for part of the GPU time: a lower bound, and said so (issue 47, item 3)
    ge = ">= " if b.lower_bound else ""
    known = (
        f"; FLOPs known for {100 * b.coverage:.0f}% of GPU time"
        if b.lower_bound and b.coverage is not None
        else ""
    )
    return (
        f"MFU: mean {ge}{pct(b.mean)} over {b.steps} step{'s' if b.steps != 1 else ''} "
        f"(range {pct(b.low)[:-1]}–{pct(b.high)}{known}), against the dense peak{of}: "
        f"{peaks}."
    )


def mfu_json(hw: Hardware | None) -> tuple[dict[str, Any] | None, str | None]:
    """``(mfu brief, None)``, or ``(None, why not)`` (:class:`~gpuviz.agents.schemas.Mfu`)."""
    from gpuviz.analysis.hardware import mfu_brief, mfu_unknown_reason

    if hw is None:
        return None, "the roofline figures could not be made for this trace"
    b = mfu_brief(hw)
    if b is None:
        return None, mfu_unknown_reason(hw)
    return b.to_json(), None


def trace_overview(
    label: str,
    advice: Advice,
    summary: Summary,
    detail: bool = False,
    hw: Hardware | None = None,
    where: list[str] | None = None,
) -> str:
    """What a trace is, where its step time goes, and what is wrong (the ``overview`` tool).

    Parameters
    ----------
    label : str
        The file as the agent named it.
    advice, summary : Advice, Summary
        ``gpuviz advise``'s and ``gpuviz summary``'s figures.
    detail : bool
        Every finding, whole texts.
    hw : Hardware, optional
        The roofline figures, for the MFU line (none without).
    where : list of str, optional
        The top ops and modules by device time
        (:func:`~gpuviz.agents.breakdown_answer.where_lines`).
    """
    lines = [
        f"{name(label, 200)}: Kineto trace, {_ranks(summary)}, {_devices(advice, summary)}, "
        f"{_steps_line(advice)}; span {_ms(summary.span_ns)}, {summary.events} events.",
    ]
    findings = advice.findings
    if findings:
        top = findings[0]
        from gpuviz.analysis.advisor.findings import finding_saving

        lines.append(
            f"Main problem: {top.kind} ({top.severity}), could save {finding_saving(top)}. "
            f"{len(findings)} finding"
            f"{'s' if len(findings) != 1 else ''} in all."
        )
    elif summary.has_gpu_events:
        lines.append(
            "No findings: nothing in this trace costs a noticeable share of the step time."
        )
    else:
        lines.append("No GPU events in this trace (CPU activity only): nothing to advise on.")
    if len(advice.breakdown.steps):
        lines.append(_parts_line(advice))
    if hw is not None and summary.has_gpu_events:
        lines.append(mfu_line(hw))
    lines += where or []
    if (ranks := _rank_steps_line(advice)) is not None:
        lines.append(ranks)
    if summary.devices:
        shown = summary.devices if detail else summary.devices[:8]
        busy = ", ".join(
            f"{'' if d.rank is None else f'rank {d.rank} '}GPU {d.device} "
            f"{100 * d.utilization:.1f}%"
            for d in shown
        )
        more = (
            f" (+{len(summary.devices) - len(shown)} more)"
            if len(shown) < len(summary.devices)
            else ""
        )
        lines.append(f"GPU busy over the trace: {busy}{more}.")
    tail = []
    for kind, msg in advice.errors.items():
        tail.append(f"(rule {kind} failed on this trace: {name(msg, 200)})")
    if summary.top_kernels:
        k = summary.top_kernels if detail else summary.top_kernels[:3]
        tail += ["", "Top kernels by total time:"]
        tail += [f"  {_ms(x.total_ns)}  {x.count}×  {name(x.name, 110)}" for x in k]
    tail += [
        "",
        "Next: findings(path) gives each finding's evidence (time ranges, names); "
        "breakdown(path, by) the time by op, module, line, kernel or step; "
        "events(path, start_us, end_us) lists the slices of a range; compare(a, b) compares "
        "two runs.",
    ]
    if findings:
        lines += ["", "Findings, largest saving first:"]
        # Whole findings while they fit beside the rest, so that the answer is not cut.
        room = (DETAIL_LIMIT if detail else LIMIT) - 150 - sum(len(x) + 1 for x in lines + tail)
        listed = 0
        for f in findings if detail else findings[:4]:
            block = finding_brief(listed + 1, f, detail)
            size = sum(len(x) + 1 for x in block)
            if listed and size > room:
                break
            lines += block
            room -= size
            listed += 1
        if listed < len(findings):
            rest = ", ".join(f"{f.kind} ({f.severity})" for f in findings[listed:])
            lines.append(f"… and {rest}: findings(path) has them.")
    return "\n".join(lines + tail)


# -- findings ---------------------------------------------------------------------------------
def findings_answer(
    label: str, advice: Advice, kind: str | None, detail: bool = False
) -> tuple[str, dict[str, Any]]:
    """Findings with their evidence, largest saving first (the ``findings`` tool); its text
    and its data (:class:`~gpuviz.agents.schemas.FindingsOut`: every finding asked for)."""
    found = [f for f in advice.findings if kind is None or f.kind == kind]
    data = {
        "path": label,
        "kind": kind,
        "findings": [f.to_json() for f in found],
        "all_kinds": [f.kind for f in advice.findings],
    }
    return _findings_text(label, advice, found, kind, detail), data


def _findings_text(
    label: str, advice: Advice, found: list[Finding], kind: str | None, detail: bool
) -> str:
    from gpuviz.report.findings import format_finding

    what = f" of kind {kind}" if kind else ""
    if not found:
        others = ", ".join(f.kind for f in advice.findings) or "none"
        return f"{name(label, 200)}: no findings{what} (findings of this trace: {others})."
    lines = [
        f"{name(label, 200)}: {len(found)} finding{'s' if len(found) != 1 else ''}{what}, largest saving first."
    ]
    budget = DETAIL_LIMIT if detail else LIMIT - 300
    used = len(lines[0])
    for i, f in enumerate(found, 1):
        block = format_finding(i, f, evidence=10 if detail else 4)
        size = sum(len(x) + 1 for x in block)
        if i > 1 and used + size > budget:
            rest = ", ".join(f"{g.kind} ({g.severity})" for g in found[i - 1 :])
            lines.append(
                f"… {len(found) - i + 1} more, left out for length: {rest}. "
                "Ask findings(path, kind=...) for one, or detail=true."
            )
            break
        lines += ["", *block]
        used += size
    lines += [
        "",
        "Evidence times are ms from the trace start; events(path, start_us, end_us) lists a range's slices.",
    ]
    return "\n".join(lines)


# -- events -----------------------------------------------------------------------------------
def _us_text(us: float) -> str:
    """µs as the answers write them: ``1234.5``; a time past any trace as ``1e+308``."""
    return f"{us:.1f}" if abs(us) < 1e12 else f"{us:.3g}"


def events_answer(
    label: str,
    trace: Trace,
    start_us: float,
    end_us: float,
    lane: str | None,
    name_part: str | None,
    limit: int,
    detail: bool = False,
    cursor: int = 0,
) -> tuple[str, dict[str, Any]]:
    """The slices overlapping a time range, earliest first, in pages of at most ``limit``
    whole rows from ``cursor`` (the ``events`` tool); its text and its data
    (:class:`~gpuviz.agents.schemas.EventsOut`)."""
    from gpuviz.agents.paging import Page, check_cursor, rows_that_fit
    from gpuviz.analysis.names import name_mask
    from gpuviz.trace.lanes import lane_titles
    from gpuviz.trace.model import KIND_CATEGORIES, Kind

    s = trace.slices
    span = trace.slices_end_ns
    # The range is clamped to the trace (an hour before it or 1e308 µs after it are the same
    # question as its start or end; ns past int64 would not compare).
    lo_us, hi_us = max(start_us, -1.0), min(end_us, span / 1000 + 1.0)
    t0, t1 = round(lo_us * 1000), round(hi_us * 1000)
    mask = (s.start_ns < t1) & (s.start_ns + s.dur_ns > t0)
    titles = lane_titles(trace)
    if lane:
        needle = lane.lower()
        ok = np.array([needle in x.lower() for x in titles], dtype=bool)
        mask &= ok[s.track] if len(ok) else False
    if name_part:
        needle = name_part.lower()
        mask &= name_mask(trace.symbols, lambda n: needle in n.lower())[s.name]
    rows = np.flatnonzero(mask)
    rows = rows[np.argsort(s.start_ns[rows], kind="stable")]
    check_cursor(cursor, len(rows))
    filters = "".join(
        f", {k} containing {terminal_safe(v, one_line=True)!r}"
        for k, v in (("lane", lane), ("name", name_part))
        if v
    )
    head = (
        f"{name(label, 200)}: {len(rows)} slices overlap {_us_text(start_us)}–{_us_text(end_us)} µs"
        f"{filters} (the trace runs 0–{span / 1000:.1f} µs)."
    )
    tracks, counts = np.unique(s.track[rows], return_counts=True)
    data: dict[str, Any] = {
        "path": label,
        "start_us": lo_us,
        "end_us": hi_us,
        "trace_end_us": span / 1000,
        "by_lane": {name(titles[int(t)], 200): int(c) for t, c in zip(tracks, counts)},
        "page": Page(0, 0, len(rows), len(rows)).to_json(),
        "slices": [],
    }
    if len(rows) == 0:
        if lane and not any(lane.lower() in x.lower() for x in titles):
            busy = np.flatnonzero(np.diff(trace.track_offsets) > 0)
            some = ", ".join(repr(name(titles[int(t)], 60)) for t in busy[:12])
            more = f" and {len(busy) - 12} more" if len(busy) > 12 else ""
            text = f"{head}\nNo lane's name contains {terminal_safe(lane, one_line=True)!r}; lanes: {some}{more}."
            return text, data
        return head, data
    lines = [head]
    order = np.argsort(-counts, kind="stable")[:6]
    lines.append(
        "By lane: "
        + "; ".join(f"{name(titles[int(tracks[i])], 80)}: {int(counts[i])}" for i in order)
        + (f"; {len(tracks) - len(order)} more lanes" if len(tracks) > len(order) else "")
        + "."
    )
    lines.append("start µs, duration µs, lane, category, name:")
    width = 400 if detail else 110
    candidates = rows[cursor : cursor + limit].tolist()
    out, slices = [], []
    for r in candidates:
        kind = Kind(int(s.kind[r]))
        cat = KIND_CATEGORIES.get(kind) or trace.symbols[int(s.cat[r])]
        lane_name = titles[int(s.track[r])]
        out.append(
            f"  {s.start_ns[r] / 1000:.1f}  {s.dur_ns[r] / 1000:.1f}  "
            f"{name(lane_name, 60)}  {name(cat, 30)}  "
            f"{name(trace.symbols[int(s.name[r])], width)}"
        )
        slices.append(
            {
                "start_us": float(s.start_ns[r]) / 1000,
                "dur_us": float(s.dur_ns[r]) / 1000,
                "lane": name(lane_name, 200),
                "category": name(cat, 200),
                "name": name(trace.symbols[int(s.name[r])], 1000),
            }
        )
    room = (DETAIL_LIMIT if detail else LIMIT) - 400 - sum(len(x) + 1 for x in lines)
    n = rows_that_fit(out, room, 0)
    page = Page(cursor, n, len(rows), len(rows))
    lines[1:1] = [f"Showing {page.span('slices')}."] if n < len(rows) else []
    lines += out[:n]
    if (rest := page.more_line("slices")) is not None:
        lines.append(rest[:-1] + " (or narrow the range, filter by lane or name, or raise limit).")
    data["page"] = page.to_json()
    data["slices"] = slices[:n]
    return "\n".join(lines), data
