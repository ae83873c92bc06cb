"""The ``gpuviz mcp`` server: gpuviz's analyses as MCP tools, on the official ``mcp`` SDK.

:func:`build_server` registers the tools on an :class:`mcp.server.mcpserver.MCPServer`; the SDK
writes each tool's input schema from its type hints (``by`` and ``kind`` as enums, bounds on
numbers) and its ``outputSchema`` from its return type, ``Annotated[CallToolResult, Model]``
(:mod:`gpuviz.agents.schemas`): each answer is text for the agent to read and the same figures
as ``structuredContent``, which the SDK checks against the schema. Tables come in pages of
whole rows (``cursor``; :mod:`gpuviz.agents.paging`). ``profile`` is registered only with
``--allow-run``. Every path goes through :class:`~gpuviz.agents.confine.Roots` first. A tool
that cannot answer (arguments out of their schema, a path refused, a missing file, a damaged
trace, a pickle that would load a class) returns a tool error of one sentence; nothing an agent
sends ends the server.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from gpuviz.agents import schemas
from gpuviz.agents.answers import (
    EVENTS_LIMIT,
    EVENTS_MAX,
    events_answer,
    findings_answer,
    fit,
    trace_overview,
)
from gpuviz.agents.breakdown_answer import TOP
from gpuviz.agents.confine import Roots
from gpuviz.agents.memory_answer import snapshot_answer, trace_memory_answer
from gpuviz.agents.store import Store
from gpuviz.analysis.advisor import KINDS
from gpuviz.analysis.breakdown_table import BY_VALUES
from gpuviz.display import terminal_safe
from gpuviz.errors import BadInputError

log = logging.getLogger("gpuviz.mcp")

INSTRUCTIONS = (
    "gpuviz reads PyTorch profiler (Kineto) traces, folders of per-rank traces and CUDA "
    "allocator snapshots, and says why a training or inference step is slow or where its "
    "memory goes. Start with overview(path): it names the main problem and its fix. Then "
    "findings(path) for the evidence, events(path, start_us, end_us) for the slices of a time "
    "range, breakdown(path, by) for the time by op, op and shapes (with the roofline), module, "
    "source line, kernel or step (with MFU), memory(path) for allocator snapshots, compare(a, b) for two runs; "
    "files() lists what there is to open. Paths are relative to the served folders. Times are "
    "µs (or ms where marked) from the trace start. Each answer's structuredContent holds its "
    "figures; a table longer than one answer comes in pages: pass its next_cursor as cursor."
)

PathArg = Annotated[
    str,
    Field(
        description="A trace (.json or .json.gz), a folder of per-rank traces, or an allocator "
        "snapshot (.pickle, .pickle.gz); relative to the served folder, or absolute inside it"
    ),
]
Detail = Annotated[bool, Field(description="Longer answer: every finding, more rows, whole names")]

Cursor = Annotated[
    int,
    Field(description="The first row to give: the next_cursor of the previous answer", ge=0),
]
# Enums in the input schemas, from the lists the analyses check against.
FindingKind = Literal[KINDS]  # type: ignore[valid-type]
By = Literal[BY_VALUES]  # type: ignore[valid-type]

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

Figures = tuple[str, dict[str, Any]]
"""A tool's answer: its text and its figures (``structuredContent``)."""


def _answer(make: Callable[[], Figures], detail: bool) -> CallToolResult:
    """Run one tool's work: its text (fit to the answer's limit) and its figures; a failure
    becomes a tool error of one sentence."""
    try:
        text, data = make()
        return CallToolResult(
            content=[TextContent(type="text", text=fit(text, detail))], structured_content=data
        )
    except ToolError:
        raise
    except BadInputError as exc:
        raise ToolError(terminal_safe(str(exc), one_line=True)) from None
    except MemoryError:
        raise ToolError("gpuviz ran out of memory on this request; nothing was answered.") from None
    except Exception as exc:  # a bug must not end the server: say so, log the traceback
        log.exception("tool failed")
        raise ToolError(
            terminal_safe(
                f"gpuviz failed on this request ({type(exc).__name__}: {exc}).", one_line=True
            )
        ) from None


