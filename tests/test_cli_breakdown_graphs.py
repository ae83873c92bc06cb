"""``gpuviz breakdown`` on a graph-replay trace: the capture found beside the run or named by
``--capture-trace``, the replay unit without it, bad input (vLLM decode, ROCm; the expected
count 421 is the JSON's own kernels sharing the ``hipGraphLaunch`` correlation, see
tests/analysis/test_graph_merge_vllm.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpuviz.cli import main

PAIR = Path(__file__).parent / "data" / "graphs" / "vllm_decode_full"
RUN = PAIR / "graph_execution.json.gz"


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["breakdown", *argv, "--json", "--top", "0"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("by", ["op", "module", "line"])
def test_capture_beside_the_run_is_used(by: str, capsys: pytest.CaptureFixture[str]) -> None:
    j = _json(capsys, str(RUN), "--by", by)
    note = j["graph_capture"]
    assert (note["graph_kernels"], note["matched_kernels"], note["grid_mismatches"]) == (
        421,
        421,
        0,
    )
    assert note["files"][0].endswith(".pt.trace.json.gz")
    assert j["unattributed_device_us"] == 0
    assert not [r for r in j["rows"] if r["key"].startswith("graph 1:")]


def test_capture_named_by_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run.json.gz"
    shutil.copy(RUN, run)
    alone = _json(capsys, str(run), "--by", "module")
    assert "graph_capture" not in alone
    # Without the capture: one unit, on the replay's own row (the record_function around it).
    assert alone["unattributed_device_us"] == 0
    named = _json(
        capsys, str(run), "--by", "module", "--capture-trace", str(PAIR / "capture_traces")
    )
    assert named["graph_capture"]["matched_kernels"] == 421
    rows = {r["key"]: r for r in named["rows"]}
    assert rows["GptOssForCausalLM_0.GraphModule_0"]["device_self_us"] == pytest.approx(
        sum(r["device_self_us"] for r in alone["rows"] if r["kind"] == "outside")
        - rows[next(k for k in rows if k.startswith("execute_"))]["device_self_us"],
        abs=0.01,
    )
    # The module row's FLOPs are unknown (its ops ran at capture), never 0.
    assert rows["GptOssForCausalLM_0.GraphModule_0"]["flops"] is None
    one_file = _json(
        capsys,
        str(run),
        "--by",
        "op",
        "--capture-trace",
        str(next((PAIR / "capture_traces").glob("*.pt.trace.json.gz"))),
    )
    assert one_file["graph_capture"]["matched_kernels"] == 421


def test_without_capture_the_unit_is_an_op_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run.json.gz"
    shutil.copy(RUN, run)
    j = _json(capsys, str(run), "--by", "op")
    unit = [r for r in j["rows"] if r["kind"] == "graph"]
    assert [r["key"] for r in unit] == ["graph 1: 421 kernels"]
    assert unit[0]["calls"] == 1 and unit[0]["flops"] is None
    assert j["unattributed_device_us"] == 0
    assert main(["breakdown", str(run), "--by", "op"]) == 0
    text = capsys.readouterr().out
    assert "graph 1: 421 kernels" in text and "in no row" not in text


def test_missing_capture_trace_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["breakdown", str(RUN), "--capture-trace", "/no/such/capture"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--capture-trace /no/such/capture" in err[0]


def test_merged_tables_keep_every_kernel_once(capsys: pytest.CaptureFixture[str]) -> None:
    import gzip

    raw = json.load(gzip.open(RUN))["traceEvents"]
    gpu = [e for e in raw if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    total_us = sum(e["dur"] for e in gpu)  # the JSON's own durations, in µs
    for by in ("op", "module", "line"):
        j = _json(capsys, str(RUN), "--by", by)
        selfs = sum(r["device_self_us"] for r in j["rows"]) + j["unattributed_device_us"]
        assert selfs == pytest.approx(total_us, abs=0.001 * len(j["rows"]) + 0.01), by
        for r in j["rows"]:
            assert r["device_self_us"] <= r["device_total_us"] + 0.001, (by, r["key"])


def test_an_unreadable_capture_beside_the_run_is_said_and_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run.json.gz"
    shutil.copy(RUN, run)
    (tmp_path / "capture_traces").mkdir()
    (tmp_path / "capture_traces" / "broken.json").write_text("{not json")
    j = _json(capsys, str(run), "--by", "op")
    note = j["graph_capture"]
    assert note["files"] == [] and "broken.json" in note["capture_errors"][0]
    assert [r["key"] for r in j["rows"] if r["kind"] == "graph"] == ["graph 1: 421 kernels"]
    assert main(["breakdown", str(run)]) == 0
    assert "Graph capture left out:" in capsys.readouterr().out
