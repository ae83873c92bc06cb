"""Names from files are data: make them safe to print or show (no terminal escapes, no markup).

A trace, replay or snapshot file may come from anywhere, and its names (kernels, ops, threads,
files, stack frames) reach the user's terminal and the app. :func:`terminal_safe` turns control
characters into a visible ``\\x1b`` form, so a crafted name cannot recolour, clear or retitle a
terminal or write to its clipboard (OSC 52). :func:`html_safe` does the same and escapes HTML,
for the Qt places that would otherwise read text as rich text (tooltips, message boxes).

The CLI's text output goes through :func:`echo` (and its ``--json`` output through
:func:`json_text`); the app's widgets use the Qt helpers of :mod:`gpuviz.gui.qt_text`, built on
the string functions here (:func:`tooltip_html`, :func:`menu_safe`, :func:`title_safe`).

Only display escapes: names stay searchable and exported exactly as they were.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from typing import IO, Any

# C0 controls but newline and tab, DEL, C1 controls, the Unicode bidirectional controls (a
# right-to-left override makes a name read backwards: "Trojan Source"), the line and paragraph
# separators (a line break to Qt and to some terminals), and lone surrogates: a file name that
# is not valid UTF-8 reaches Python as U+DC80..U+DCFF ("surrogateescape"), which no encoder
# writes (print would raise UnicodeEncodeError) and Qt cannot show.
_ALWAYS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_SURROGATES = "\ud800-\udfff"
_UNSAFE = re.compile(f"[{_ALWAYS}{_SURROGATES}]")
# The same, plus newline and tab, for one-line fields (a table cell, a name in a sentence).
_UNSAFE_ONE_LINE = re.compile(f"[\n\t{_ALWAYS}{_SURROGATES}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte of a file name: show that byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str, one_line: bool = False) -> str:
    """``text`` with control characters shown as escapes, safe to write to a terminal.

    Parameters
    ----------
    text : str
        Any string, typically a name read from a file.
    one_line : bool
        Also escape newline and tab (for a name inside a sentence or a table row).

    Returns
    -------
    str
        The text, with C0 (but newline and tab, unless ``one_line``), DEL, C1, Unicode
        bidirectional controls and line/paragraph separators written as ``\\x1b`` or
        ``\\u202e``, and lone surrogates (undecodable bytes of a file name) as the byte,
        ``\\xff``. Printable text, other languages included, is unchanged. Applying it twice
        changes nothing more.
    """
    pattern = _UNSAFE_ONE_LINE if one_line else _UNSAFE
    return pattern.sub(_escape, text)


def html_safe(text: str, one_line: bool = False) -> str:
    """``text`` made safe for Qt rich text: control characters escaped, then HTML escaped."""
    import html  # here: the CLI prints no HTML, and a kept output's process is timed (issue 25)

    return html.escape(terminal_safe(text, one_line=one_line), quote=True)


def tooltip_html(text: str) -> str:
    """A tooltip (or any Qt auto-detected text) that Qt shows as exactly ``text``.

    Qt guesses whether a tooltip is rich text (``Qt::mightBeRichText``): ``<b>x</b>`` would be
    bold, while an escaped ``a &amp; b`` with no tag would be shown with its entity. Marking
    the text as rich (``<qt>``) and escaping it shows every name literally; ``pre-wrap`` keeps
    its newlines, tabs and runs of spaces. Control characters are escaped as in
    :func:`terminal_safe`.
    """
    return f'<qt style="white-space:pre-wrap">{html_safe(text)}</qt>'


def menu_safe(text: str) -> str:
    """``text`` for a menu entry, tab or button title: one line, ``&`` kept literal.

    Qt reads ``&x`` in those titles as a keyboard shortcut (mnemonic) and hides the ``&``.
    """
    return terminal_safe(text, one_line=True).replace("&", "&&")


def title_safe(text: str) -> str:
    """``text`` for a window title: one line, ``[*]`` kept literal.

    Qt replaces ``[*]`` in a window title with the "modified" mark, or removes it.
    """
    return terminal_safe(text, one_line=True).replace("[*]", "[*][*]")


def echo(text: object = "", file: IO[str] | None = None, end: str = "\n") -> None:
    """Print ``text`` with control characters escaped: the CLI's one way of writing text.

    Parameters
    ----------
    text : object
        What to print (``str()`` of it); newlines and tabs are kept.
    file : text stream, optional
        Default ``sys.stdout`` (looked up when called, so redirections apply).
    end : str
        Written after the text, as by ``print``.
    """
    print(terminal_safe(str(text)), file=sys.stdout if file is None else file, end=end)


def echo_traceback(file: IO[str] | None = None) -> None:
    """Print the exception being handled, as ``traceback.print_exc`` does, through :func:`echo`.

    Its message may quote a name from a file. Default stream: ``sys.stderr``.
    """
    import traceback

    echo(traceback.format_exc(), file=sys.stderr if file is None else file, end="")


def json_text(obj: Any, **kwargs: Any) -> str:
    """``obj`` as JSON text for a terminal: exact, and pure printable ASCII.

    ``json.dumps`` with ``ensure_ascii=True`` writes every character outside space..``~`` as a
    ``\\uXXXX`` escape: control characters (ESC, DEL, C1), bidirectional controls and lone
    surrogates included, so the text is safe to print and parses back to the same strings.
    (orjson and msgspec write DEL, C1 and U+202E raw, and refuse lone surrogates.)

    Parameters
    ----------
    obj : object
        A JSON-serializable value.
    **kwargs
        Passed to ``json.dumps`` (``indent``, ``default``...); ``ensure_ascii`` is forced on.
    """
    kwargs["ensure_ascii"] = True
    return json.dumps(obj, **kwargs)


def warning_lines(samples: Sequence[str], shown: int = 5) -> list[str]:
    """A trace's import warnings as report lines: ``  warning: …``, the first ``shown``.

    What ``gpuviz summary`` and ``gpuviz advise`` print under their ``trace:`` line (and
    ``gpuviz export`` on stderr), so that a command that loads a trace never keeps quiet about
    what its import warned of (two files claiming one rank, skipped events).

    Parameters
    ----------
    samples : sequence of str
        The messages (``Trace.warnings.samples``); names from files, so each is made one safe
        line.
    shown : int
        How many to print; the rest are counted on one more line.
    """
    lines = [f"  warning: {terminal_safe(w, one_line=True)}" for w in samples[:shown]]
    if len(samples) > shown:
        lines.append(f"  … {len(samples) - shown} more warnings")
    return lines


__all__ = [
    "counted",
    "echo",
    "echo_traceback",
    "html_safe",
    "json_text",
    "menu_safe",
    "terminal_safe",
    "title_safe",
    "tooltip_html",
    "warning_lines",
]


def counted(n: int, noun: str, plural: str = "") -> str:
    """A count with its noun in the right number: ``1 row``, ``2 rows`` (``plural``: the
    plural when it is not ``noun + "s"``)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def format_bytes(n: float | None) -> str:
    """A byte count for people: ``1.50 GiB``, ``12.00 MiB``, ``3.00 KiB``, ``512 B``; ``?``
    when unknown."""
    if n is None:
        return "?"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"