def argument_error(tool: str, err: ValidationError) -> str:
    """Arguments out of a tool's input schema, in one sentence (pydantic's own report is a
    multi-line one): ``breakdown: top -1: input should be greater than or equal to 0.``"""
    parts = []
    errors = err.errors()
    for e in errors[:3]:
        where = ".".join(str(x) for x in e["loc"]) or "arguments"
        if e["type"] == "missing":
            parts.append(f"{where} is missing")
            continue
        msg = str(e["msg"])
        value = repr(e.get("input"))
        value = value if len(value) <= 60 else value[:59] + "…"
        parts.append(f"{where} {value}: {msg[:1].lower()}{msg[1:]}")
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return terminal_safe(f"{tool}: {'; '.join(parts)}{more}.", one_line=True)


class GpuvizServer(MCPServer[Any]):
    """The SDK's server, with its argument errors said in one sentence."""

    allow_run = False
    """Whether ``profile`` is offered; a call to it without says why it is not."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        """The SDK's ``call_tool``; arguments its validation refuses raise a :class:`ToolError`
        of one sentence (:func:`argument_error`)."""
        if name == "profile" and not self.allow_run:
            raise ToolError(
                "profile is off: this server was started without --allow-run, so it runs no "
                "code; record with gpuviz profile yourself and call overview on the trace."
            )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(argument_error(name, exc.__cause__)) from exc.__cause__
            raise


def build_server(roots: Roots, allow_run: bool = False, store: Store | None = None) -> MCPServer:
    """The server with every tool registered (``profile`` only with ``allow_run``).

    Parameters
    ----------
    roots : Roots
        The folders it may read.
    allow_run : bool
        Whether ``profile`` may run scripts (``--allow-run``); without, it is not offered.
    store : Store, optional
        Where opened files are kept (a fresh one by default).
    """
    from gpuviz import __version__

    store = store if store is not None else Store()
    server = GpuvizServer(
        "gpuviz", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )

    def is_snapshot(p: Path) -> bool:
        from gpuviz.trace.allocator_snapshot import is_snapshot_path

        return p.is_file() and is_snapshot_path(p)

    def label(p: Path) -> str:
        for r in roots.paths:
            if p.is_relative_to(r):
                return str(p.relative_to(r)) or p.name
        return str(p)

    def need_trace(p: Path, tool: str) -> None:
        if is_snapshot(p):
            raise ToolError(
                terminal_safe(
                    f"{label(p)} is an allocator snapshot, not a trace: use memory(path) or "
                    f"overview(path) on it ({tool} reads traces).",
                    one_line=True,
                )
            )

    def kind_of(p: Path) -> str:
        return "snapshot" if is_snapshot(p) else "rank folder" if p.is_dir() else "trace"

    @server.tool(annotations=READ_ONLY)
    def overview(
        path: PathArg, detail: Detail = False
    ) -> Annotated[CallToolResult, schemas.OverviewOut]:
        """Start here: what a trace, rank folder or snapshot is, where step time goes, MFU, the ops and modules that take the device time, and the top problems with their fixes."""

        def make() -> Figures:
            p = roots.resolve(path)
            data: dict[str, Any] = {"path": label(p), "kind": kind_of(p), "trace": None}
            data["snapshot"] = None
            if is_snapshot(p):
                text, data["snapshot"] = snapshot_answer(
                    label(p), store.snapshot(p), store.snapshot_figures(p), None, detail
                )
                return text, data
            text, data["trace"] = overview_of(p, label(p), store, detail)
            return text, data

        return _answer(make, detail)

    @server.tool(annotations=READ_ONLY)
    def findings(
        path: PathArg,
        kind: Annotated[FindingKind | None, Field(description="Only findings of this kind")] = None,
        detail: Detail = False,
    ) -> Annotated[CallToolResult, schemas.FindingsOut]:
        """The advisor's findings with evidence (time ranges, ranks, kernels, and the ops, modules and source lines behind them): use after overview to see where a problem shows."""

        def make() -> Figures:
            p = roots.resolve(path)
            need_trace(p, "findings")
            return findings_answer(label(p), store.advice(p), kind, detail)

        return _answer(make, detail)

    @server.tool(annotations=READ_ONLY)
    def events(
        path: PathArg,
        start_us: Annotated[float, Field(description="Range start, µs from the trace start")],
        end_us: Annotated[float, Field(description="Range end, µs from the trace start")],
        lane: Annotated[
            str | None,
            Field(
                description="Only lanes whose name contains this, e.g. 'GPU 0', 'stream 7', 'rank 1'"
            ),
        ] = None,
        name: Annotated[
            str | None, Field(description="Only slices whose name contains this (any case)")
        ] = None,
        limit: Annotated[
            int,
            Field(
                description=f"Most slices in one answer (default {EVENTS_LIMIT})",
                ge=1,
                le=EVENTS_MAX,
            ),
        ] = EVENTS_LIMIT,
        cursor: Cursor = 0,
        detail: Detail = False,
    ) -> Annotated[CallToolResult, schemas.EventsOut]:
        """The slices (kernels, copies, ops, runtime calls) in a time range, earliest first: use to look at one step or one finding's evidence."""

        def make() -> Figures:
            if not end_us > start_us:
                raise BadInputError(f"end_us ({end_us:g}) must be after start_us ({start_us:g}).")
            p = roots.resolve(path)
            need_trace(p, "events")
            return events_answer(
                label(p), store.trace(p), start_us, end_us, lane, name, limit, detail, cursor
            )

        return _answer(make, detail)

    @server.tool(annotations=READ_ONLY)
    def memory(
        path: PathArg,
        at_us: Annotated[
            float | None,
            Field(
                description="Also what was allocated then: µs from the start of the snapshot's "
                "history (or of the trace); outside the history, its start or end"
            ),
        ] = None,
        detail: Detail = False,
    ) -> Annotated[CallToolResult, schemas.MemoryOut]:
        """GPU memory: for an allocator snapshot the peak, out-of-memory, and top allocation sites with stacks; for a trace its memory peaks."""

        def make() -> Figures:
            p = roots.resolve(path)
            data: dict[str, Any] = {"path": label(p), "kind": kind_of(p), "trace": None}
            data["snapshot"] = None
            if is_snapshot(p):
                text, data["snapshot"] = snapshot_answer(
                    label(p), store.snapshot(p), store.snapshot_figures(p), at_us, detail
                )
                return text, data
            summary = store.summary(p)
            text, data["trace"] = trace_memory_answer(
                label(p), summary, at_us, _snapshots_beside(p)
            )
            return text, data

        return _answer(make, detail)

    def _snapshots_beside(p: Path) -> list[str]:
        from gpuviz.trace.allocator_snapshot import snapshot_path_for

        found = []
        for cand in (snapshot_path_for(p), Path(str(snapshot_path_for(p)) + ".gz")):
            if cand.is_file() and roots.contains(cand.resolve()):
                found.append(label(cand.resolve()))
        return found

    @server.tool(annotations=READ_ONLY)
    def compare(
        a: Annotated[str, Field(description="The baseline run's trace (file or rank folder)")],
        b: Annotated[str, Field(description="The new run's trace, compared with a")],
        detail: Detail = False,
    ) -> Annotated[CallToolResult, schemas.CompareOut]:
        """Two runs of a job side by side: step time, its parts, peak memory, MFU, new and gone findings, the kernels, ops and modules that changed most."""

        def make() -> Figures:
            from gpuviz.analysis.run_compare import compare_runs
            from gpuviz.report.comparison import format_comparison_brief

            pa, pb = roots.resolve(a), roots.resolve(b)
            need_trace(pa, "compare")
            need_trace(pb, "compare")
            cmp = compare_runs(store.advice(pa), store.advice(pb))
            rows = 25 if detail else 8
            text = format_comparison_brief(cmp, rows=rows, labels=(label(pa), label(pb)))
            return text, cmp.to_json(top=rows)

        return _answer(make, detail)

    @server.tool(annotations=READ_ONLY)
    def breakdown(
        path: PathArg,
        by: Annotated[
            By,
            Field(
                description="op; op-shape (with roofline: TFLOP/s, bound, share of the roof); "
                "module or line (need Python stacks); kernel; step (with MFU)"
            ),
        ] = "op",
        top: Annotated[
            int,
            Field(
                description=f"Rows asked for (default {TOP}; 0: all, in pages of whole rows)",
                ge=0,
            ),
        ] = TOP,
        cursor: Cursor = 0,
        detail: Detail = False,
    ) -> Annotated[CallToolResult, schemas.BreakdownOut]:
        """Where device and CPU time went by op, op and input shapes, module, source line, kernel or step: use to find which code to change."""

        def make() -> Figures:
            from gpuviz.agents.breakdown_answer import breakdown_answer
            from gpuviz.analysis.breakdown import NoStacksError

            p = roots.resolve(path)
            need_trace(p, "breakdown")
            try:
                table = store.breakdown(p, by)
            except NoStacksError as exc:
                raise BadInputError(f"{label(p)}: by {by}: the trace {exc}.") from None
            hw = store.hardware(p) if by in ("op-shape", "step") else None
            return breakdown_answer(label(p), table, store.trace(p), hw, top, detail, cursor)

        return _answer(make, detail)

    @server.tool(annotations=READ_ONLY)
    def files(
        under: Annotated[
            str | None,
            Field(description="Only under this folder (relative to a served folder)"),
        ] = None,
        cursor: Cursor = 0,
        detail: Detail = False,
    ) -> Annotated[CallToolResult, schemas.FilesOut]:
        """What there is to open under the served folders: traces, rank folders and allocator snapshots, with their size; pass a path from it to the other tools."""

        def make() -> Figures:
            return files_answer(roots, under, cursor, detail)

        return _answer(make, detail)

    if allow_run:
        server.allow_run = True
        _add_profile(server, roots, store, label)
    return server


