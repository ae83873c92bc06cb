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


def _steps(capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    steps = json.loads(capsys.readouterr().out)["mfu"]["steps"]
    assert isinstance(steps, list)
    return steps


def test_summary_counts_generated_kernels_with_compile_info(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # By hand: two 64³ GEMMs and two gelu kernels of one 64 x 64 mul each; all four kernels'
    # time known with the folder, the GEMMs' only without it.
    trace = _trace(tmp_path)
    d = case.DUR
    assert main(["summary", str(trace), "--json"]) == 0
    (bare,) = _steps(capsys)
    assert bare["flops"] == 2 * case.MM_FLOPS
    assert bare["flops_coverage"] == round((d["mm0"] + d["mm1"]) / sum(d.values()), 4)
    info = case.write_compile_info(tmp_path / "elsewhere")
    assert main(["summary", str(trace), "--json", "--compile-info", str(info)]) == 0
    (step,) = _steps(capsys)
    assert step["flops"] == 2 * (case.MM_FLOPS + case.GELU_FLOPS)
    assert step["flops_coverage"] == 1.0


def test_summary_finds_the_sibling_folder_after_a_cached_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # summary keeps its output in the import cache: a folder added beside the trace later is
    # another output, not the one kept.
    trace = _trace(tmp_path)
    assert main(["summary", str(trace), "--json"]) == 0
    assert _steps(capsys)[0]["flops"] == 2 * case.MM_FLOPS
    case.write_compile_info(tmp_path / "run.compile")
    assert main(["summary", str(trace), "--json"]) == 0
    assert _steps(capsys)[0]["flops"] == 2 * (case.MM_FLOPS + case.GELU_FLOPS)


def test_summary_and_open_refuse_a_bad_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = _trace(tmp_path)
    for bad in (tmp_path / "missing", tmp_path):
        for cmd in (["summary", str(trace)], ["open", str(trace), "--screenshot", "x.png"]):
            assert main([*cmd, "--compile-info", str(bad)]) == 2, cmd
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and "--compile-info" in err[0] and "Traceback" not in err[0]
    # One folder is one run's: with two traces it is refused, not applied to both.
    info = case.write_compile_info(tmp_path / "ci")
    assert main(["open", str(trace), str(trace), "--compile-info", str(info)]) == 2
    assert "one TRACE" in capsys.readouterr().err


def test_open_passes_the_folder_to_the_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gpuviz.gui.app as app

    got: dict[str, object] = {}

    def fake_run_app(paths: list[str], **kw: object) -> int:
        got.update(kw, paths=paths)
        return 0

    monkeypatch.setattr(app, "run_app", fake_run_app)
    trace = _trace(tmp_path)
    info = case.write_compile_info(tmp_path / "ci")
    assert main(["open", str(trace), "--compile-info", str(info)]) == 0
    assert got["paths"] == [str(trace)] and got["compile_info"] == str(info)
    assert main(["open", str(trace)]) == 0
    assert got["compile_info"] is None


def test_summary_keys_its_output_on_the_folder_gpuviz_reads(tmp_path: Path) -> None:
    from gpuviz.analysis.inductor_provenance import sibling_path
    from gpuviz.commands.summary import _compile_info_key

    for i, name in enumerate(("run.json.gz", "run.json", "ranks")):
        (tmp_path / str(i)).mkdir()
        folder = sibling_path(tmp_path / str(i) / name)
        folder.mkdir()
        got = _compile_info_key(tmp_path / str(i) / name, None)
        assert got is not None and got[0] == str(folder.resolve()), name
