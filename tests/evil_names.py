"""A Kineto trace whose names are hostile: terminal escapes, control characters, markup.

Names from files are data (issue 16). :data:`EVIL_NAMES` holds one kernel name of each kind of
trouble; :func:`write_evil_trace` writes a small but complete trace (CPU ops, launches,
kernels, a copy, memory events, named threads and processes, annotations, args) that uses
them everywhere a name can be, in a file whose own name is hostile too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

EVIL_NAMES = (
    "evil\x1b[31mRED\x1b[0m",  # SGR: recolours the terminal
    "title\x1b]0;pwned\x07",  # OSC 0: retitles the terminal window
    "clip\x1b]52;c;ZWNobyBwd25lZA==\x07",  # OSC 52: writes the clipboard
    "nul\x00byte",  # NUL
    "rlo\u202egnp.exe",  # right-to-left override: reads "exe.png"
    "<b>bold</b>",  # Qt rich text
    "<img src=x>",
    "<a href=x>link</a>",
    "c1\x9b31mCSI",  # C1 CSI (one character)
    "del\x7fx & [*]\nnewline\ttab",  # DEL, a mnemonic, a title mark, newline and tab
)
"""One kernel name per kind of trouble."""

EVIL_THREAD = "thread<b>THR</b>\x1b[2J"
EVIL_PROCESS = "proc<i>PROC</i>\x1b]0;x\x07"
EVIL_OP = "aten::<u>OPX</u>\x1b[5m"
EVIL_ANNOTATION = "step<img src=y>\u202e"
EVIL_ARG = "<b>ARG</b>\x1b[31m\u202e"
EVIL_FILE_NAME = "trace-\x1b[31m<b>bold\u202e&[*].json"
"""A trace file name with ESC, markup, RLO, a mnemonic and a title mark (legal on Linux; no
``/``, so no closing tag)."""

ALL_EVIL = (*EVIL_NAMES, EVIL_THREAD, EVIL_PROCESS, EVIL_OP, EVIL_ANNOTATION, EVIL_ARG)


def evil_events() -> list[dict[str, Any]]:
    """The trace's events: one launch and kernel per :data:`EVIL_NAMES` entry, and the rest."""
    events: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": EVIL_PROCESS}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 11, "args": {"name": EVIL_THREAD}},
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
        {
            "ph": "X",
            "cat": "user_annotation",
            "name": EVIL_ANNOTATION,
            "pid": 1,
            "tid": 11,
            "ts": 1000,
            "dur": 2000,
        },
    ]
    for i, name in enumerate(EVIL_NAMES):
        t = 1010 + 150 * i
        events += [
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": EVIL_OP,
                "pid": 1,
                "tid": 11,
                "ts": t,
                "dur": 40,
                "args": {"External id": i + 1, "Input type": EVIL_ARG},
            },
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "pid": 1,
                "tid": 11,
                "ts": t + 5,
                "dur": 10,
                "args": {"correlation": 100 + i, "External id": i + 1},
            },
            {
                "ph": "X",
                "cat": "kernel",
                "name": name,
                "pid": 0,
                "tid": 7,
                "ts": t + 20,
                "dur": 30 + 10 * i,  # distinct totals: a stable top-kernels order
                "args": {
                    "device": 0,
                    "stream": 7,
                    "correlation": 100 + i,
                    "grid": [1, 1, 1],
                    "block": [32, 1, 1],
                },
            },
        ]
    events += [
        {
            "ph": "X",
            "cat": "gpu_memcpy",
            "name": "Memcpy HtoD (Pageable -> Device)",
            "pid": 0,
            "tid": 7,
            "ts": 2700,
            "dur": 20,
            "args": {"device": 0, "stream": 7, "bytes": 4096},
        },
        {
            "ph": "i",
            "s": "t",
            "cat": "cpu_instant_event",
            "name": "[memory]",
            "pid": 1,
            "tid": 11,
            "ts": 1020,
            "args": {
                "Device Type": 1,
                "Device Id": 0,
                "Addr": 1,
                "Bytes": 4096,
                "Total Allocated": 4096,
                "Total Reserved": 2 << 20,
            },
        },
    ]
    return events


def write_evil_trace(folder: Path, name: str = EVIL_FILE_NAME) -> Path:
    """Write the hostile trace into ``folder`` as ``name``; returns its path."""
    path = Path(folder) / name
    doc = {"schemaVersion": 1, "traceEvents": evil_events()}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


_BIDI_AND_BREAKS = set("\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e")
_BIDI_AND_BREAKS |= set("\u2066\u2067\u2068\u2069")

MARKUP = {
    "<b>bold</b>": ("<b>", "bold"),
    "<a href=x>link</a>": ("<a href=x>", "link"),
    "<b>THR</b>": ("<b>", "THR"),
    "<i>PROC</i>": ("<i>", "PROC"),
    "<u>OPX</u>": ("<u>", "OPX"),
    "<b>ARG</b>": ("<b>", "ARG"),
}
"""Markup in the hostile names: its opening tag and the word inside it."""


def unsafe_chars(text: str) -> list[str]:
    """The characters of ``text`` that must never reach a terminal or a Qt text (as repr)."""
    bad = [
        c
        for c in text
        if (ord(c) < 0x20 and c not in "\n\t")
        or 0x7F <= ord(c) <= 0x9F
        or c in _BIDI_AND_BREAKS
        or 0xD800 <= ord(c) <= 0xDFFF
    ]
    return [repr(c) for c in bad]


def unsafe_bytes(data: bytes) -> list[int]:
    """The bytes below 0x20 (but newline and tab) and DEL in ``data``; plus, decoded as UTF-8,
    C1 and bidirectional controls (as code points)."""
    bad = [b for b in data if (b < 0x20 and b not in b"\n\t") or b == 0x7F]
    text = data.decode("utf-8", errors="replace")
    return bad + [ord(c) for c in text if 0x80 <= ord(c) <= 0x9F or c in _BIDI_AND_BREAKS]


def markup_rendered(visible: str) -> list[str]:
    """Words of :data:`MARKUP` that ``visible`` (the text a reader sees) shows without their
    tag: the tag was read as markup instead of shown."""
    return [
        word for tag, word in MARKUP.values() if visible.count(word) != visible.count(tag + word)
    ]
