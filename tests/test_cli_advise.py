"""``gpuviz advise``: text, JSON, ``--against``, bad input, names made safe, the top-N printer."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import numpy as np
import pytest

from gpuviz.cli import main
from gpuviz.commands.advise import print_top_findings
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import Kind

DATA = Path(__file__).parent / "data"
ADV = DATA / "advisor"


def test_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["advise", str(ADV / "adv_launch_bound.json.gz")]) == 0
    out = capsys.readouterr().out
    assert "Steps: 3 from ProfilerStep" in out
    assert "1. [critical] launch_bound:" in out
    assert "Fix:" in out and "Saving:" in out and "Evidence:" in out


def test_json_is_one_object(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["advise", str(ADV / "adv_pageable_copy.json.gz"), "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    j = json.loads(out)
    assert set(j) == {"sources", "steps", "findings"}
    assert j["findings"][0]["kind"] == "pageable_copy"
    assert [s["label"] for s in j["steps"]] == [f"ProfilerStep#{i}" for i in (1, 2, 3)]


def test_clean_run_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["advise", str(ADV / "adv_clean.json.gz")]) == 0
    assert "No findings" in capsys.readouterr().out


def test_against_diffs_kernels_and_ops(capsys: pytest.CaptureFixture[str]) -> None:
    a, b = ADV / "adv_fp32_matmul.json.gz", ADV / "adv_clean.json.gz"
    assert main(["advise", str(a), "--against", str(b), "--json"]) == 0
    j = json.loads(capsys.readouterr().out)
    assert set(j) == {"a", "b", "verdict", "changes", "diff"}
    assert [f["kind"] for f in j["a"]["findings"]] == ["fp32_matmul"] and j["b"]["findings"] == []
    # Independent count of A's fp32 GEMM kernels: gone in B.
    trace = load_trace(a)
    names = np.asarray(trace.symbols.strings, dtype=object)[trace.slices.name]
    gemm = [
        n for n, k in zip(names, trace.slices.kind) if k == Kind.KERNEL and "f32f32_f32f32" in n
    ]
    row = next(d for d in j["diff"] if d["name"] == gemm[0])
    assert (row["what"], row["status"], row["count_a"], row["count_b"]) == (
        "kernel",
        "gone",
        len(gemm),
        0,
    )
    deltas = [abs(d["delta_us"]) for d in j["diff"]]
    assert deltas == sorted(deltas, reverse=True)
    assert main(["advise", str(a), "--against", str(b)]) == 0
    out = capsys.readouterr().out
    assert "Mean per step" in out and "Kernels, ops and modules whose time changed most" in out
    assert "fp32_matmul" in out


def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["advise", str(tmp_path / "nope.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope.json" in err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["advise", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.json" in err and "Traceback" not in err


def test_names_from_the_file_are_made_safe(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # An fp32 GEMM whose name carries a terminal escape (it must not reach the terminal raw).
    evil = "ampere_sgemm_\x1b]52;c;cHduZWQ=\x07_tn"
    events = [
        {
            "ph": "X",
            "cat": "user_annotation",
            "name": "ProfilerStep#0",
            "pid": 1,
            "tid": 1,
            "ts": 0,
            "dur": 1000,
        },
        {
            "ph": "X",
            "cat": "kernel",
            "name": evil,
            "pid": 0,
            "tid": 7,
            "ts": 10,
            "dur": 900,
            "args": {"device": 0, "stream": 7},
        },
    ]
    doc = {
        "deviceProperties": [
            {"id": 0, "name": "GPU", "computeMajor": 9, "computeMinor": 0, "numSms": 132}
        ],
        "traceEvents": events,
    }
    path = tmp_path / "evil.json.gz"
    with gzip.open(path, "wt") as f:
        json.dump(doc, f)
    assert main(["advise", str(path)]) == 0
    out = capsys.readouterr().out
    assert "fp32_matmul" in out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]52" in out


def test_print_top_findings() -> None:
    buf = io.StringIO()
    n = print_top_findings(ADV / "adv_gpu_starved.json.gz", 3, file=buf)
    text = buf.getvalue()
    assert n == 1 and "1. [critical] gpu_starved" in text and "fix:" in text
    buf = io.StringIO()
    assert print_top_findings(ADV / "adv_clean.json.gz", 3, file=buf) == 0
    assert "no findings" in buf.getvalue()
    buf = io.StringIO()
    assert print_top_findings("/nonexistent/trace.json", 3, file=buf) == 0
    assert buf.getvalue().startswith("advice: none")


def test_run_prints_its_advice(tmp_path: Path) -> None:
    import subprocess
    import sys

    out = tmp_path / "l.json.gz"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpuviz",
            "run",
            "loops",
            "-p",
            "n=50",
            "--steps",
            "1",
            "--device",
            "cpu",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    # The CPU build records no GPU work: the advice says so, last, after the result.
    assert (
        r.stdout.rstrip().splitlines()[-1]
        == "advice: no GPU work in this trace, nothing to advise on"
    )
