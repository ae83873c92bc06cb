"""The Runner's events: frozen dataclasses and their JSON-lines wire form (DESIGN.md).

This module imports neither torch nor Qt, so the app can replay a recorded stream and tests can
read one on any machine.

Every event is a frozen dataclass. Field names carry their units (``wall_ms``, ``t_s``,
``rss_bytes``). A value that does not exist is ``None`` in Python and is *omitted* on the wire,
never faked (``gpu_ms`` on the CPU, allocator figures for a CPU device).

Wire form: one JSON object a line, ``{"type": "StepTimed", ...fields}``. The first line of a
stream is ``Started``, which also carries ``"schema": 1``. A reader ignores fields it does not
know (newer writers may add optional ones) and refuses a schema newer than its own.

``TraceReady.path`` (and the ``partial_trace_path`` of ``Failed``/``Cancelled``, and the
``trace`` of ``Finished.result``) are written
relative to the events file's folder when the trace lies in or below it, so a recorded stream
replays on another machine. :func:`read_events` turns them back into paths that exist on the
reading side.

Threads: the Runner yields events in the thread that iterates it; the child-process executor
yields them in the thread that reads the pipe. Consumers (the GUI's QThread) must not assume the
GUI thread.

Examples
--------
>>> line = encode_event(StepTimed(step=0, label="vectorized", wall_ms=1.5, profiled=False))
>>> line
'{"type": "StepTimed", "step": 0, "label": "vectorized", "wall_ms": 1.5, "profiled": false}'
>>> decode_event(line)
StepTimed(step=0, label='vectorized', wall_ms=1.5, gpu_ms=None, profiled=False)
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import IO, Any

import msgspec

SCHEMA = 1
"""The wire schema version that ``Started`` carries and this module reads."""


@dataclass(frozen=True)
class Started:
    """A run began. Always the first event.

    Parameters
    ----------
    workload : str
        The workload's name (``loops``) or ``FILE.py:FUNC`` for a user file.
    params : dict
        Every parameter's value, defaults filled in.
    device : str
        The device picked: ``cpu``, ``cuda`` or ``cuda:N``.
    devices : list of str
        Every device the run uses (``["cuda:0", "cuda:1"]`` for multi-GPU workloads).
    torch_version : str
        ``torch.__version__`` of the process that runs the workload.
    """

    workload: str
    params: dict[str, Any]
    device: str
    devices: list[str]
    torch_version: str


@dataclass(frozen=True)
class Progress:
    """``step`` steps of ``total`` are done (``total`` counts only steps that will run)."""

    step: int
    total: int


@dataclass(frozen=True)
class StepTimed:
    """One timed step.

    Parameters
    ----------
    step : int
        The step's index over the whole run, from 0.
    label : str
        The strategy it ran (``for_loop``), or the workload's name when there is only one.
    wall_ms : float
        Host wall time of the step, synchronized with the device at both ends.
    gpu_ms : float, optional
        Time between CUDA events recorded around the step; None on the CPU.
    profiled : bool
        Whether the profiler was recording during this step (its times are distorted).
    """

    step: int
    label: str
    wall_ms: float
    gpu_ms: float | None = None
    profiled: bool = False


@dataclass(frozen=True)
class MemorySample:
    """One memory reading of one device, at 10 Hz or more.

    ``rss_bytes`` (the host process's resident memory) is always there. The allocator fields
    exist only for CUDA devices, and the NVML fields only where ``nvidia-ml-py`` finds the GPU.
    """

    t_s: float
    device: str
    rss_bytes: int
    allocated_bytes: int | None = None
    reserved_bytes: int | None = None
    peak_allocated_bytes: int | None = None
    nvml_used_bytes: int | None = None
    utilization_pct: float | None = None


@dataclass(frozen=True)
class SplitRecorded:
    """One DataParallel replica's share of one step: its device, its rows and its GPU time."""

    step: int
    replica: int
    device: str
    rows: int
    gpu_ms: float | None = None


@dataclass(frozen=True)
class TraceReady:
    """The trace (a ``.json.gz`` file, or a folder of ``rank-N.json.gz``) is written at ``path``."""

    path: str


@dataclass(frozen=True)
class Finished:
    """The run ended well. ``result`` is the result object that ``gpuviz run --json`` prints."""

    result: dict[str, Any]


@dataclass(frozen=True)
class Failed:
    """The run failed: an exception, CUDA out of memory, or a child that died (``error`` says
    which, with the signal for a dead child). ``partial_trace_path`` is the trace recorded so
    far, when there is one."""

    error: str
    traceback: str = ""
    partial_trace_path: str | None = None


@dataclass(frozen=True)
class Cancelled:
    """The run was cancelled between steps; ``partial_trace_path`` is kept when there is one."""

    partial_trace_path: str | None = None


Event = (
    Started
    | Progress
    | StepTimed
    | MemorySample
    | SplitRecorded
    | TraceReady
    | Finished
    | Failed
    | Cancelled
)
"""Any event the Runner yields."""

EVENT_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        Started,
        Progress,
        StepTimed,
        MemorySample,
        SplitRecorded,
        TraceReady,
        Finished,
        Failed,
        Cancelled,
    )
}
"""Wire ``type`` -> event class."""

