"""The argument parser: its errors (one line naming the command, exit 2), ``gpuviz PATH``, --size."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuviz.cli import build_parser, main, open_path_argv
from gpuviz.cli.options import MAX_PIXELS, MAX_SIDE


@pytest.mark.parametrize(
    ("argv", "command", "what"),
    [
        (["foo"], "gpuviz", "invalid choice: 'foo'"),
        (["--bogus"], "gpuviz", "unrecognized arguments: --bogus"),
        (["run"], "gpuviz run", "the following arguments are required"),
        (["run", "loops", "--steps", "x"], "gpuviz run", "invalid int value: 'x'"),
        (["summary", "t.json", "--bad"], "gpuviz summary", "unrecognized arguments: --bad"),
        (["export", "t.json"], "gpuviz export", "one of the arguments -o --per-rank is required"),
        (["split", "--batch", "3"], "gpuviz split", "required: --gpus"),
        (["open", "t.json", "--view", "x"], "gpuviz open", "invalid choice: 'x'"),
    ],
)
def test_a_usage_error_names_the_command_once(
    argv: list[str], command: str, what: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"{command}: ") and what in err
    assert err.rstrip().endswith(f"(see {command} --help)")
    assert "gpuviz gpuviz" not in err


def test_an_unknown_option_is_blamed_on_its_command(capsys: pytest.CaptureFixture[str]) -> None:
    commands = build_parser().commands
    assert {"open", "run", "summary", "export"} <= set(commands)
    for name in commands:
        with pytest.raises(SystemExit):
            main([name, "--no-such-option"])
        err = capsys.readouterr().err
        assert err.startswith(f"gpuviz {name}: "), err
        assert "unrecognized arguments: --no-such-option" in err or "required" in err


# -- gpuviz PATH: a path as the first word opens it ------------------------------------------


@pytest.mark.parametrize(
    ("argv", "traces"),
    [
        (["FILE"], ["FILE"]),
        (["DIR"], ["DIR"]),
        (["FILE", "DIR", "--view", "timeline"], ["FILE", "DIR"]),
        (["not-yet.json.gz"], ["not-yet.json.gz"]),  # named like a trace: open says it is missing
        (["t.json"], ["t.json"]),
        (["snap.pickle"], ["snap.pickle"]),
        (["SNAP.PICKLE.GZ"], ["SNAP.PICKLE.GZ"]),
    ],
)
def test_a_path_as_the_first_word_is_gpuviz_open(
    argv: list[str], traces: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "FILE").write_text("{}")  # any existing file, whatever its name
    (tmp_path / "DIR").mkdir()
    parser = build_parser()
    words = open_path_argv(argv, parser.commands)  # type: ignore[attr-defined]
    assert words == ["open", *argv]
    args = parser.parse_args(words)
    assert args.command == "open" and args.traces == traces
    assert args.view == ("timeline" if "--view" in argv else "insights")


def test_a_command_is_never_taken_for_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "summary").mkdir()  # a folder named like a command
    commands = build_parser().commands  # type: ignore[attr-defined]
    assert open_path_argv(["summary", "t.json"], commands) == ["summary", "t.json"]
    assert open_path_argv(["--version"], commands) == ["--version"]
    assert open_path_argv([], commands) == []


@pytest.mark.parametrize("word", ["foo", "trace.txt", "summry"])
def test_an_unknown_word_that_is_not_a_path_is_still_argparses_error(
    word: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main([word])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"invalid choice: '{word}'" in err


def test_a_missing_trace_as_the_first_word_is_open_s_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # open refuses it before Qt is imported
    assert main(["gone.json.gz"]) == 2
    err = capsys.readouterr().err
    assert err == "gpuviz open: gone.json.gz: no such file or folder\n"


# -- --size: bounded ---------------------------------------------------------------------------


@pytest.mark.parametrize("size", ["100000x100000", "16385x100", "100x16385", "10000x10000"])
@pytest.mark.parametrize("command", [["open", "t.json"], ["run", "loops", "--gui"]])
def test_a_screenshot_size_past_the_limits_is_one_line_exit_2(
    size: str, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main([*command, "--screenshot", "x.png", "--size", size])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--size '{size}': at most {MAX_SIDE} pixels a side" in err


@pytest.mark.parametrize("size", ["16384x4096", "8192x8192", "1x1", "1600x900"])
def test_sizes_within_the_limits_parse(size: str) -> None:
    args = build_parser().parse_args(["open", "t.json", "--size", size])
    w, h = (int(v) for v in size.split("x"))
    assert args.size == (w, h) and w * h <= MAX_PIXELS


@pytest.mark.parametrize("exists", [True, False])
def test_a_script_as_the_first_word_says_how_to_profile_it(
    exists: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # `gpuviz train.py` is not a trace to open ("not JSON"): one line says what runs it.
    monkeypatch.chdir(tmp_path)
    if exists:
        (tmp_path / "train.py").write_text("print('never run')\n")
    assert main(["train.py", "--lr", "3"]) == 2
    err = capsys.readouterr().err
    assert err == "gpuviz: train.py: a Python script; to profile it: gpuviz profile train.py\n"


def test_file_reading_commands_run_with_one_openblas_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # numpy's import starts an OpenBLAS thread a core; the commands that read files need none.
    import sys

    from gpuviz.cli import blas_threads

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delitem(sys.modules, "numpy", raising=False)  # not imported yet, as in a process
    assert blas_threads("summary") == "1" and blas_threads("advise") == "1"
    for runs_code in ("profile", "run", "app", "open", "mcp"):  # the user's code, or it starts it
        assert blas_threads(runs_code) is None, runs_code
    monkeypatch.setenv("OMP_NUM_THREADS", "4")  # the user's choice stays
    assert blas_threads("summary") is None


def test_a_summary_process_imports_numpy_with_one_openblas_thread(data_dir: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    trace = data_dir / "dataparallel_seed_2gpu.json.gz"
    probe = (
        "import os, sys, gpuviz.cli as c\n"
        "import gpuviz.commands.summary as s\n"
        "real = s.main\n"
        "def main(args):\n"
        "    print('BLAS=' + os.environ.get('OPENBLAS_NUM_THREADS', '-'), file=sys.stderr)\n"
        "    return real(args)\n"
        "s.main = main\n"
        "sys.exit(c.main(sys.argv[1:]))\n"
    )
    unset = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    r = subprocess.run(
        [sys.executable, "-c", probe, "summary", str(trace), "--json", "--no-cache"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "BLAS=1" in r.stderr and json.loads(r.stdout)["top_kernels"]
