"""The ``gpuviz mcp`` server: gpuviz's analyses as MCP tools, on the official ``mcp`` SDK.

:func:`build_server` registers the tools on an :class:`mcp.server.mcpserver.MCPServer`; the SDK
writes each tool's JSON schema from its type hints and speaks the protocol (stdio here). Every
path goes through :class:`~gpuviz.agents.confine.Roots` first. A tool that cannot answer (a
path refused, a missing file, a damaged trace, a pickle that would load a class) returns a tool
error of one sentence; nothing an agent sends ends the server.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

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
from gpuviz.display import terminal_safe
from gpuviz.errors import BadInputError

log = logging.getLogger("gpuviz.mcp")

INSTRUCTIONS = (
    "gpuviz reads PyTorch profiler (Kineto) traces, folders of per-rank traces and CUDA "
    "allocator snapshots, and says why a training or inference step is slow or where its "
    "memory goes. Start with overview(path): it names the main problem and its fix. Then "
    "findings(path) for the evidence, events(path, start_us, end_us) for the slices of a time "
    "range, breakdown(path, by) for the time by op, op and shapes (with the roofline), module, "
    "source line, kernel or step (with MFU), memory(path) for allocator snapshots, compare(a, b) for two runs. Paths are "
    "relative to the served folders. Times are µs (or ms where marked) from the trace start."
)

PathArg = Annotated[
    str,
    Field(
        description="A trace (.json or .json.gz), a folder of per-rank traces, or an allocator "
        "snapshot (.pickle, .pickle.gz); relative to the served folder, or absolute inside it"
    ),
]
Detail = Annotated[bool, Field(description="Longer answer: every finding, more rows, whole names")]

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def _answer(make: Callable[[], str], detail: bool) -> str:
    """Run one tool's work; a failure becomes a tool error of one sentence."""
    try:
        return fit(make(), detail)
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