TERMINAL_TYPES = (Finished, Failed, Cancelled)
"""A stream ends with exactly one of these."""

_PATH_FIELDS = {
    "TraceReady": "path",
    "Failed": "partial_trace_path",
    "Cancelled": "partial_trace_path",
}


class EventDecodeError(ValueError):
    """A line is not an event of this schema (names the line and what is wrong)."""


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
"""Each event class's field names: ``dataclasses.fields`` took half of a ``StepTimed``'s
encoding, which ``gpuviz profile`` pays on the script's thread at every step."""


def event_to_dict(event: Event) -> dict[str, Any]:
    """The wire object of ``event``: ``type`` first, ``None`` fields left out."""
    cls = type(event)
    out: dict[str, Any] = {"type": cls.__name__}
    if isinstance(event, Started):
        out["schema"] = SCHEMA
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(event))
    for name in names:
        value = getattr(event, name)
        if value is not None:
            out[name] = value
    return out


def encode_event(event: Event) -> str:
    """One JSON line (no newline) for ``event``. Values must be JSON types (they are)."""
    if type(event) is StepTimed:
        return _step_line(event)
    return _ENCODER.encode(event_to_dict(event))


def _step_line(e: StepTimed) -> str:
    # One of these goes out at every step of a profiled script, on the script's thread:
    # msgspec and a literal dict take ~1 µs where event_to_dict and json took ~5 µs. The same
    # keys, in the same order; a value that is not finite takes the checked path (which refuses
    # it, as json's allow_nan=False does).
    wall, gpu = e.wall_ms, e.gpu_ms
    if not (math.isfinite(wall) and (gpu is None or math.isfinite(gpu))):
        return _ENCODER.encode(event_to_dict(e))
    obj: dict[str, Any] = {"type": "StepTimed", "step": e.step, "label": e.label, "wall_ms": wall}
    if gpu is not None:
        obj["gpu_ms"] = gpu
    obj["profiled"] = e.profiled
    return _FAST_ENCODER.encode(obj).decode()


