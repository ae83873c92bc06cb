"""Typed parameter declarations of workloads, and parsing of ``-p name=value`` text.

Torch-free: the app builds its forms from these declarations at start-up, and the CLI its
``-p`` options. A user file's parameters are read from its source with :mod:`ast`, without
running it (:func:`params_from_source`).

A :class:`Param` has a ``kind``:

========== ======================== ==================================================
kind       Python value             ``-p`` text
========== ======================== ==================================================
``int``    int                      ``n=2000``, ``n=100_000``, ``n=1e5`` (if integral)
``float``  float                    ``lr=0.01``
``bool``   bool                     ``pinned=true`` / ``false`` / ``1`` / ``0`` / yes / no
``str``    str                      ``name=abc``
``choice`` str, one of ``choices``  ``dtype=bf16``
``ints``   list of int              ``sizes=1,2,3`` or ``sizes=[1, 2, 3]``
========== ======================== ==================================================

``minimum``/``maximum`` bound ints and floats (and every element of ``ints``; ``min_len`` and
``max_len`` bound its length). Every error is a :class:`gpuviz.errors.BadInputError` whose
message names the parameter and its allowed values, e.g.
``-p n=0: n must be an int from 1 to 10000000``.

Examples
--------
>>> n = Param("n", "int", 1000, "elements", minimum=1)
>>> parse_params([n], ["n=5000"])
{'n': 5000}
>>> parse_params([n], [])
{'n': 1000}
"""

from __future__ import annotations

import ast
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gpuviz.errors import BadInputError

ParamKind = Literal["int", "float", "bool", "str", "choice", "ints"]
KINDS: tuple[str, ...] = ("int", "float", "bool", "str", "choice", "ints")

_TRUE = {"1", "true", "yes", "on", "y", "t"}
_FALSE = {"0", "false", "no", "off", "n", "f"}


