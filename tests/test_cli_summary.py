"""``gpuviz summary`` (and ``gpuviz export``'s errors): output shape, text form, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuviz.cli import main

DATA = Path(__file__).parent / "data"
TOP_KEYS = {
    "sources",
    "events",
    "warnings",
    "span_us",
    "ranks",
    "streams",
    "devices",
    "top_kernels",
    "memory",
    "overlap",
    "mfu",  # issue 24: MFU per step and the peak it used
}
STREAM_KEYS = {
    "rank",
    "device",
    "stream",
    "kernels",
    "kernel_us",
    "memcpy",
    "memcpy_bytes",
    "memset",
    "busy_us",
}


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["summary", *argv, "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # one object, one line
    return json.loads(out)


def test_json_keys_are_exactly_the_contract(capsys: pytest.CaptureFixture[str]) -> None:
    j = _json(capsys, str(DATA / "streams_overlap.json.gz"))
    assert set(j) == TOP_KEYS  # no DataParallel here: no "splits"
    assert j["sources"] == [str(DATA / "streams_overlap.json.gz")]
    assert j["ranks"] == [None]
    assert isinstance(j["events"], int) and isinstance(j["warnings"], int)
    assert isinstance(j["span_us"], float)
    assert all(set(s) == STREAM_KEYS for s in j["streams"])
    assert all(isinstance(s["device"], int) and isinstance(s["stream"], int) for s in j["streams"])
    assert all(set(d) == {"rank", "device", "busy_us", "utilization"} for d in j["devices"])
    assert all(set(k) == {"name", "count", "total_us", "mean_us"} for k in j["top_kernels"])
    assert all(
        set(m) == {"rank", "device", "peak_allocated_bytes", "peak_reserved_bytes", "from_deltas"}
        for m in j["memory"]
    )
    assert set(j["overlap"]) == {"compute_copy_us", "multi_stream_us"}
    assert all(isinstance(v, float) for v in j["overlap"].values())


def test_json_of_a_folder_and_of_dataparallel(capsys: pytest.CaptureFixture[str]) -> None:
    j = _json(capsys, str(DATA / "ddp_2rank"))
    assert j["ranks"] == [0, 1] and len(j["sources"]) == 2
    assert {s["rank"] for s in j["streams"]} == {0, 1}
    dp = _json(capsys, str(DATA / "dataparallel_seed_2gpu.json.gz"))
    assert set(dp) == TOP_KEYS | {"splits"}
    assert all(set(r) == {"rank", "step", "device", "rows", "gpu_us"} for r in dp["splits"])


def test_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["summary", str(DATA / "streams_overlap.json.gz")]) == 0
    out = capsys.readouterr().out
    for heading in ("GPU streams", "GPU devices", "GPU memory", "Overlap"):
        assert heading in out
    assert "Top 1 kernel by total time" in out  # one kernel name: singular (issue 47, item 20)
    assert "sm80_xmma_gemm" in out
    assert "1.211 ms" in out  # the hidden copy's overlap


def test_text_output_without_gpu_events(capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "hta__cupti_profiler__benchmark_result_924719_1679055439_trace.json.gz"
    assert main(["summary", str(path)]) == 0
    out = capsys.readouterr().out
    assert "No GPU events" in out
    assert "GPU streams" not in out


def test_text_output_of_splits(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["summary", str(DATA / "dataparallel_seed_2gpu.json.gz")]) == 0
    out = capsys.readouterr().out
    assert "DataParallel splits" in out


@pytest.mark.parametrize("command", ["summary", "export"])
def test_bad_file_is_one_line_and_exit_2(
    command: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = DATA / "hta__memory_analysis__memory_timeline.raw.gz"
    extra = ["-o", str(tmp_path / "x.json")] if command == "export" else []
    assert main([command, str(bad), *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(bad) in err and "Traceback" not in err
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("content", [b"", b"{not json", b"\x1f\x8b\x08\x00garbage"])
def test_broken_files_exit_2(
    content: bytes, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    p = tmp_path / "broken.json"
    p.write_bytes(content)
    assert main(["summary", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "broken.json" in err


def test_missing_path_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.json.gz"
    assert main(["summary", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope.json.gz" in err


def test_real_entry_point_exit_code_and_stderr(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gpuviz", "summary", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1


def _after_a_load(code: str) -> str:
    """What ``code`` prints, run in a fresh process that has loaded a small trace (``t``) as
    the summary does before its analysis (``cmd``: the summary command's module)."""
    head = (
        "import importlib, sys\n"
        "from gpuviz import cli\n"
        "from gpuviz.commands import summary as cmd\n"
        "from gpuviz.trace.kineto import load_trace\n"
        f"t = load_trace({str(DATA / 'dataparallel_4gpu.json.gz')!r}, cache=False)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", head + code], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_each_analysis_import_is_one_module_after_those_it_needs() -> None:
    # The pieces run between the import pipeline's waits: one that pulled in other gpuviz
    # modules with it would hold the importer for their time too.
    assert (
        _after_a_load(
            "for name in cmd.ANALYSIS_MODULES:\n"
            "    before = set(sys.modules)\n"
            "    importlib.import_module(name)\n"
            "    more = sorted(m for m in set(sys.modules) - before if m.startswith('gpuviz'))\n"
            "    if more not in ([], [name]):\n"
            "        print(name, more)\n"
        )
        == ""
    )


def test_the_analysis_imports_nothing_that_analysis_imports_left_out() -> None:
    # What the summary imports while the import's children finish must be all its analysis
    # imports: a module missed there is imported after the read, on the start-up's path.
    assert (
        _after_a_load(
            "args = cli.build_parser('summary').parse_args(['summary', 'x', '--json'])\n"
            "for piece in cmd.analysis_imports(): piece()\n"
            "before = set(sys.modules)\n"
            "cmd._analyse(t, args)\n"
            "print(sorted(set(sys.modules) - before))\n"
        )
        == "[]"
    )
