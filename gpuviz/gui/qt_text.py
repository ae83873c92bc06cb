"""Qt widgets that show names from files as what they are: text, never markup.

A ``QLabel`` in its default ``Qt.AutoText`` renders ``<b>x</b>`` bold, a tooltip is rich text
whenever it looks like HTML, ``&`` in a tab, menu or button title is a keyboard shortcut, and
``[*]`` in a window title is the "modified" mark. These helpers put a name from a file (kernel,
op, thread, file path, workload, traceback) into each of those places so that it reads exactly
as it is, control characters shown as ``\\x1b`` (:mod:`gpuviz.display`).

Rich labels that this code writes itself (a bold title and a name) use :func:`set_rich` with
every name passed through :func:`~gpuviz.display.html_safe`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from gpuviz.display import html_safe, menu_safe, terminal_safe, title_safe, tooltip_html

PLAIN = Qt.TextFormat.PlainText
RICH = Qt.TextFormat.RichText
WRAP_MIN_WIDTH = 160
"""The narrowest a wrapping label asks to be (px): its text, however long, never sets it."""


def plain_label(text: str = "", parent: QWidget | None = None) -> QLabel:
    """A ``QLabel`` that shows ``text`` as plain text (control characters escaped)."""
    label = QLabel(parent)
    set_plain(label, text)
    return label


def set_plain(label: QLabel, text: str) -> None:
    """Show ``text`` in ``label`` as plain text, whatever it holds (``<b>`` stays ``<b>``)."""
    label.setTextFormat(PLAIN)
    label.setText(terminal_safe(text))


def set_rich(label: QLabel, html: str) -> None:
    """Show ``html`` that this code built (names inside it already :func:`html_safe`)."""
    label.setTextFormat(RICH)
    label.setText(html)


def wrap_label(label: QLabel) -> QLabel:
    """Make ``label`` wrap its lines instead of widening its window; returns it.

    A one-line label asks for its whole text's width, and a window grows to the widest label
    it holds (a snapshot's figures made it 1722 px wide). Wrapped, a label still asks for its
    longest word; with a set minimum width it asks for :data:`WRAP_MIN_WIDTH`, and takes more
    lines when narrow. A single word longer than the window (a path) is clipped at its edge.
    """
    label.setWordWrap(True)
    label.setMinimumWidth(WRAP_MIN_WIDTH)
    return label


def set_tooltip(widget: QWidget, text: str) -> None:
    """Give ``widget`` a tooltip that shows ``text`` literally (Qt guesses rich text)."""
    widget.setToolTip(tooltip_html(text) if text else "")


__all__ = [
    "PLAIN",
    "RICH",
    "html_safe",
    "menu_safe",
    "plain_label",
    "set_plain",
    "set_rich",
    "set_tooltip",
    "terminal_safe",
    "title_safe",
    "tooltip_html",
    "wrap_label",
]