@dataclass(frozen=True)
class Param:
    """One declared, typed parameter of a workload.

    Parameters
    ----------
    name : str
        The keyword the workload receives (a Python identifier).
    kind : {"int", "float", "bool", "str", "choice", "ints"}
        Its type; ``ints`` is a list of ints.
    default : object
        The value used when the user gives none. It must itself be allowed.
    help : str
        One line for forms and ``gpuviz workloads``.
    minimum, maximum : float, optional
        Inclusive bounds for ``int``/``float``, and for each element of ``ints``.
    choices : tuple of str
        The allowed values of a ``choice``.
    min_len, max_len : int, optional
        Bounds on the length of an ``ints`` list.
    """

    name: str
    kind: ParamKind
    default: Any
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    min_len: int | None = None
    max_len: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"parameter {self.name}: unknown kind {self.kind!r}")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"parameter {self.name}: a choice needs choices")
        if self.kind == "ints" and isinstance(self.default, tuple):
            object.__setattr__(self, "default", list(self.default))
        self.validate(self.default)  # a declaration's own default must be allowed

    # -- describing ------------------------------------------------------------------------
    def allowed(self) -> str:
        """What values are allowed, in words (used in every error message)."""
        lo, hi = self.minimum, self.maximum
        rng = ""
        if lo is not None and hi is not None:
            rng = f" from {_num(lo)} to {_num(hi)}"
        elif lo is not None:
            rng = f" >= {_num(lo)}"
        elif hi is not None:
            rng = f" <= {_num(hi)}"
        if self.kind == "int":
            return f"an int{rng}"
        if self.kind == "float":
            return f"a number{rng}"
        if self.kind == "bool":
            return "true or false"
        if self.kind == "str":
            return "any text"
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        length = ""
        if self.min_len is not None and self.max_len is not None:
            length = f" ({self.min_len} to {self.max_len} of them)"
        elif self.min_len is not None:
            length = f" (at least {self.min_len})"
        elif self.max_len is not None:
            length = f" (at most {self.max_len})"
        return f"a comma-separated list of ints{rng}{length}, e.g. 1,2,3"

    def to_json(self) -> dict[str, Any]:
        """A plain-JSON description (``gpuviz workloads --json``, the app's forms)."""
        out: dict[str, Any] = {"name": self.name, "type": self.kind, "default": self.default}
        if self.help:
            out["help"] = self.help
        if self.minimum is not None:
            out["min"] = self.minimum
        if self.maximum is not None:
            out["max"] = self.maximum
        if self.choices:
            out["choices"] = list(self.choices)
        if self.min_len is not None:
            out["min_len"] = self.min_len
        if self.max_len is not None:
            out["max_len"] = self.max_len
        out["allowed"] = self.allowed()
        return out

    # -- checking ----------------------------------------------------------------------------
    def _bad(self, shown: Any) -> BadInputError:
        return BadInputError(f"-p {self.name}={shown}: {self.name} must be {self.allowed()}")

    def validate(self, value: Any) -> Any:
        """Return ``value`` checked (and normalized: int -> float for floats, tuple -> list).

        Raises
        ------
        BadInputError
            When the value is of the wrong type or out of bounds.
        """
        k = self.kind
        if k == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise self._bad(value)
            self._check_bounds(value, value)
            return value
        if k == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self._bad(value)
            if not math.isfinite(value):
                raise self._bad(value)
            self._check_bounds(value, value)
            return float(value)
        if k == "bool":
            if not isinstance(value, bool):
                raise self._bad(value)
            return value
        if k == "str":
            if not isinstance(value, str):
                raise self._bad(value)
            return value
        if k == "choice":
            if value not in self.choices:
                raise self._bad(value)
            return value
        # ints
        if not isinstance(value, (list, tuple)) or any(
            isinstance(v, bool) or not isinstance(v, int) for v in value
        ):
            raise self._bad(value)
        shown = ",".join(str(v) for v in value)
        if self.min_len is not None and len(value) < self.min_len:
            raise self._bad(shown)
        if self.max_len is not None and len(value) > self.max_len:
            raise self._bad(shown)
        for v in value:
            self._check_bounds(v, shown)
        return list(value)

    def _check_bounds(self, value: float, shown: Any) -> None:
        if self.minimum is not None and value < self.minimum:
            raise self._bad(shown)
        if self.maximum is not None and value > self.maximum:
            raise self._bad(shown)

    def parse(self, text: str) -> Any:
        """The value of ``-p name=text``, checked.

        Raises
        ------
        BadInputError
            Naming the parameter and its allowed values.
        """
        t = text.strip()
        k = self.kind
        try:
            if k == "int":
                return self.validate(_parse_int(t))
            if k == "float":
                return self.validate(float(t.replace("_", "")))
            if k == "bool":
                low = t.lower()
                if low in _TRUE:
                    return True
                if low in _FALSE:
                    return False
                raise ValueError(t)
            if k in ("str", "choice"):
                return self.validate(text)
            inner = t[1:-1] if t.startswith("[") and t.endswith("]") else t
            items = [s.strip() for s in inner.split(",")] if inner.strip() else []
            return self.validate([_parse_int(s) for s in items])
        except (ValueError, OverflowError):
            raise self._bad(text) from None


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else repr(v)


def _parse_int(t: str) -> int:
    t = t.replace("_", "")
    try:
        return int(t)
    except ValueError:
        f = float(t)  # "1e5" -> 100000, "2.5" -> refused below
        if not f.is_integer():
            raise
        return int(f)


def parse_params(
    declared: Sequence[Param], assignments: Iterable[str], *, workload: str = ""
) -> dict[str, Any]:
    """Every declared parameter's value from ``-p name=value`` texts, defaults filled in.

    Raises
    ------
    BadInputError
        For text without ``=``, an unknown name (the message lists the known ones), a value of
        the wrong type or out of bounds, or the same name given twice.
    """
    by_name = {p.name: p for p in declared}
    values: dict[str, Any] = {p.name: _copy(p.default) for p in declared}
    seen: set[str] = set()
    where = f" of {workload}" if workload else ""
    for text in assignments:
        name, sep, value = text.partition("=")
        name = name.strip()
        if not sep or not name:
            raise BadInputError(f"-p {text}: expected name=value")
        p = by_name.get(name)
        if p is None:
            known = ", ".join(by_name) or "none"
            raise BadInputError(f"-p {text}: no parameter {name!r}{where} (parameters: {known})")
        if name in seen:
            raise BadInputError(f"-p {text}: {name} is given twice")
        seen.add(name)
        values[name] = p.parse(value)
    return values


def check_params(
    declared: Sequence[Param], given: Mapping[str, Any], *, workload: str = ""
) -> dict[str, Any]:
    """Like :func:`parse_params` for typed values (the app's forms): defaults filled in."""
    by_name = {p.name: p for p in declared}
    where = f" of {workload}" if workload else ""
    values: dict[str, Any] = {p.name: _copy(p.default) for p in declared}
    for name, value in given.items():
        p = by_name.get(name)
        if p is None:
            known = ", ".join(by_name) or "none"
            raise BadInputError(f"-p {name}: no parameter {name!r}{where} (parameters: {known})")
        values[name] = p.validate(value)
    return values


