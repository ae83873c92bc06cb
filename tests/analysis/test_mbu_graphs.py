"""MBU of a decode step that replays a CUDA/HIP graph (issue 50), from the ops of the graph's
capture: the vLLM pair (a FULL decode graph of 32 requests on an MI300X and its capture),
against a hand count of the capture's GEMM weights read from its JSON; unknown with the
reason where the capture is missing, does not match, or records no shapes."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpuviz.analysis.hardware import hardware
from gpuviz.analysis.mbu_graphs import replay_bytes
from gpuviz.analysis.serving_phases import serving_report
from gpuviz.analysis.steps import find_steps
from gpuviz.cli import main
from gpuviz.trace.graph_captures import load_with_captures
from gpuviz.trace.kineto import load_trace

DATA = Path(__file__).parent.parent / "data"
PAIR = DATA / "graphs" / "vllm_decode_full"
RUN = PAIR / "graph_execution.json.gz"
CAPTURE = next((PAIR / "capture_traces").glob("*.json.gz"))
MI300X_TB_S = 5.3


def _events(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as f:
        return json.load(f)["traceEvents"]


def _weight_bytes(events: list[dict[str, Any]], ops: dict[str, int]) -> int:
    """By hand: the right operand of every GEMM op of the file (bf16: 2 bytes an element)."""
    total = 0
    for e in events:
        if e.get("cat") == "cpu_op" and e.get("name") in ops:
            args = e["args"]
            i = ops[e["name"]]
            assert args["Input type"][i] == "c10::BFloat16"
            total += int(np.prod(args["Input Dims"][i])) * 2
    return total


def test_replayed_decode_bytes_are_the_captures_gemm_weights_by_hand() -> None:
    trace = load_with_captures(RUN)  # capture_traces/ beside it
    steps = find_steps(trace)
    r = serving_report(trace, steps, hardware(trace, steps=steps))
    assert r is not None
    (rec,) = r.records
    assert rec.graph and rec.phase == "decode"
    # the capture: 24 layers x 3 aten::addmm (weight [K, N] at index 2); the run's own GEMM
    # around the replay: the LM head, aten::mm [32, 2880] x [2880, 201088]
    captured = _weight_bytes(_events(CAPTURE), {"aten::addmm": 2})
    own = _weight_bytes(_events(RUN), {"aten::mm": 1, "aten::addmm": 2})
    assert captured == 24 * (2880 * 5120 + 4096 * 2880 + 2880 * 32) * 2  # qkv, o_proj, router
    assert own == 2880 * 201088 * 2
    got = replay_bytes(trace, steps)
    assert got is not None and got.ops == [72] and got.replays == [1]
    assert got.nbytes == [captured]
    assert rec.bytes_read == captured + own
    assert rec.mbu == pytest.approx(rec.bytes_read / (rec.duration_ns * 1e-9 * MI300X_TB_S * 1e12))
    dec = r.phase("decode")
    assert dec is not None and dec.mbu == pytest.approx(rec.mbu) and dec.mbu_note == ""


def test_without_its_capture_the_bytes_stay_unknown_and_say_how_to_get_them() -> None:
    trace = load_trace(RUN)
    r = serving_report(trace, find_steps(trace))
    assert r is not None and r.records[0].bytes_read is None
    assert "--capture-trace" in r.records[0].mbu_note
    assert replay_bytes(trace, find_steps(trace)) is None


def test_a_capture_of_another_graph_matches_nothing() -> None:
    other = DATA / "graphs" / "gpu" / "manual_graph.json.gz"  # a CUDA graph of another run
    trace = load_with_captures(RUN, other)
    r = serving_report(trace, find_steps(trace))
    assert r is not None and r.records[0].bytes_read is None
    assert r.records[0].mbu_note == "graph 1 matched no capture of the attached ones"


def test_a_capture_without_shapes_counts_nothing(tmp_path: Path) -> None:
    with gzip.open(CAPTURE, "rt") as f:
        doc = json.load(f)
    for e in doc["traceEvents"]:
        e.get("args", {}).pop("Input Dims", None)
    bare = tmp_path / "capture.json.gz"
    with gzip.open(bare, "wt") as f:
        json.dump(doc, f)
    trace = load_with_captures(RUN, bare)
    r = serving_report(trace, find_steps(trace))
    assert r is not None and r.records[0].bytes_read is None
    assert "records no GEMM or attention op with shapes" in r.records[0].mbu_note


def test_summary_takes_the_capture_beside_or_given(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def serving(*argv: str) -> dict[str, Any]:
        assert main(["summary", *argv, "--json"]) == 0
        return json.loads(capsys.readouterr().out)["serving"]["steps"][0]

    beside = serving(str(RUN))
    alone = tmp_path / "run.json.gz"
    shutil.copy(RUN, alone)  # no capture_traces/ beside it
    assert serving(str(alone))["bytes_read"] is None
    given = serving(str(alone), "--capture-trace", str(CAPTURE))
    assert given["bytes_read"] == beside["bytes_read"] is not None
    assert given["mbu"] == beside["mbu"] is not None
    # the kept output of the run alone is not printed once a capture is given (nor back)
    assert serving(str(alone))["bytes_read"] is None


def test_replayed_decode_flops_join_the_steps_from_the_capture_by_hand() -> None:
    trace = load_with_captures(RUN)
    steps = find_steps(trace)
    hw = hardware(trace, steps=steps)  # the run's own ops: the LM head and a few more
    r = serving_report(trace, steps, hw)
    assert r is not None
    gemm = 0  # by hand: 2·M·K·N of every aten::addmm [M, K] x [K, N] of the capture
    for e in _events(CAPTURE):
        if e.get("cat") == "cpu_op" and e.get("name") == "aten::addmm":
            (m, k), (k2, n) = e["args"]["Input Dims"][1:3]
            assert k == k2
            gemm += 2 * m * k * n
    assert gemm == 2 * 32 * 24 * (2880 * 5120 + 4096 * 2880 + 2880 * 32)
    (rec,) = r.records
    assert rec.flops == pytest.approx(hw.steps[0].flops + gemm)
    # the MoE's fused kernels (no aten op) hold most of the time: MFU stays unknown, saying
    # the coverage with the capture's GEMMs counted, above the run's own 3%
    assert rec.mfu is None
    share = int(rec.mfu_note.split("only ")[1].split("%")[0])
    assert rec.mfu_note.startswith("FLOPs known for only ") and 3 < share < 50
    got = replay_bytes(trace, steps)
    assert got is not None and 0 < got.known_ns[0] < hw.steps[0].device_ns
    own = hw.steps[0].known_ns / hw.steps[0].device_ns
    assert share == round(100 * (own + got.known_ns[0] / hw.steps[0].device_ns))


def test_summary_with_a_missing_capture_is_bad_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "nope.json.gz"
    assert main(["summary", str(RUN), "--capture-trace", str(missing)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(missing) in err[0] and "Traceback" not in err[0]