def build_server(roots: Roots, allow_run: bool = False, store: Store | None = None) -> MCPServer:
    """The server with every tool registered.

    Parameters
    ----------
    roots : Roots
        The folders it may read.
    allow_run : bool
        Whether ``profile`` may run scripts (``--allow-run``).
    store : Store, optional
        Where opened files are kept (a fresh one by default).
    """
    from gpuviz import __version__

    store = store if store is not None else Store()
    server = MCPServer(
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

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def overview(path: PathArg, detail: Detail = False) -> str:
        """Start here: what a trace, rank folder or snapshot is, where step time goes, MFU, the ops and modules that take the device time, and the top problems with their fixes."""

        def make() -> str:
            p = roots.resolve(path)
            if is_snapshot(p):
                return snapshot_answer(
                    label(p), store.snapshot(p), store.snapshot_figures(p), None, detail
                )
            return overview_of(p, label(p), store, detail)

        return _answer(make, detail)

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def findings(
        path: PathArg,
        kind: Annotated[
            str | None,
            Field(description="Only this kind (launch_bound, host_sync, gpu_starved, …)"),
        ] = None,
        detail: Detail = False,
    ) -> str:
        """The advisor's findings with evidence (time ranges, ranks, kernels, and the ops, modules and source lines behind them): use after overview to see where a problem shows."""

        def make() -> str:
            from gpuviz.analysis.advisor import KINDS

            if kind is not None and kind not in KINDS:
                raise BadInputError(
                    f"kind {kind!r} is not a finding kind; kinds: {', '.join(KINDS)}."
                )
            p = roots.resolve(path)
            need_trace(p, "findings")
            return findings_answer(label(p), store.advice(p), kind, detail)

        return _answer(make, detail)

    @server.tool(annotations=READ_ONLY, structured_output=False)
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
            int, Field(description=f"Most slices to list (default {EVENTS_LIMIT})", ge=1)
        ] = EVENTS_LIMIT,
        detail: Detail = False,
    ) -> str:
        """The slices (kernels, copies, ops, runtime calls) in a time range, earliest first: use to look at one step or one finding's evidence."""

        def make() -> str:
            if not end_us > start_us:
                raise BadInputError(f"end_us ({end_us:g}) must be after start_us ({start_us:g}).")
            p = roots.resolve(path)
            need_trace(p, "events")
            n = min(int(limit), EVENTS_MAX)
            return events_answer(label(p), store.trace(p), start_us, end_us, lane, name, n, detail)

        return _answer(make, detail)

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def memory(
        path: PathArg,
        at_us: Annotated[
            float | None,
            Field(
                description="Also what was allocated then: µs from the start of the snapshot's history (or of the trace)"
            ),
        ] = None,
        detail: Detail = False,
    ) -> str:
        """GPU memory: for an allocator snapshot the peak, out-of-memory, and top allocation sites with stacks; for a trace its memory peaks."""

        def make() -> str:
            p = roots.resolve(path)
            if is_snapshot(p):
                return snapshot_answer(
                    label(p), store.snapshot(p), store.snapshot_figures(p), at_us, detail
                )
            summary = store.summary(p)
            return trace_memory_answer(label(p), summary, at_us, _snapshots_beside(p))

        return _answer(make, detail)

    def _snapshots_beside(p: Path) -> list[str]:
        from gpuviz.trace.allocator_snapshot import snapshot_path_for

        found = []
        for cand in (snapshot_path_for(p), Path(str(snapshot_path_for(p)) + ".gz")):
            if cand.is_file() and roots.contains(cand.resolve()):
                found.append(label(cand.resolve()))
        return found

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def compare(
        a: Annotated[str, Field(description="The baseline run's trace (file or rank folder)")],
        b: Annotated[str, Field(description="The new run's trace, compared with a")],
        detail: Detail = False,
    ) -> str:
        """Two runs of a job side by side: step time, its parts, peak memory, MFU, new and gone findings, the kernels, ops and modules that changed most."""

        def make() -> str:
            from gpuviz.analysis.run_compare import compare_runs
            from gpuviz.report.comparison import format_comparison_brief

            pa, pb = roots.resolve(a), roots.resolve(b)
            need_trace(pa, "compare")
            need_trace(pb, "compare")
            cmp = compare_runs(store.advice(pa), store.advice(pb))
            return format_comparison_brief(
                cmp, rows=25 if detail else 8, labels=(label(pa), label(pb))
            )

        return _answer(make, detail)

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def breakdown(
        path: PathArg,
        by: Annotated[
            str,
            Field(
                description="op; op-shape (with roofline: TFLOP/s, bound, share of the roof); "
                "module or line (need Python stacks); kernel; step (with MFU)"
            ),
        ] = "op",
        top: Annotated[int, Field(description=f"Rows to list (default {TOP}; 0: all)", ge=0)] = TOP,
        detail: Detail = False,
    ) -> str:
        """Where device and CPU time went by op, op and input shapes, module, source line, kernel or step: use to find which code to change."""

        def make() -> str:
            from gpuviz.agents.breakdown_answer import breakdown_answer
            from gpuviz.analysis.breakdown import NoStacksError
            from gpuviz.analysis.breakdown_table import BY_VALUES

            # Checked here, not by a Literal in the schema: the SDK's validation error is a
            # multi-line pydantic report, and a refusal is one sentence.
            if by not in BY_VALUES:
                raise BadInputError(f"by {by!r}: expected one of {', '.join(BY_VALUES)}.")
            p = roots.resolve(path)
            need_trace(p, "breakdown")
            try:
                table = store.breakdown(p, by)
            except NoStacksError as exc:
                raise BadInputError(f"{label(p)}: by {by}: the trace {exc}.") from None
            hw = store.hardware(p) if by in ("op-shape", "step") else None
            return breakdown_answer(label(p), table, store.trace(p), hw, top, detail)

        return _answer(make, detail)

    @server.tool(
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, open_world_hint=False
        ),
        structured_output=False,
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
            float, Field(description="Stop the run after this many seconds (default 600)")
        ] = 600.0,
        detail: Detail = False,
    ) -> str:
        """Run a script under gpuviz profile (a few steps, then it stops) and answer its overview; only if the server allows running code."""

        def make() -> str:
            if not allow_run:
                raise BadInputError(
                    "profile is off: this server was started without --allow-run, so it runs "
                    "no code; record with gpuviz profile yourself and call overview on the trace."
                )
            from gpuviz.agents.run_profile import run_profile

            p = roots.resolve(script, "script")
            if not p.is_file():
                raise BadInputError(f"{script}: not a file (profile runs a Python script).")
            root = next(r for r in roots.paths if p.is_relative_to(r))
            run = run_profile(p, list(args), list(options), root, timeout_s)
            return _profile_answer(run, label, store, detail)

        return _answer(make, detail)

    return server


def _profile_answer(run: object, label: Callable[[Path], str], store: Store, detail: bool) -> str:
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
    if run.trace is None:
        lines.append("No trace was written. Its last lines on stderr:")
        lines += [f"  {line}" for line in run.stderr_tail]
        return "\n".join(lines)
    lines.append(f"Trace: {label(run.trace)}")
    if run.exit_code not in (0, None) or run.timed_out:
        lines += ["Its last lines on stderr:", *(f"  {x}" for x in run.stderr_tail[-8:])]
    lines.append("")
    lines.append(overview_of(run.trace, label(run.trace), store, detail))
    return "\n".join(lines)


def overview_of(p: Path, name: str, store: Store, detail: bool) -> str:
    """The ``overview`` of a trace: the advice, the summary, the MFU and where the device time
    goes (the op and module tables; a trace they fail on still gets the rest)."""
    from gpuviz.agents.breakdown_answer import where_lines
    from gpuviz.analysis.breakdown import NoStacksError

    advice, summary = store.advice(p), store.summary(p)
    hw, where = None, []
    try:
        hw = store.hardware(p)
    except Exception:  # the overview stands without its MFU line
        log.exception("MFU failed")
    try:
        ops = store.breakdown(p, "op")
        modules, missing = None, None
        try:
            modules = store.breakdown(p, "module")
        except NoStacksError:
            missing = "no Python stacks: record with gpuviz profile, or with_stack=True"
        where = where_lines(store.trace(p), ops, modules, missing)
    except Exception:  # nor without the top ops and modules
        log.exception("breakdown failed")
    return trace_overview(name, advice, summary, detail, hw, where)
