"""The Summary view: the figures of ``gpuviz summary`` in readable form, per device and stream.

The view is HTML that this module builds; every value from the file (paths, kernel names,
warnings) goes in through :func:`~gpuviz.display.html_safe`, so it reads as it is.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from gpuviz.display import html_safe


def _esc(value: Any) -> str:
    return html_safe(str(value), one_line=True)


def _us(us: float | None) -> str:
    """A duration given in µs, in the unit that reads best."""
    if us is None:
        return "–"
    us = float(us)
    if us >= 1e6:
        return f"{us / 1e6:.3f} s"
    if us >= 1e3:
        return f"{us / 1e3:.3f} ms"
    return f"{us:.1f} µs"


def _bytes(n: float | None) -> str:
    if n is None or n < 0:
        return "–"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


def _rank(r: Any) -> str:
    return "–" if r is None else str(r)


def _name(name: Any, limit: int = 90) -> str:
    text = str(name)
    return _esc(text if len(text) <= limit else text[: limit - 1] + "…")


def _table(headers: list[str] | None, rows: list[list[str]], numeric_from: int = 1) -> str:
    """An HTML table; ``headers=None`` makes a key-value table with no header row."""

    def align(i: int) -> str:
        return "left" if i < numeric_from else "right"

    head = ""
    if headers is not None:
        cells = "".join(f"<th align='{align(i)}'>{_esc(h)}</th>" for i, h in enumerate(headers))
        head = f"<tr style='background:#eef'>{cells}</tr>"
    body = "".join(
        "<tr>" + "".join(f"<td align='{align(i)}'>{c}</td>" for i, c in enumerate(r)) + "</tr>"
        for r in rows
    )
    return (
        "<table cellspacing='0' cellpadding='4' border='1' style='border-collapse:collapse'>"
        f"{head}{body}</table>"
    )


def summary_html(s: dict[str, Any], warning_samples: list[str] | tuple[str, ...] = ()) -> str:
    """HTML for a ``gpuviz summary --json`` object.

    Parameters
    ----------
    s : dict
        The summary object (DESIGN.md, CLI contract).
    warning_samples : list of str
        The first import warnings, listed under the figures.

    Returns
    -------
    str
    """
    parts: list[str] = []  # the left column: the trace, devices, streams, overlap, memory
    right: list[str] = []  # the right column: kernels, splits, warnings
    sources = s.get("sources", [])
    parts.append("<h2>Summary</h2>")
    parts.append("<p>" + "<br>".join(_esc(p) for p in sources) + "</p>")
    ranks = s.get("ranks", [])
    rank_text = "one process" if ranks in ([None], []) else ", ".join(_rank(r) for r in ranks)
    parts.append(
        _table(
            None,
            [
                ["Events", f"{s.get('events', 0):,}"],
                ["Warnings (skipped events)", f"{s.get('warnings', 0):,}"],
                ["Span", _us(s.get("span_us"))],
                ["Ranks", _esc(rank_text)],
            ],
        )
    )

    devices = s.get("devices", [])
    streams = s.get("streams", [])
    if not devices and not streams:
        parts.append(
            "<h3>No GPU events</h3><p>This trace has no GPU events: no kernels, copies "
            "or sets ran on a GPU while it was recorded (or the profiler was not asked "
            "to record CUDA activity). The CPU side can still be explored in the "
            "Timeline.</p>"
        )
    else:
        parts.append("<h3>Devices</h3>")
        parts.append(
            _table(
                ["Rank", "Device", "Busy", "Utilization"],
                [
                    [
                        _rank(d.get("rank")),
                        f"cuda:{d.get('device')}",
                        _us(d.get("busy_us")),
                        f"{100 * float(d.get('utilization') or 0):.1f} %",
                    ]
                    for d in devices
                ],
                numeric_from=2,
            )
        )
        parts.append(
            "<p><i>Busy: the union of kernel, copy and set intervals. Utilization: busy "
            "time over the trace's span.</i></p>"
        )
        parts.append("<h3>Streams</h3>")
        parts.append(
            _table(
                [
                    "Rank",
                    "Device",
                    "Stream",
                    "Kernels",
                    "Kernel time",
                    "Copies",
                    "Copied",
                    "Sets",
                    "Busy",
                ],
                [
                    [
                        _rank(r.get("rank")),
                        f"cuda:{r.get('device')}",
                        _esc(r.get("stream")),
                        f"{r.get('kernels', 0):,}",
                        _us(r.get("kernel_us")),
                        f"{r.get('memcpy', 0):,}",
                        _bytes(r.get("memcpy_bytes")),
                        f"{r.get('memset', 0):,}",
                        _us(r.get("busy_us")),
                    ]
                    for r in streams
                ],
                numeric_from=3,
            )
        )
        overlap = s.get("overlap") or {}
        parts.append("<h3>Overlap</h3>")
        parts.append(
            _table(
                None,
                [
                    ["Compute and copy at once", _us(overlap.get("compute_copy_us"))],
                    ["Kernels on two or more streams at once", _us(overlap.get("multi_stream_us"))],
                ],
            )
        )
        top = s.get("top_kernels", [])
        if top:
            right.append("<h3>Top kernels (by total time)</h3>")
            right.append(
                _table(
                    ["Kernel", "Count", "Total", "Mean"],
                    [
                        [
                            _name(k.get("name")),
                            f"{k.get('count', 0):,}",
                            _us(k.get("total_us")),
                            _us(k.get("mean_us")),
                        ]
                        for k in top
                    ],
                )
            )

    memory = s.get("memory", [])
    if memory:
        parts.append("<h3>Memory (GPU allocator)</h3>")
        parts.append(
            _table(
                ["Rank", "Device", "Peak allocated", "Peak reserved", "Source"],
                [
                    [
                        _rank(m.get("rank")),
                        f"cuda:{m.get('device')}",
                        _bytes(m.get("peak_allocated_bytes")),
                        _bytes(m.get("peak_reserved_bytes")),
                        "running sum of Bytes (2021-era trace)"
                        if m.get("from_deltas")
                        else "Total Allocated/Reserved",
                    ]
                    for m in memory
                ],
                numeric_from=2,
            )
        )

    splits = s.get("splits")
    if splits:
        right.append("<h3>DataParallel splits</h3>")
        right.append(
            _table(
                ["Rank", "Step", "Device", "Rows", "GPU time"],
                [
                    [
                        _rank(r.get("rank")),
                        _esc(r.get("step")),
                        f"cuda:{r.get('device')}",
                        _esc(r.get("rows")),
                        _us(r.get("gpu_us")),
                    ]
                    for r in splits
                ],
                numeric_from=3,
            )
        )
    if warning_samples:
        right.append(
            f"<h3>Import warnings ({s.get('warnings', 0):,} events skipped)</h3><ul>"
            + "".join(f"<li>{_esc(w)}</li>" for w in warning_samples)
            + "</ul>"
        )
    if not right:
        return "".join(parts)
    return (
        "<table width='100%' cellspacing='0' cellpadding='0'><tr>"
        f"<td valign='top' style='padding-right:24px'>{''.join(parts)}</td>"
        f"<td valign='top'>{''.join(right)}</td></tr></table>"
    )


class QtSummaryView(QWidget):
    """The summary of one trace, as text and tables.

    Parameters
    ----------
    summary : dict or None
        ``Summary.to_json()``.
    error : str, optional
        Shown instead when the summary could not be computed.
    warning_samples : list of str
        The first import warnings.
    """

    def __init__(
        self,
        summary: dict[str, Any] | None,
        error: str = "",
        warning_samples: list[str] | tuple[str, ...] = (),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.summary = summary
        self.warning_samples = list(warning_samples)
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        self._update_text(error)

    def _update_text(self, error: str) -> None:
        if self.summary is None:
            self.browser.setHtml(f"<h3>No summary</h3><p>{_esc(error or 'not computed')}</p>")
        else:
            self.browser.setHtml(summary_html(self.summary, self.warning_samples))

    def text(self) -> str:
        """The view's plain text (what a reader sees)."""
        return self.browser.toPlainText()