def files_answer(roots: Roots, under: str | None, cursor: int, detail: bool) -> Figures:
    """The ``files`` tool's answer: a page of what :func:`~gpuviz.agents.listing.openable`
    finds, and its figures (:class:`~gpuviz.agents.schemas.FilesOut`)."""
    from gpuviz.agents.answers import DETAIL_LIMIT, LIMIT, name
    from gpuviz.agents.listing import openable
    from gpuviz.agents.paging import Page, check_cursor, rows_that_fit
    from gpuviz.display import format_bytes

    folder = None
    if under is not None:
        folder = roots.resolve(under, "folder")
        if not folder.is_dir():
            raise BadInputError(f"{name(under, 200)}: not a folder.")
    entries, skipped = openable(roots, folder)
    check_cursor(cursor, len(entries))
    many = len(roots.paths) > 1
    lines = [
        f"  {e['kind']:<11}  {format_bytes(e['size_bytes']):>10}  "
        + (f"{e['files']} files  " if e["kind"] == "rank folder" else "")
        + name(e["path"] if not many else str(Path(e["root"]) / e["path"]), 300)
        for e in entries
    ]
    n = rows_that_fit(lines, (DETAIL_LIMIT if detail else LIMIT) - 600, cursor)
    page = Page(cursor, n, len(entries), len(entries))
    where = name(str(folder), 200) if folder is not None else str(roots)
    out = [f"Under {where}: {len(entries)} things gpuviz can open ({page.span('rows')} below)."]
    if not entries:
        out = [f"Under {where}: nothing gpuviz opens (.json, .json.gz traces; .pickle snapshots)."]
    out += lines[cursor : cursor + n]
    if (more := page.more_line()) is not None:
        out.append(more)
    out += [f"Not looked into: {name(x, 200)}." for x in skipped[:5]]
    data = {
        "roots": [str(r) for r in roots.paths],
        "page": page.to_json(),
        "entries": entries[cursor : cursor + n],
        "skipped": skipped,
    }
    return "\n".join(out), data


