"""Typed parameter declarations, ``-p`` parsing, and reading a user file's parameters with ast."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuviz.errors import BadInputError
from gpuviz.workloads.params import Param, check_params, params_from_source, parse_params

DECL = [
    Param("n", "int", 10, "elements", minimum=1, maximum=1000),
    Param("lr", "float", 0.5, "rate", minimum=0.0),
    Param("pinned", "bool", True, "pin"),
    Param("name", "str", "x", "a name"),
    Param("dtype", "choice", "float32", "type", choices=("float32", "bfloat16")),
    Param("sizes", "ints", [1, 2], "sizes", minimum=1, min_len=1, max_len=4),
]


def test_defaults_fill_in() -> None:
    assert parse_params(DECL, []) == {
        "n": 10,
        "lr": 0.5,
        "pinned": True,
        "name": "x",
        "dtype": "float32",
        "sizes": [1, 2],
    }


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("n=5", "n", 5),
        ("n=1_000", "n", 1000),
        ("n=1e3", "n", 1000),
        ("lr=0.25", "lr", 0.25),
        ("lr=3", "lr", 3.0),
        ("pinned=false", "pinned", False),
        ("pinned=0", "pinned", False),
        ("pinned=Yes", "pinned", True),
        ("name=a=b", "name", "a=b"),
        ("dtype=bfloat16", "dtype", "bfloat16"),
        ("sizes=3,4,5", "sizes", [3, 4, 5]),
        ("sizes=[7, 8]", "sizes", [7, 8]),
    ],
)
def test_parse_each_kind(text: str, key: str, value: object) -> None:
    got = parse_params(DECL, [text])[key]
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    ("text", "must_say"),
    [
        ("n=0", ["n", "an int from 1 to 1000"]),
        ("n=1001", ["n", "from 1 to 1000"]),
        ("n=2.5", ["n", "an int"]),
        ("n=abc", ["n", "an int"]),
        ("lr=-1", ["lr", ">= 0"]),
        ("lr=nan", ["lr", "a number"]),
        ("pinned=maybe", ["pinned", "true or false"]),
        ("dtype=fp8", ["dtype", "one of float32, bfloat16"]),
        ("sizes=", ["sizes", "(1 to 4 of them)"]),
        ("sizes=1,2,3,4,5", ["sizes", "1 to 4"]),
        ("sizes=1,x", ["sizes", "list of ints"]),
        ("sizes=0", ["sizes", ">= 1"]),
        ("nope=3", ["no parameter 'nope'", "n, lr, pinned, name, dtype, sizes"]),
        ("n", ["expected name=value"]),
    ],
)
def test_bad_values_name_the_parameter_and_what_is_allowed(text: str, must_say: list[str]) -> None:
    with pytest.raises(BadInputError) as info:
        parse_params(DECL, [text], workload="w")
    for s in must_say:
        assert s in str(info.value)


def test_twice_is_an_error() -> None:
    with pytest.raises(BadInputError, match="twice"):
        parse_params(DECL, ["n=2", "n=3"])


def test_check_params_typed_values() -> None:
    assert check_params(DECL, {"n": 7, "lr": 1})["lr"] == 1.0
    with pytest.raises(BadInputError, match="n must be"):
        check_params(DECL, {"n": True})
    with pytest.raises(BadInputError, match="no parameter"):
        check_params(DECL, {"zzz": 1})


def test_a_declaration_with_a_bad_default_is_refused() -> None:
    with pytest.raises(BadInputError):
        Param("n", "int", 0, minimum=1)
    with pytest.raises(ValueError, match="choices"):
        Param("c", "choice", "a")


def test_to_json() -> None:
    j = DECL[4].to_json()
    assert (
        j["type"] == "choice"
        and j["choices"] == ["float32", "bfloat16"]
        and j["default"] == "float32"
    )
    assert DECL[0].to_json()["min"] == 1 and DECL[0].to_json()["max"] == 1000


USER = '''
import this_module_does_not_exist  # the file is never run, so this import never happens
open("MARKER", "w").write("ran")

def square_loop(device, n: int = 1000, scale: float = 2, pinned: bool = False, label: str = "a",
                sizes: list[int] = [1, 2], untyped=3, *, k: int = 4):
    """Square a vector in a loop.

    More text.
    """

def other(x):
    pass
'''


def test_params_from_source_reads_without_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    f = tmp_path / "user.py"
    f.write_text(USER)
    params = params_from_source(f, "square_loop")
    assert [(p.name, p.kind, p.default) for p in params] == [
        ("n", "int", 1000),
        ("scale", "float", 2.0),
        ("pinned", "bool", False),
        ("label", "str", "a"),
        ("sizes", "ints", [1, 2]),
        ("k", "int", 4),
    ]
    assert not (tmp_path / "MARKER").exists()


@pytest.mark.parametrize(
    ("content", "func", "message"),
    [
        (None, "f", "no such file"),
        ("def f(device):\n    return (\n", "f", "syntax error"),
        ("def g(device):\n    pass\n", "f", "no function 'f' (functions: g)"),
        ("def f():\n    pass\n", "f", "must take the device"),
        ("def f(device, n: int = 'x'):\n    pass\n", "f", "default of n"),
        # Python's parser gives up on these with MemoryError or RecursionError, not SyntaxError.
        ("def f(device, n: int = " + "-" * 100_000 + "1):\n    pass\n", "f", "nested too deeply"),
        ("def f(device):\n    x = " + "not " * 100_000 + "1\n", "f", "nested too deeply"),
    ],
)
def test_bad_user_files(tmp_path: Path, content: str | None, func: str, message: str) -> None:
    f = tmp_path / "bad.py"
    if content is not None:
        f.write_text(content)
    with pytest.raises(BadInputError) as info:
        params_from_source(f, func)
    assert message in str(info.value)
    assert "bad.py" in str(info.value)
