"""The argument parser's own errors: one line naming the command and its help, exit code 2."""

from __future__ import annotations

import pytest

from gpuviz.cli import build_parser, main


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