def _add_profile(
    server: MCPServer, roots: Roots, store: Store, label: Callable[[Path], str]
) -> None:
    """Register ``profile`` (only with ``--allow-run``: a server that runs no code does not
    offer it)."""

    @server.tool(
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, open_world_hint=False
        ),
    )
    def profile(
        script: Annotated[
            str, Field(description="The Python script to profile, under a served folder")
        ],
        args: Annotated[list[str], Field(description="The script's own arguments")] = [],  # noqa: B006
        options: Annotated[
            list[str],
            Field(
                description="gpuviz profile options: --skip N --warmup N --active N --repeat N "
                "--step-fn MOD:QUAL --duration S --record-shapes --stack --memory --memory-snapshot"
            ),
        ] = [],  # noqa: B006
        timeout_s: Annotated[
            float, Field(description="Stop the run after this many seconds (default 600)", gt=0)
        ] = 600.0,
        detail: Detail = False,
    ) -> Annotated[CallToolResult, schemas.ProfileOut]:
        """Run a script under gpuviz profile (a few steps, then it stops) and answer its overview."""

        def make() -> Figures:
            from gpuviz.agents.run_profile import run_profile

            p = roots.resolve(script, "script")
            if not p.is_file():
                raise BadInputError(f"{script}: not a file (profile runs a Python script).")
            root = next(r for r in roots.paths if p.is_relative_to(r))
            run = run_profile(p, list(args), list(options), root, timeout_s)
            return _profile_answer(run, label, store, detail)

        return _answer(make, detail)


