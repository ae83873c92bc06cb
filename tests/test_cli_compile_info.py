"""``--compile-info DIR`` on breakdown and advise, and the ``NAME.compile/`` folder found
beside a trace (issue 49): the CLI's side of compiled-code attribution."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpuviz.cli import main
from tests.analysis import compiled_case as case

TOP = "OptimizedModule_0.Tiny_0"


def _trace(tmp_path: Path) -> Path:
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": case.events()}))
    return path


def _modules(capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, object]]:
    return {r["key"]: r for r in json.loads(capsys.readouterr().out)["rows"]}


def test_compile_info_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _trace(tmp_path)
    info = case.write_compile_info(tmp_path / "elsewhere")
    args = ["breakdown", str(trace), "--by", "module", "--json", "--top", "0"]
    assert main([*args, "--compile-info", str(info)]) == 0
    rows = _modules(capsys)
    assert rows[f"{TOP}.Block_0"]["device_total_us"] == case.DUR["gelu0"] + case.DUR["mm0"]
    assert main(args) == 0  # without it: the compiled module holds everything
    assert f"{TOP}.Block_0" not in _modules(capsys)


def test_sibling_folder_is_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _trace(tmp_path)
    case.write_compile_info(tmp_path / "run.compile")
    assert main(["breakdown", str(trace), "--by", "module", "--json", "--top", "0"]) == 0
    rows = _modules(capsys)
    assert rows[f"{TOP}.Block_1"]["device_total_us"] == case.DUR["gelu1"] + case.DUR["mm1"]
    # Text output says nothing false about host time it does not know.
    assert main(["breakdown", str(trace), "--by", "module"]) == 0
    assert f"{TOP}.Block_1" in capsys.readouterr().out


def test_bad_compile_info_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _trace(tmp_path)
    for bad in (tmp_path / "missing", tmp_path):
        assert main(["breakdown", str(trace), "--compile-info", str(bad)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--compile-info" in err[0] and "Traceback" not in err[0]


def test_bad_sibling_folder_only_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _trace(tmp_path)
    (tmp_path / "run.compile").mkdir()
    assert main(["breakdown", str(trace), "--json"]) == 0
    assert "no compiled graph" in capsys.readouterr().err


def test_advise_takes_compile_info(tmp_path: Path) -> None:
    trace = _trace(tmp_path)
    info = case.write_compile_info(tmp_path / "ci")
    assert main(["advise", str(trace), "--compile-info", str(info), "--json"]) == 0
    shutil.rmtree(info)
    assert main(["advise", str(trace), "--compile-info", str(info)]) == 2


def test_text_says_how_compiled_kernels_were_placed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = _trace(tmp_path)
    assert main(["breakdown", str(trace), "--by", "kernel"]) == 0
    assert "by kernel names only" in capsys.readouterr().out
    case.write_compile_info(tmp_path / "run.compile")
    assert main(["breakdown", str(trace), "--by", "op"]) == 0
    assert "from the run's compile-info folder" in capsys.readouterr().out