def _json_default(value: Any) -> Any:
    # numpy scalars and paths slip into results; make them plain JSON values.
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, (set, tuple)):
        return list(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


_FAST_ENCODER = msgspec.json.Encoder()

_ENCODER = json.JSONEncoder(allow_nan=False, default=_json_default)
"""``json.dumps(obj, allow_nan=False, default=_json_default)``, without making an encoder per
event."""


def event_from_dict(obj: dict[str, Any]) -> Event:
    """The event of a wire object; unknown fields are ignored, missing required ones refused."""
    if not isinstance(obj, dict):
        raise EventDecodeError(f"expected a JSON object, got {type(obj).__name__}")
    name = obj.get("type")
    cls = EVENT_TYPES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise EventDecodeError(f"unknown event type {name!r}")
    if cls is Started and isinstance(obj.get("schema"), int) and obj["schema"] > SCHEMA:
        raise EventDecodeError(f"schema {obj['schema']} is newer than this reader's ({SCHEMA})")
    known = {f.name: f for f in fields(cls)}
    kwargs = {k: v for k, v in obj.items() if k in known}
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise EventDecodeError(f"{name}: {exc}") from None


def decode_event(line: str | bytes) -> Event:
    """The event of one JSON line."""
    try:
        obj = json.loads(line)
    except ValueError as exc:
        raise EventDecodeError(f"not JSON: {exc}") from None
    except RecursionError:
        raise EventDecodeError(_too_deep(line, 0)) from None
    return event_from_dict(obj)


def _too_deep(line: str | bytes, offset: int) -> str:
    """``byte N: JSON nested too deeply …`` for a line json.loads gave up on (RecursionError)."""
    from gpuviz.trace.jsonscan import deep_nesting

    raw = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
    at, what = deep_nesting(raw)
    return f"byte {offset + at}: {what}"


def _relative_to(path: str, folder: Path) -> str:
    try:
        return Path(path).resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return path


class EventWriter:
    """Writes events as JSON lines to ``path``, flushing each line (a reader may tail the file).

    Trace paths that lie in or below the file's folder are written relative to it.
    Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._folder = self.path.parent
        self._file: IO[str] = open(self.path, "w", encoding="utf-8")

    def write(self, event: Event, flush: bool = True) -> None:
        """Append one event; ``flush=False`` leaves it in the buffer (see :meth:`flush`)."""
        if type(event) is StepTimed:  # the one of every step: no paths in it
            self._file.write(_step_line(event) + "\n")
            if flush:
                self._file.flush()
            return
        obj = event_to_dict(event)
        key = _PATH_FIELDS.get(obj["type"])
        if key and isinstance(obj.get(key), str):
            obj[key] = _relative_to(obj[key], self._folder)
        elif obj["type"] == "Finished" and isinstance(obj["result"].get("trace"), str):
            obj["result"] = {
                **obj["result"],
                "trace": _relative_to(obj["result"]["trace"], self._folder),
            }
        self._file.write(_ENCODER.encode(obj) + "\n")
        if flush:
            self._file.flush()

    def flush(self) -> None:
        """Write out what is buffered."""
        self._file.flush()

    def close(self) -> None:
        """Close the file (idempotent)."""
        if not self._file.closed:
            self._file.close()

    def __enter__(self) -> EventWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_events(path: str | os.PathLike[str], events: Iterable[Event]) -> None:
    """Write a whole stream to ``path`` (see :class:`EventWriter`)."""
    with EventWriter(path) as w:
        for e in events:
            w.write(e)


def read_events(path: str | os.PathLike[str]) -> Iterator[Event]:
    """Replay a recorded ``.jsonl`` stream.

    Relative trace paths are resolved against the file's folder, so the returned
    ``TraceReady.path`` names a file that exists where the stream was copied with its trace.
    Blank lines are skipped. A bad line raises :class:`EventDecodeError` naming the file and
    line number (and for JSON nested too deeply, the byte).
    """
    path = Path(path)
    folder = path.parent
    offset = 0  # of the line, in the file (for errors)
    with open(path, "rb") as f:
        for lineno, line in enumerate(f, 1):
            start, offset = offset, offset + len(line)
            if not line.strip():
                continue
            try:
                try:
                    obj = json.loads(line)
                except RecursionError:
                    raise EventDecodeError(_too_deep(line, start)) from None
                if not isinstance(obj, dict):  # event_from_dict says what it is
                    yield event_from_dict(obj)
                key = _PATH_FIELDS.get(str(obj.get("type")))
                if key and isinstance(obj.get(key), str) and not os.path.isabs(obj[key]):
                    obj[key] = str(folder / obj[key])
                result = obj.get("result") if obj.get("type") == "Finished" else None
                if isinstance(result, dict) and isinstance(result.get("trace"), str):
                    if not os.path.isabs(result["trace"]):
                        result["trace"] = str(folder / result["trace"])
                yield event_from_dict(obj)
            except (ValueError, EventDecodeError) as exc:
                raise EventDecodeError(f"{path}:{lineno}: {exc}") from None


__all__ = [
    "EVENT_TYPES",
    "SCHEMA",
    "TERMINAL_TYPES",
    "Cancelled",
    "Event",
    "EventDecodeError",
    "EventWriter",
    "Failed",
    "Finished",
    "MemorySample",
    "Progress",
    "SplitRecorded",
    "Started",
    "StepTimed",
    "TraceReady",
    "decode_event",
    "encode_event",
    "event_from_dict",
    "event_to_dict",
    "read_events",
    "write_events",
]