def _copy(v: Any) -> Any:
    return list(v) if isinstance(v, list) else v


# -- user files -------------------------------------------------------------------------------

_ANNOTATION_KINDS = {"int": "int", "float": "float", "bool": "bool", "str": "str"}


def parse_source(path: str | os.PathLike[str]) -> ast.Module:
    """The parsed source of a user file, never run.

    Raises
    ------
    BadInputError
        When the file is missing, unreadable or has a syntax error (with the line).
    """
    p = Path(path)
    if not p.is_file():
        raise BadInputError(f"{path}: no such file")
    try:
        source = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: cannot read it ({exc})") from None
    try:
        return ast.parse(source, filename=str(p))
    except SyntaxError as exc:
        raise BadInputError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    except (RecursionError, MemoryError):  # how Python's parser says "nested too deeply"
        raise BadInputError(f"{path}: nested too deeply for Python's parser") from None


def find_function(tree: ast.Module, func: str, path: str | os.PathLike[str]) -> ast.FunctionDef:
    """The top-level ``def func`` of a parsed file, or a BadInputError naming what is there."""
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for node in defs:
        if node.name == func:
            if isinstance(node, ast.AsyncFunctionDef):
                raise BadInputError(f"{path}: {func} is async; a workload is a plain function")
            return node
    names = ", ".join(n.name for n in defs) or "none"
    raise BadInputError(f"{path}: no function {func!r} (functions: {names})")


def params_from_function(node: ast.FunctionDef, path: str | os.PathLike[str] = "") -> list[Param]:
    """The declared parameters of ``def func(device, name: int = 3, ...)``.

    The first positional parameter is the device and is not declared. Each other parameter with
    an annotation of ``int``, ``float``, ``bool`` or ``str`` and a literal default becomes a
    :class:`Param`; a ``list[int]`` annotation with a list default becomes ``ints``. Others are
    left to the function's own default.
    """
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    if not positional:
        raise BadInputError(
            f"{path}: {node.name} must take the device as its first parameter: "
            f"def {node.name}(device, ...)"
        )
    pos_defaults = dict(
        zip([a.arg for a in positional][len(positional) - len(args.defaults) :], args.defaults)
    )
    kw_defaults = {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    out: list[Param] = []
    for a in [*positional[1:], *args.kwonlyargs]:
        default_node = pos_defaults.get(a.arg, kw_defaults.get(a.arg))
        if a.annotation is None or default_node is None:
            continue
        try:
            default = ast.literal_eval(default_node)
        except (ValueError, RecursionError):  # not a literal, or one nested too deeply
            continue
        ann = ast.unparse(a.annotation).replace(" ", "")
        kind = _ANNOTATION_KINDS.get(ann)
        if kind is None and ann in ("list[int]", "List[int]", "Sequence[int]", "tuple[int,...]"):
            kind = "ints"
        if kind is None:
            continue
        if kind == "float" and isinstance(default, int) and not isinstance(default, bool):
            default = float(default)
        try:
            out.append(Param(a.arg, kind, default, f"{ann} parameter of {node.name}"))  # type: ignore[arg-type]
        except (BadInputError, ValueError):
            raise BadInputError(
                f"{path}: {node.name}: the default of {a.arg} ({default!r}) is not a {ann}"
            ) from None
    return out


def params_from_source(path: str | os.PathLike[str], func: str) -> list[Param]:
    """A user file's parameters, read from its source with ``ast`` (the file is not run).

    Raises
    ------
    BadInputError
        For a missing file, a syntax error, or a missing function (each says which).
    """
    tree = parse_source(path)
    return params_from_function(find_function(tree, func, path), path)


def docstring_from_source(path: str | os.PathLike[str], func: str) -> str:
    """The first line of ``func``'s docstring in a user file ('' if it has none)."""
    node = find_function(parse_source(path), func, path)
    doc = ast.get_docstring(node) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


__all__ = [
    "KINDS",
    "Param",
    "ParamKind",
    "check_params",
    "docstring_from_source",
    "find_function",
    "params_from_function",
    "params_from_source",
    "parse_params",
    "parse_source",
]