def _profile_answer(
    run: object, label: Callable[[Path], str], store: Store, detail: bool
) -> Figures:
    from gpuviz.agents.run_profile import ProfileRun

    assert isinstance(run, ProfileRun)
    r = run.result
    if run.timed_out:
        head = "The run passed its time limit and was stopped"
    else:
        head = f"The script exited with status {run.exit_code}"
    steps = r.get("steps")
    if isinstance(steps, int):
        head += f"; {steps} steps"
    lines = [head + "."]
    data: dict[str, Any] = {
        "exit_code": run.exit_code,
        "timed_out": run.timed_out,
        "trace": None,
        "steps": steps if isinstance(steps, int) else None,
        "overview": None,
    }
    if run.trace is None:
        lines.append("No trace was written. Its last lines on stderr:")
        lines += [f"  {line}" for line in run.stderr_tail]
        return "\n".join(lines), data
    data["trace"] = label(run.trace)
    lines.append(f"Trace: {label(run.trace)}")
    if run.exit_code not in (0, None) or run.timed_out:
        lines += ["Its last lines on stderr:", *(f"  {x}" for x in run.stderr_tail[-8:])]
    lines.append("")
    text, data["overview"] = overview_of(run.trace, label(run.trace), store, detail)
    lines.append(text)
    return "\n".join(lines), data


def overview_of(p: Path, name: str, store: Store, detail: bool) -> Figures:
    """The ``overview`` of a trace: the advice, the summary, the MFU and where the device time
    goes (the op and module tables; a trace they fail on still gets the rest); its text and
    its figures (:class:`~gpuviz.agents.schemas.TraceOverview`)."""
    from gpuviz.agents.breakdown_answer import where_lines
    from gpuviz.agents.figures import trace_overview_json
    from gpuviz.analysis.breakdown import NoStacksError

    advice, summary = store.advice(p), store.summary(p)
    hw, where = None, []
    ops, modules, missing = None, None, None
    try:
        hw = store.hardware(p)
    except Exception:  # the overview stands without its MFU line
        log.exception("MFU failed")
    try:
        ops = store.breakdown(p, "op")
        try:
            modules = store.breakdown(p, "module")
        except NoStacksError:
            missing = "no Python stacks: record with gpuviz profile, or with_stack=True"
        where = where_lines(store.trace(p), ops, modules, missing)
    except Exception:  # nor without the top ops and modules
        log.exception("breakdown failed")
    text = trace_overview(name, advice, summary, detail, hw, where)
    figures = trace_overview_json(advice, summary, hw, ops, modules, missing)
    if figures.get("serving") is not None:  # a serving trace: its phases (docs/serving.md)
        from gpuviz.report.serving import serving_lines

        text += "\n\n" + "\n".join(serving_lines(figures["serving"]))
    return text, figures
