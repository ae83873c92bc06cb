"""gpuviz.display: what each helper escapes, and what it leaves alone (issue 16)."""

from __future__ import annotations

import html
import io
import json

import pytest
from evil_names import ALL_EVIL, unsafe_chars

from gpuviz.display import (
    echo,
    echo_traceback,
    html_safe,
    json_text,
    menu_safe,
    terminal_safe,
    title_safe,
    tooltip_html,
)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[31mRED", "\\x1b[31mRED"),
        ("\x1b]52;c;QQ==\x07", "\\x1b]52;c;QQ==\\x07"),
        ("a\x00b", "a\\x00b"),
        ("a\rb", "a\\x0db"),  # a carriage return overwrites the line
        ("del\x7f", "del\\x7f"),
        ("c1\x9b", "c1\\x9b"),
        ("nel\x85", "nel\\x85"),
        ("rlo\u202ecba", "rlo\\u202ecba"),
        ("iso\u2066x\u2069", "iso\\u2066x\\u2069"),
        ("lrm\u200e", "lrm\\u200e"),
        ("ls\u2028ps\u2029", "ls\\u2028ps\\u2029"),
        ("bad\udcff", "bad\\xff"),  # an undecodable byte of a file name: the byte
        ("lone\ud800", "lone\\ud800"),
    ],
)
def test_terminal_safe_escapes_each_kind_of_control(raw: str, shown: str) -> None:
    assert terminal_safe(raw) == shown
    assert not unsafe_chars(terminal_safe(raw))
    shown.encode("utf-8")  # printable: no surrogate left to break an encoder


def test_terminal_safe_keeps_printable_text_newlines_and_tabs() -> None:
    text = "ampere_sgemm_128x64<float, true>(…) — 名前 é ß 🙂\n\tnext line"
    assert terminal_safe(text) == text
    assert terminal_safe(text, one_line=True) == text.replace("\n", "\\x0a").replace("\t", "\\x09")


def test_terminal_safe_is_idempotent_and_leaves_nothing_unsafe() -> None:
    for name in ALL_EVIL:
        once = terminal_safe(name)
        assert terminal_safe(once) == once
        assert not unsafe_chars(once)
        assert not unsafe_chars(terminal_safe(name, one_line=True).replace("\n", "X"))
        assert "\n" not in terminal_safe(name, one_line=True)


def test_html_safe_escapes_markup_after_controls() -> None:
    assert html_safe("<b>x</b> & \x1b") == "&lt;b&gt;x&lt;/b&gt; &amp; \\x1b"
    assert html.unescape(html_safe("<a href='x'>")) == "<a href='x'>"


def test_tooltip_html_is_marked_rich_and_reads_back_as_the_text() -> None:
    tip = tooltip_html("a & b\n<b>c</b>\t\x1b")
    assert tip.startswith("<qt ") and tip.endswith("</qt>")  # Qt never has to guess
    assert "white-space:pre-wrap" in tip  # newlines and tabs kept
    body = tip[tip.index(">") + 1 : -len("</qt>")]
    assert html.unescape(body) == "a & b\n<b>c</b>\t\\x1b"


def test_menu_and_title_keep_mnemonics_and_title_marks_literal() -> None:
    assert menu_safe("a&b\x1b\n") == "a&&b\\x1b\\x0a"
    assert title_safe("x [*] y\x07") == "x [*][*] y\\x07"


def test_echo_writes_escaped_text_to_the_stream_it_is_given() -> None:
    out = io.StringIO()
    echo("name: \x1b]0;t\x07\nnext", file=out)
    assert out.getvalue() == "name: \\x1b]0;t\\x07\nnext\n"
    out = io.StringIO()
    echo("no newline", file=out, end="")
    assert out.getvalue() == "no newline"


def test_echo_traceback_escapes_the_exception_message() -> None:
    out = io.StringIO()
    try:
        raise KeyError("kernel\x1b[31m")
    except KeyError:
        echo_traceback(out)
    text = out.getvalue()
    assert "Traceback" in text and "kernel\\x1b[31m" in text
    assert not unsafe_chars(text)


def test_json_text_is_exact_and_printable_ascii() -> None:
    obj = {"names": [*ALL_EVIL, "bad\udcff"], "n": 1}
    text = json_text(obj, indent=1)
    assert all(0x20 <= ord(c) < 0x7F or c == "\n" for c in text), text
    assert json.loads(text) == obj  # exact: only JSON's own escapes
    assert "\\u001b" in text and "\\u007f" in text and "\\u009b" in text and "\\u202e" in text


def test_json_text_forces_ascii() -> None:
    assert json_text("\u202e", ensure_ascii=False) == '"\\u202e"'
