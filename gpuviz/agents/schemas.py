"""What each tool of the agents' server returns as data: its ``outputSchema``.

Every tool answers twice: text for the agent to read (:mod:`gpuviz.agents.answers`) and the
same figures as ``structuredContent`` for it to use without parsing text. These pydantic
models are that content's schema: the server's tools return
``Annotated[CallToolResult, Model]``, from which the ``mcp`` SDK publishes the tool's
``outputSchema`` and against which it checks each answer before it is sent.

The figures are those of the CLI's ``--json`` (times in µs, sizes in bytes, shares as
fractions); where an object is the CLI's own (a finding, a breakdown row, a device of
``gpuviz memory``), its model names the keys an agent needs and lets the others through
(``extra="allow"``), so that a key the CLI adds later is served, not refused. A figure that
is not known is null, with a ``*_unknown`` reason beside it where one is known.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Open(BaseModel):
    """A CLI object: the keys named here, and any others it has."""

    model_config = ConfigDict(extra="allow")


class Page(BaseModel):
    """Which rows of a table this answer holds: whole rows, never part of one."""

    first: int = Field(description="Index of the first row given (0-based)")
    count: int = Field(description="Rows given in this answer")
    selected: int = Field(description="Rows the question asks for (top, or all of them)")
    total: int = Field(description="Rows the table has")
    next_cursor: int | None = Field(
        description="Pass as cursor to get the next rows; null when none are left"
    )


class Evidence(_Open):
    rank: int | None
    device: int | None
    start_us: float = Field(description="µs from the trace start")
    end_us: float


class Finding(_Open):
    """A finding as ``gpuviz advise --json`` writes it."""

    kind: str
    severity: Literal["info", "warning", "critical"]
    title: str
    fix: str
    saving_us: float = Field(description="What fixing it could save a step (the mean step)")
    saving_total_us: float | None = Field(
        default=None, description="saving_us summed over the trace's steps"
    )
    share: float = Field(description="saving_us over the step time it was measured against")
    evidence: list[Evidence]


class FindingBrief(_Open):
    kind: str
    severity: Literal["info", "warning", "critical"]
    title: str
    fix: str
    saving_us: float = Field(description="What fixing it could save a step (the mean step)")
    share: float


class Mfu(_Open):
    """A trace's MFU over its steps (``gpuviz summary --json``'s ``mfu`` brief)."""

    mean: float | None
    min: float | None
    max: float | None
    steps: int


class GpuBusy(BaseModel):
    rank: int | None
    device: int
    model: str | None = Field(description="The device's name as recorded; null when not")
    busy_share: float = Field(description="Share of the trace's span the GPU was busy")


class Named(BaseModel):
    name: str
    device_self_us: float = Field(description="Device time it launched itself")
    share: float | None = Field(description="Of the trace's device time")


class Kernel(BaseModel):
    name: str
    total_us: float
    count: int


class TraceOverview(BaseModel):
    """What a trace or rank folder is and where its step time goes."""

    ranks: list[int] = Field(description="Empty for a single process")
    gpus: list[GpuBusy]
    span_us: float
    events: int
    steps: int
    step_sources: list[str]
    mean_step_us: float | None = Field(description="null without steps")
    mean_step_parts_us: dict[str, float] = Field(
        description="The mean step's parts (per GPU, exclusive): compute, comm, copy, set, "
        "idle, cpu ops, cpu other"
    )
    mfu: Mfu | None
    mfu_unknown: str | None = Field(description="Why mfu is null")
    top_ops: list[Named]
    top_modules: list[Named]
    modules_unknown: str | None
    top_kernels: list[Kernel]
    findings: list[FindingBrief] = Field(description="Every finding, largest saving first")
    rule_errors: dict[str, str] = Field(description="Advisor rules that failed on this trace")
    serving: dict[str, Any] | None = Field(
        default=None,
        description="A serving trace's steps by phase (prefill, decode, mixed): time per step, "
        "tokens/s, MFU, MBU, graph steps; ttft_us, tpot_us; null for a training trace "
        "(docs/serving.md)",
    )


class AtTime(BaseModel):
    """What was allocated at a time the agent asked about."""

    at_us: float = Field(description="The time asked for")
    position: Literal["before", "within", "after"] = Field(
        description="Where it lies against the recorded history (outside: its start or end is used)"
    )
    used_us: float = Field(description="The time looked at: at_us clamped to the history")
    entry: int | None = Field(description="The history entry just before it (-1: none)")
    allocated_bytes: int | None = Field(
        description="null: not known then (before a trace's events)"
    )


class SnapshotDevice(_Open):
    """A device of ``gpuviz memory --json``, with the time asked about."""

    device: int
    peak_allocated_bytes: int
    reserved_bytes: int
    allocated_bytes: int
    at: AtTime | None = None


class SnapshotMemory(BaseModel):
    devices: list[SnapshotDevice]


class TraceMemoryDevice(BaseModel):
    rank: int | None
    device: int
    peak_allocated_bytes: int
    peak_reserved_bytes: int | None
    events: int
    from_deltas: bool = Field(description="allocated is the running sum of the events' deltas")
    at: AtTime | None = None


class TraceMemory(BaseModel):
    gpus: list[TraceMemoryDevice]
    snapshots_beside: list[str]


FileKind = Literal["trace", "rank folder", "snapshot"]


class OverviewOut(BaseModel):
    path: str
    kind: FileKind
    trace: TraceOverview | None = Field(description="For a trace or rank folder")
    snapshot: SnapshotMemory | None = Field(description="For an allocator snapshot")


class FindingsOut(BaseModel):
    path: str
    kind: str | None = Field(description="The kind asked for; null: all")
    findings: list[Finding]
    all_kinds: list[str] = Field(description="The kinds of every finding of the trace")


class Slice(BaseModel):
    start_us: float
    dur_us: float
    lane: str
    category: str
    name: str


class EventsOut(BaseModel):
    path: str
    start_us: float = Field(description="The range looked at (clamped to the trace)")
    end_us: float
    trace_end_us: float
    by_lane: dict[str, int] = Field(description="Slices in the range per lane")
    page: Page
    slices: list[Slice]


class MemoryOut(BaseModel):
    path: str
    kind: FileKind
    snapshot: SnapshotMemory | None
    trace: TraceMemory | None


class BreakdownRow(_Open):
    """A row as ``gpuviz breakdown --json`` writes it (times in µs)."""

    key: str
    kind: str
    calls: int
    device_self_us: float
    device_total_us: float
    cpu_self_us: float
    cpu_total_us: float


class BreakdownOut(BaseModel):
    path: str
    by: str
    device_us: float = Field(description="Device time of every kernel, copy and set")
    unattributed_device_us: float = Field(description="Device time in no row")
    mfu: Mfu | None = Field(description="by=step: over the steps of known MFU")
    page: Page
    rows: list[BreakdownRow]


class CompareOut(_Open):
    """``gpuviz check``'s comparison (``compare --json`` of the CLI)."""

    baseline: list[str]
    new: list[str]
    step: dict[str, Any]
    mfu: dict[str, Any]
    findings: dict[str, Any]


class Openable(BaseModel):
    path: str = Field(description="Relative to its root; pass it as path to the other tools")
    root: str
    kind: FileKind
    size_bytes: int = Field(description="A rank folder: its trace files together")
    files: int = Field(description="Trace files (1 but for a rank folder)")


class FilesOut(BaseModel):
    roots: list[str]
    page: Page
    entries: list[Openable]
    skipped: list[str] = Field(description="Folders not looked into, and why")


class ProfileOut(BaseModel):
    exit_code: int | None = Field(description="null: stopped at the time limit")
    timed_out: bool
    trace: str | None
    steps: int | None
    overview: TraceOverview | None
