"""Where an element of a JSON events array ends: by a quick guess, or exactly over the bytes.

:mod:`gpuviz.trace.jsonscan` hands out runs of complete elements; this module finds their ends.
:func:`guess_split` finds the last ``}, {"ph"``-like boundary in a text (a regular expression
over its last 4 KiB, widened until it finds one); the caller's decode proves it right.
:func:`structural_brackets` is exact: vectorized numpy over the bytes, quote parity (escaped quotes
handled) tells what is inside strings, and a cumulative sum of the brackets outside them gives
the depth. :func:`deep_nesting` says where JSON is nested too deeply. Only JSON text is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

# Byte -> +1 for an opening bracket, -1 for a closing one, 0 otherwise.
_BRACKET_DELTA = np.zeros(256, dtype=np.int8)
_BRACKET_DELTA[[ord("{"), ord("[")]] = 1
_BRACKET_DELTA[[ord("}"), ord("]")]] = -1
_IS_BRACKET = _BRACKET_DELTA != 0


def structural_brackets(
    block: bytes, in_string: int, escape_next: bool, depth: int
) -> tuple[Any, Any, Any, int, bool]:
    """The structural brackets of ``block`` (outside strings): positions, +-1, the depth after
    each; and whether the block ends inside a string, or after an escaping backslash.

    ``in_string``, ``escape_next`` and ``depth`` are the state at the block's start.
    """
    arr = np.frombuffer(block, dtype=np.uint8)
    n = arr.size
    quotes = np.flatnonzero(arr == 34)
    slashes = np.flatnonzero(arr == 92)
    if slashes.size or escape_next:
        escaped, escape_next = escaped_positions(slashes, n, escape_next)
        if escaped.size and quotes.size:
            quotes = quotes[~np.isin(quotes, escaped, assume_unique=True)]
    brackets = np.flatnonzero(_IS_BRACKET[arr])
    if brackets.size:
        inside = (np.searchsorted(quotes, brackets) + in_string) & 1
        brackets = brackets[inside == 0]
    in_string = (in_string + quotes.size) & 1
    delta = _BRACKET_DELTA[arr[brackets]].astype(np.int64)
    return brackets, delta, np.cumsum(delta) + depth, in_string, escape_next


NESTING_SHOWN = 100
"""Deeper than this, nesting is absurd for a trace (Kineto's nests a handful of levels): an
error for JSON nested too deeply points at the first byte past it."""


def deep_nesting(text: bytes | bytearray | memoryview, depth: int = 0) -> tuple[int, str]:
    """Where and how JSON ``text`` is nested too deeply, for the error of a decoder that gave up
    on it (``RecursionError``): the offset in ``text`` and the words.

    ``depth`` is the file's nesting at ``text[0]``. The offset is that of the first bracket past
    :data:`NESTING_SHOWN` levels (or of the deepest one, in text that is not that deep).
    """
    pos, _, after, _, _ = structural_brackets(bytes(text), 0, False, depth)
    deepest = int(after.max()) if after.size else depth
    past = np.flatnonzero(after > min(NESTING_SHOWN, deepest - 1))
    at = int(pos[past[0]]) if past.size else 0
    return at, f"JSON nested too deeply ({deepest:,} levels of brackets)"


def escaped_positions(slashes: Any, n: int, escape_first: bool) -> tuple[Any, bool]:
    """Positions escaped by a backslash run of odd length; and whether the next block's first is."""
    if escape_first:
        # An odd run at the end of the last block counts as one backslash just before this one.
        slashes = np.concatenate([[-1], slashes])
    if not slashes.size:
        return slashes, False
    breaks = np.flatnonzero(np.diff(slashes) != 1) + 1
    starts = np.concatenate([[0], breaks])
    ends = np.concatenate([breaks, [slashes.size]])
    lengths = ends - starts
    after = slashes[ends - 1] + 1
    odd = after[(lengths & 1) == 1]
    carry = bool(odd.size and odd[-1] == n)
    return odd[odd < n], carry


def string_state(text: bytes, state: tuple[int, bool]) -> tuple[int, bool]:
    """``(inside a string, next byte escaped)`` after ``text``, from the state before it."""
    _, _, _, in_string, escape_next = structural_brackets(text, state[0], state[1], 0)
    return in_string, escape_next


# An element boundary as Kineto and most writers format it: `}`, a comma, and an object whose
# first key is one of an event's. (Inside a JSON string a quote is escaped, so a match is
# never inside a string of valid JSON; it may still be inside nested args, which the decode
# of the guessed chunk finds out.)
_SPLIT = re.compile(rb'\}\s*,\s*(\{)\s*"(?:ph|name|cat|pid|tid|ts|dur|id|args|s|bp)"')


def guess_split(
    length: int, read: Callable[[int, int], Any], whole: bool = True
) -> tuple[int, int] | None:
    """The last likely element boundary in a text of ``length`` bytes (``read(at, n)``: its
    ``n`` bytes from ``at``): where the element before it ends (after its ``}``) and where the
    next one's ``{`` stands. ``whole``: False gives None rather than read the whole text (an
    unread block: the caller reads it, and looks there).

    The search starts in the last 4 KiB (a dozen events) and widens eightfold until it finds
    one: every boundary in the window is matched on the way to the last, and a 64 KiB first
    window was 0.15 ms a 1 MiB block, a tenth of the importer's own time per chunk on a
    16-core host. A wider window finds the same last boundary: no match can start inside
    another (each starts at the only ``}`` it holds).
    """
    window = 1 << 12
    while True:
        at = max(0, length - window)
        if at == 0 and not whole:
            return None
        last = None
        for m in _SPLIT.finditer(read(at, length - at)):
            last = m
        if last is not None:
            return at + last.start() + 1, at + last.start(1)
        if at == 0:
            return None
        window *= 8


def text_reader(text: bytes) -> Callable[[int, int], memoryview]:
    """``read(at, n)`` over ``text`` for :func:`guess_split`, without copies."""
    view = memoryview(text)
    return lambda at, n: view[at : at + n]


__all__ = [
    "NESTING_SHOWN",
    "deep_nesting",
    "escaped_positions",
    "guess_split",
    "string_state",
    "structural_brackets",
    "text_reader",
]
