"""Whether a file found on this machine is the one a trace recorded: the function at the line.

Kineto names each Python frame ``path(line): function``. The file gpuviz finds for ``path`` (see
:func:`~gpuviz.gui.views.ops.breakdown_model.find_source`) may be another version of it (another
release of a library, an edited checkout): then the recorded line holds other code, and
highlighting it would point at the wrong thing. The recorded function must be defined at that
line (its ``def`` line or a decorator's: the line a frame records when its call starts) or hold
it (a frame that was already running when recording began records its current line). No Qt.
"""

from __future__ import annotations

import ast

_ANONYMOUS = {
    "<lambda>": ast.Lambda,
    "<genexpr>": ast.GeneratorExp,
    "<listcomp>": ast.ListComp,
    "<setcomp>": ast.SetComp,
    "<dictcomp>": ast.DictComp,
}


def line_mismatch(text: str, line: int, function: str) -> str:
    """Why ``line`` of ``text`` is not in ``function`` as recorded; "" where it is, or where
    it cannot be told (no function recorded, a file Python cannot parse).

    Parameters
    ----------
    text : str
        The whole file found on this machine.
    line : int
        The recorded line (1-based).
    function : str
        The recorded function name (``forward``, ``<module>``, ``<lambda>``...).

    Returns
    -------
    str
        One sentence, or "".
    """
    if not function or function == "<module>":
        return ""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    anonymous = _ANONYMOUS.get(function)
    enclosing: list[str] = []
    for node in ast.walk(tree):
        start = getattr(node, "lineno", None)
        end = getattr(node, "end_lineno", None)
        if start is None or end is None:
            continue
        if anonymous is not None:
            # Python 3.12 inlines comprehensions but still records them as frames on 3.11-.
            if isinstance(node, anonymous) and start <= line <= end:
                return ""
            continue
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        first = min([start, *(d.lineno for d in node.decorator_list)])
        if first <= line <= end:
            if node.name == function:
                return ""
            enclosing.append(node.name)
    if anonymous is not None:
        return (
            f"line {line} of the file found here holds no {function}, as the trace recorded: "
            "it is not the file that was recorded (another version?)"
        )
    where = f"in {enclosing[-1]}()" if enclosing else "outside any function"
    return (
        f"line {line} of the file found here is {where}, not in {function}() as the trace "
        "recorded: it is not the file that was recorded (another version?)"
    )
