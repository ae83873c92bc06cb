"""Names from files are data: make them safe to print or show (no terminal escapes, no markup).

A trace, replay or snapshot file may come from anywhere, and its names (kernels, ops, threads,
files, stack frames) reach the user's terminal and the app. :func:`terminal_safe` turns control
characters into a visible ``\\x1b`` form, so a crafted name cannot recolour, clear or retitle a
terminal or write to its clipboard (OSC 52). :func:`html_safe` does the same and escapes HTML,
for the Qt places that would otherwise read text as rich text (tooltips, message boxes).

Only display escapes: names stay searchable and exported exactly as they were.
"""

from __future__ import annotations

import html
import re

# C0 controls but newline and tab, DEL, C1 controls, and the Unicode bidirectional controls
# (a right-to-left override makes a name read backwards: "Trojan Source").
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# The same, plus newline and tab, for one-line fields (a table cell, a name in a sentence).
_UNSAFE_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
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
        The text, with C0 (but newline and tab, unless ``one_line``), DEL, C1 and Unicode
        bidirectional controls written as ``\\x1b`` or ``\\u202e``.
    """
    pattern = _UNSAFE_ONE_LINE if one_line else _UNSAFE
    return pattern.sub(_escape, text)


def html_safe(text: str, one_line: bool = False) -> str:
    """``text`` made safe for Qt rich text: control characters escaped, then HTML escaped."""
    return html.escape(terminal_safe(text, one_line=one_line), quote=True)
