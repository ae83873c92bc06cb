"""The event dataclasses and their JSON-lines wire form (DESIGN.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuviz.engine.events import (
    Cancelled,
    EventDecodeError,
    EventWriter,
    Failed,
    Finished,
    MemorySample,
    Progress,
    SplitRecorded,
    Started,
    StepTimed,
    TraceReady,
    decode_event,
    encode_event,
    read_events,
    write_events,
)

EXAMPLES = [
    Started("loops", {"n": 3, "data": [1, 2]}, "cuda:0", ["cuda:0"], "2.11.0"),
    Progress(1, 10),
    StepTimed(0, "vectorized", 1.25, 0.5, False),
    StepTimed(1, "for_loop", 2.0, None, True),
    MemorySample(0.1, "cpu", 1000),
    MemorySample(0.2, "cuda:1", 1000, 10, 20, 30, 40, 55.0),
    SplitRecorded(0, 1, "cuda:1", 8, 0.25),
    TraceReady("/abs/t.json.gz"),
    Finished({"workload": "loops", "strategies": []}),
    Failed("ValueError: boom", "Traceback...", None),
    Cancelled("/abs/t.json.gz"),
    Cancelled(None),
]


@pytest.mark.parametrize("event", EXAMPLES, ids=lambda e: type(e).__name__)
def test_round_trip(event: object) -> None:
    line = encode_event(event)  # type: ignore[arg-type]
    assert "\n" not in line
    assert decode_event(line) == event


def test_wire_form_type_first_none_omitted_schema_on_started() -> None:
    obj = json.loads(encode_event(StepTimed(3, "vmap", 1.0, None, False)))
    assert next(iter(obj)) == "type" and obj["type"] == "StepTimed"
    assert "gpu_ms" not in obj
    assert obj == {
        "type": "StepTimed",
        "step": 3,
        "label": "vmap",
        "wall_ms": 1.0,
        "profiled": False,
    }
    started = json.loads(encode_event(EXAMPLES[0]))
    assert started["schema"] == 1
    assert "schema" not in json.loads(encode_event(Progress(0, 1)))
    cpu = json.loads(encode_event(MemorySample(0.5, "cpu", 7)))
    assert set(cpu) == {"type", "t_s", "device", "rss_bytes"}


def test_events_are_frozen() -> None:
    with pytest.raises(AttributeError):
        Progress(1, 2).step = 3  # type: ignore[misc]


def test_decode_ignores_unknown_fields_and_refuses_bad_lines() -> None:
    e = decode_event('{"type": "Progress", "step": 1, "total": 2, "new_field": 5}')
    assert e == Progress(1, 2)
    with pytest.raises(EventDecodeError, match="unknown event type"):
        decode_event('{"type": "Nope"}')
    with pytest.raises(EventDecodeError, match="schema 2"):
        decode_event(
            '{"type": "Started", "schema": 2, "workload": "x", "params": {}, '
            '"device": "cpu", "devices": [], "torch_version": "1"}'
        )
    with pytest.raises(EventDecodeError, match="Progress"):
        decode_event('{"type": "Progress", "step": 1}')
    with pytest.raises(EventDecodeError, match="not JSON"):
        decode_event("{")


def test_writer_makes_trace_paths_relative_inside_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "rec"
    inside = folder / "traces" / "t.json.gz"
    outside = tmp_path / "elsewhere.json.gz"
    path = folder / "events.jsonl"
    write_events(
        path,
        [
            EXAMPLES[0],
            TraceReady(str(inside)),
            Failed("x", "", str(outside)),
            Cancelled(str(inside)),
        ],
    )
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert lines[0]["schema"] == 1
    assert lines[1]["path"] == "traces/t.json.gz"
    assert lines[2]["partial_trace_path"] == str(outside)
    assert lines[3]["partial_trace_path"] == "traces/t.json.gz"
    # Replayed from another place, the relative path points beside the copied file.
    moved = tmp_path / "moved"
    moved.mkdir()
    (moved / "events.jsonl").write_text(path.read_text())
    replay = list(read_events(moved / "events.jsonl"))
    assert isinstance(replay[1], TraceReady)
    assert Path(replay[1].path) == moved / "traces" / "t.json.gz"
    assert replay[2] == Failed("x", "", str(outside))


def test_writer_flushes_each_line(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    with EventWriter(path) as w:
        w.write(Progress(0, 3))
        assert path.read_text().count("\n") == 1  # readable before close


def test_read_events_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text(encode_event(Progress(0, 1)) + "\n\n" + '{"type": "Bad"}\n')
    with pytest.raises(EventDecodeError, match=r"e\.jsonl:3"):
        list(read_events(path))


def test_finished_result_trace_is_relative_too(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    trace = tmp_path / "t.json.gz"
    write_events(path, [Finished({"trace": str(trace), "x": 1}), Finished({"trace": None})])
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert lines[0]["result"] == {"trace": "t.json.gz", "x": 1}
    assert lines[1]["result"] == {"trace": None}
    replay = list(read_events(path))
    assert replay[0] == Finished({"trace": str(trace), "x": 1})


def test_a_line_nested_too_deeply_names_its_file_line_and_byte(tmp_path: Path) -> None:
    # json.loads recurses per level: 100k "[" must not end in a RecursionError traceback.
    path = tmp_path / "deep.jsonl"
    first = encode_event(Progress(0, 1)) + "\n"
    path.write_text(first + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(EventDecodeError) as info:
        list(read_events(path))
    byte = len(first.encode()) + 100  # the first bracket past 100 levels
    assert str(info.value) == (
        f"{path}:2: byte {byte}: JSON nested too deeply (100,000 levels of brackets)"
    )
    with pytest.raises(EventDecodeError, match="byte 100: JSON nested too deeply"):
        decode_event("[" * 100_000)


def test_a_line_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "list.jsonl"
    path.write_text("[1, 2]\n", encoding="utf-8")
    with pytest.raises(EventDecodeError, match=r"list.jsonl:1: expected a JSON object, got list"):
        list(read_events(path))


@pytest.mark.parametrize(
    "event",
    [
        StepTimed(3, "optimizer", 5.123456789, 4.1, False),
        StepTimed(0, 'q"\\é\u2028', 1e-9, None, True),
        StepTimed(10**12, "x", 123456789.0, 0.0, True),
        StepTimed(1, "s", 1e300, 5e-324, False),
    ],
)
def test_a_step_line_is_the_checked_encoders_line(event: StepTimed) -> None:
    # StepTimed takes a fast path (one a step, on the script's thread): same keys, same order,
    # same values as every other event's path.
    from gpuviz.engine import events as ev

    fast = ev.encode_event(event)
    checked = ev._ENCODER.encode(ev.event_to_dict(event))
    assert list(json.loads(fast).items()) == list(json.loads(checked).items())


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_step_time_that_is_not_finite_is_refused_on_the_fast_path_too(bad: float) -> None:
    from gpuviz.engine import events as ev

    with pytest.raises(ValueError):
        ev.encode_event(StepTimed(1, "s", 1.0, bad, False))
