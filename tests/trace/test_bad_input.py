"""DESIGN.md's bad-input policy: each case raises TraceFormatError naming the file and place."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gpuviz.errors import BadInputError
from gpuviz.trace.errors import TraceFormatError
from gpuviz.trace.kineto import load_trace

DATA = Path(__file__).parents[1] / "data"
SAMPLE = DATA / "worker_thread.json.gz"


def kernel(**fields: object) -> dict[str, object]:
    e: dict[str, object] = {
        "ph": "X",
        "cat": "kernel",
        "name": "k",
        "pid": 0,
        "tid": 7,
        "ts": 10.0,
        "dur": 2.0,
        "args": {"device": 0, "stream": 7},
    }
    e.update(fields)
    return {k: v for k, v in e.items() if v is not _DROP}


_DROP = object()


def write(tmp_path: Path, name: str, content: bytes | str) -> Path:
    p = tmp_path / name
    p.write_bytes(content.encode() if isinstance(content, str) else content)
    return p


def trace_text(events: list[object]) -> str:
    ok = {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 1, "dur": 50}
    return json.dumps({"schemaVersion": 1, "traceEvents": [ok, *events]}, indent=2)


def raises(path: Path, *, what: str, where: str | None = None) -> TraceFormatError:
    with pytest.raises(TraceFormatError) as info:
        load_trace(path)
    err = info.value
    assert isinstance(err, BadInputError)
    assert str(path) in str(err), "the message names the file"
    assert re.search(what, err.what, re.IGNORECASE), err.what
    if where is not None:
        assert err.where == where, str(err)
    assert "\n" not in str(err)
    return err


def test_not_json(tmp_path: Path) -> None:
    raises(write(tmp_path, "hello.json", "hello world"), what="not a JSON trace", where="byte 0")


def test_malformed_json_inside_the_events_names_the_byte(tmp_path: Path) -> None:
    text = '{"traceEvents": [{"ph": "X", "ts": 1, "dur": 2, "name": oops}]}'
    err = raises(write(tmp_path, "bad.json", text), what="malformed JSON")
    assert err.where.startswith("byte ")
    assert abs(int(err.where.split()[1]) - text.index("oops")) <= 2


def test_malformed_json_outside_the_events(tmp_path: Path) -> None:
    raises(write(tmp_path, "bad.json", '{"a": , "traceEvents": []}'), what="malformed JSON")


def test_empty_file(tmp_path: Path) -> None:
    raises(write(tmp_path, "empty.json", b""), what="empty file")
    raises(write(tmp_path, "blank.json", b"  \n\t "), what="empty file")
    raises(write(tmp_path, "empty.json.gz", gzip.compress(b"")), what="empty file")


def test_truncated_gzip(tmp_path: Path) -> None:
    data = SAMPLE.read_bytes()
    err = raises(write(tmp_path, "cut.json.gz", data[: len(data) // 2]), what="truncated")
    assert err.where.startswith("byte ")


def test_corrupt_gzip(tmp_path: Path) -> None:
    data = bytearray(SAMPLE.read_bytes())
    data[200:260] = b"\xff" * 60
    raises(write(tmp_path, "corrupt.json.gz", bytes(data)), what="gzip")


def test_truncated_plain_json(tmp_path: Path) -> None:
    text = gzip.decompress(SAMPLE.read_bytes())
    raises(write(tmp_path, "cut.json", text[: len(text) // 2]), what="truncated")
    raises(write(tmp_path, "cut2.json", text[:-3]), what="truncated|malformed")


@pytest.mark.parametrize(
    "text", ['{"a": 1}', "42", '"trace"', "null", "[1, 2]", '["a"]', '{"traceEvents": 5}', "true"]
)
def test_json_that_is_not_a_trace(tmp_path: Path, text: str) -> None:
    raises(write(tmp_path, "x.json", text), what="not a (JSON |Kineto )?trace")


def test_memory_timeline_file_is_named_as_such() -> None:
    raises(DATA / "hta__memory_analysis__memory_timeline.raw.gz", what="memory-timeline")


@pytest.mark.parametrize(
    ("fields", "what"),
    [
        ({"ts": _DROP}, "ts is missing"),
        ({"dur": _DROP}, "dur is missing"),
        ({"ts": "12"}, "ts is not a number"),
        ({"dur": "NaN"}, "dur is not a number"),
        ({"dur": None}, "dur is missing"),
        ({"dur": True}, "dur is not a number"),
        ({"dur": -1.5}, "dur is negative"),
        ({"ts": -3}, "ts is negative"),
        ({"cat": "gpu_memcpy", "dur": _DROP}, "dur is missing"),
        ({"cat": "Memset", "ts": [1]}, "ts is not a number"),
    ],
)
def test_gpu_activity_slice_without_valid_times(
    tmp_path: Path, fields: dict[str, object], what: str
) -> None:
    events = [kernel(), kernel(ts=20.0), kernel(**fields)]
    raises(write(tmp_path, "gpu.json", trace_text(events)), what=what, where="event 3")


def test_gpu_slice_error_in_a_bare_list(tmp_path: Path) -> None:
    path = write(tmp_path, "list.json", json.dumps([kernel(), kernel(dur=-1)]))
    raises(path, what="negative", where="event 1")


def test_gpu_slice_error_in_a_gzip_file(tmp_path: Path) -> None:
    path = write(tmp_path, "gpu.json.gz", gzip.compress(trace_text([kernel(dur=_DROP)]).encode()))
    raises(path, what="dur is missing", where="event 1")


def test_odd_cpu_events_are_warnings_not_errors(tmp_path: Path) -> None:
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "no dur", "pid": 1, "tid": 1, "ts": 5},
        {"ph": "X", "cat": "cuda_runtime", "name": "neg", "pid": 1, "tid": 1, "ts": 5, "dur": -1},
        {"ph": "i", "name": "no ts", "pid": 1, "tid": 1},
    ]
    trace = load_trace(write(tmp_path, "odd.json", trace_text(events)))
    assert trace.warnings.count == 3
    assert len(trace.slices) == 1


def test_folder_without_trace_files(tmp_path: Path) -> None:
    (tmp_path / "readme.txt").write_text("nothing here")
    raises(tmp_path, what="no trace files")


def test_path_that_does_not_exist(tmp_path: Path) -> None:
    raises(tmp_path / "missing.json.gz", what="no such file")


def test_bad_file_in_a_folder_names_that_file(tmp_path: Path) -> None:
    (tmp_path / "rank-0.json.gz").write_bytes(SAMPLE.read_bytes())
    bad = write(tmp_path, "rank-1.json", "[1, 2")
    raises(bad, what="truncated")
    with pytest.raises(TraceFormatError) as info:
        load_trace(tmp_path)
    assert info.value.path == str(bad)


def _summary(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuviz", "summary", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_summary_reports_bad_input_in_one_line(tmp_path: Path) -> None:
    pytest.importorskip("gpuviz.commands.summary", reason="gpuviz summary is not written yet")
    bad = write(tmp_path, "bad.json", "{not json")
    proc = _summary(bad)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


# --------------------------------------------------------------------- JSON nested too deeply
# msgspec (like json) recurses once per level: 100k "[" used to end in a RecursionError
# traceback. Every decode path must give the one-line error with the byte where it happens.

DEEP = 100_000


def _first_byte_past(text: str, levels: int) -> int:
    """Offset of the first bracket at which the nesting exceeds ``levels`` (a plain scan)."""
    depth, in_string, escaped = 0, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > levels:
                return i
        elif ch in "]}":
            depth -= 1
    raise AssertionError("not that deep")


def _deep_cases() -> dict[str, str]:
    deep = "[" * DEEP + "]" * DEEP
    ops = [
        {"ph": "X", "cat": "cpu_op", "name": f"op{i}", "pid": 1, "tid": 1, "ts": i, "dur": 1}
        for i in range(3000)
    ]
    events = json.dumps(ops, indent=1)[1:-1]
    odd = json.dumps(dict(ops[0], ts="x"))  # a value of the wrong type: the slow path
    return {
        "bare list": deep,
        "an event": '{"traceEvents": [' + deep + "]}",
        "args among events": '{"traceEvents": [' + events + ', {"ph": "X", "name": "d", '
        '"ts": 1, "dur": 1, "args": {"x": ' + deep + "}}, " + events + "]}",
        "after an odd event": '{"traceEvents": [' + odd + ", " + deep + "]}",
        "metadata after": '{"traceEvents": [' + events + '], "x": ' + deep + "}",
        "metadata before": '{"x": ' + deep + ', "traceEvents": []}',
    }


@pytest.mark.parametrize("case", list(_deep_cases()))
@pytest.mark.parametrize("how", ["plain", "gzip", "small blocks", "children"])
def test_json_nested_too_deeply_is_one_error_with_its_byte(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    case: str,
    how: str,
) -> None:
    from gpuviz.trace import jsonscan
    from gpuviz.trace.json_boundaries import NESTING_SHOWN

    text = _deep_cases()[case]
    if how == "gzip":
        path = write(tmp_path, "deep.json.gz", gzip.compress(text.encode()))
    else:
        path = write(tmp_path, "deep.json", text)
    if how in ("small blocks", "children"):
        # Many blocks: chunk ends are guessed (the fast path) and the deep text spans blocks.
        monkeypatch.setattr(jsonscan, "BLOCK_BYTES", 1 << 14)
    if how == "children":
        monkeypatch.setenv("GPUVIZ_IMPORT_WORKER_MIN_BYTES", "0")
        monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "2")
    err = raises(path, what="nested too deeply")
    assert err.where == f"byte {_first_byte_past(text, NESTING_SHOWN)}"
    assert "Traceback" not in capfd.readouterr().err  # nor from the children


def test_cli_says_nested_too_deeply_in_one_line(tmp_path: Path) -> None:
    text = "[" * DEEP + "]" * DEEP
    bad = write(tmp_path, "deep.json", text)
    proc = _summary(bad)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (
        f"gpuviz summary: {bad}: byte 100: JSON nested too deeply ({DEEP:,} levels of brackets)"
    )


def test_args_too_deep_to_decode_read_as_empty() -> None:
    from gpuviz.trace.model import ArgsStore

    raw = b'{"a": ' + b"[" * DEEP + b"]" * DEEP + b"}"
    store = ArgsStore(raw, np.array([0, len(raw)], dtype=np.int64))
    assert store.get(0) == {}
    assert store.raw(0) == raw  # kept as it was: an export writes it back
