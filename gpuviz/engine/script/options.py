"""``gpuviz profile``'s options, the launcher's rank, and where the traces go (torch-free).

One process: ``--out`` names a trace file (``.json`` or ``.json.gz``), by default
``./gpuviz-runs/SCRIPT-YYYYmmdd-HHMMSS.json.gz``. Under a launcher that sets ``RANK`` and
``WORLD_SIZE`` (torchrun, or any other), ``--out`` names a folder that every rank writes
``rank-<RANK>.json.gz`` into, the layout ``gpuviz open`` merges; a file name there is refused,
because the ranks would overwrite one another. Windows after the first (``--repeat``) go beside
the first: ``NAME.window-2.json.gz``, or ``FOLDER/window-2/rank-R.json.gz``, so each window
opens on its own.
"""

from __future__ import annotations

import keyword
import os
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from gpuviz.engine.script.schedule import Schedule
from gpuviz.errors import BadInputError

TRACE_SUFFIXES = (".json.gz", ".json")
DEFAULT_DURATION_S = 10.0
DEFAULT_SNAPSHOT_ENTRIES = 100_000

_STEP_FN = re.compile(r"([A-Za-z_][\w.]*):([A-Za-z_<][\w.<>]*)")


@dataclass
class ProfileOptions:
    """What ``gpuviz profile`` runs and how (its flags; JSON-able).

    Exactly one of ``script`` and ``module`` is set; ``args`` are the script's own.
    """

    script: str | None = None
    module: str | None = None
    args: list[str] = field(default_factory=list)
    skip: int = 5
    warmup: int = 2
    active: int = 5
    repeat: int = 1
    stop: bool = False
    step_fn: str | None = None
    duration_s: float = DEFAULT_DURATION_S
    out: str | None = None
    events: str | None = None
    events_fd: int | None = None
    record_shapes: bool = False
    stack: bool = True
    stack_no_step: bool = False
    memory: bool = False
    memory_snapshot: bool = False
    snapshot_entries: int = DEFAULT_SNAPSHOT_ENTRIES
    compile_info: bool = False
    json: bool = False

    @property
    def schedule(self) -> Schedule:
        """The step schedule of ``--skip/--warmup/--active/--repeat``."""
        return Schedule(self.skip, self.warmup, self.active, self.repeat)

    def check(self) -> None:
        """Raise :class:`BadInputError` for a flag out of range (before anything runs)."""
        if (self.script is None) == (self.module is None):
            raise BadInputError("name a script (SCRIPT.py) or a module (-m MODULE) to profile")
        self.schedule.check()
        if self.stop and not self.repeat:
            raise BadInputError("--stop needs a number of windows: --repeat 0 never ends")
        if not self.duration_s > 0:
            raise BadInputError(f"--duration {self.duration_s:g}: must be more than 0 seconds")
        if self.snapshot_entries < 1:
            raise BadInputError(f"--snapshot-entries {self.snapshot_entries}: must be 1 or more")
        if self.step_fn is not None:
            parse_step_fn(self.step_fn)

    def to_json(self) -> dict[str, Any]:
        """The options as a plain dict (``Started.params``)."""
        return asdict(self)


def profile_argv(options: ProfileOptions) -> list[str]:
    """The ``gpuviz profile`` arguments that give ``options`` back (the script's last).

    Used to start ``gpuviz profile`` again: in torchrun's ranks (``--nproc-per-node``) and in
    the app's child process. ``--events``, ``--events-fd`` and ``--json`` are left to the
    caller.
    """
    d = ProfileOptions()
    argv: list[str] = []
    for flag, value, default in (
        ("--skip", options.skip, d.skip),
        ("--warmup", options.warmup, d.warmup),
        ("--active", options.active, d.active),
        ("--repeat", options.repeat, d.repeat),
        ("--duration", options.duration_s, d.duration_s),
        ("--snapshot-entries", options.snapshot_entries, d.snapshot_entries),
    ):
        if value != default:
            argv += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    for flag, on in (
        ("--stop", options.stop),
        ("--record-shapes", options.record_shapes),
        ("--no-stack", not options.stack),
        ("--stack", options.stack and options.stack_no_step),
        ("--memory", options.memory),
        ("--memory-snapshot", options.memory_snapshot),
        ("--compile-info", options.compile_info),
    ):
        if on:
            argv.append(flag)
    if options.step_fn:
        argv += ["--step-fn", options.step_fn]
    if options.out:
        argv += ["--out", options.out]
    if options.module is not None:
        argv += ["-m", options.module]
    else:
        assert options.script is not None
        # "--" keeps a script named like an option ("-x.py") a script.
        argv += ["--", options.script] if options.script.startswith("-") else [options.script]
    return argv + list(options.args)


def parse_step_fn(text: str) -> tuple[str, str]:
    """``MODULE:QUALNAME`` -> ``(module, qualname)``, e.g. ``model:GPT.forward``.

    Raises
    ------
    BadInputError
        Not of that form.
    """
    m = _STEP_FN.fullmatch(text.strip())
    parts = m.group(2).split(".") if m else []
    if (
        not m
        or any(not p.isidentifier() and p != "<locals>" for p in parts)
        or any(keyword.iskeyword(p) for p in parts)
    ):
        raise BadInputError(
            f"--step-fn {text}: expected MODULE:FUNCTION, e.g. __main__:generate or "
            "model:GPT.forward"
        )
    return m.group(1), m.group(2)


@dataclass(frozen=True)
class RankInfo:
    """This process's place in a launcher's job (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``)."""

    rank: int
    world_size: int
    local_rank: int


def launcher_rank(env: dict[str, str] | None = None) -> RankInfo | None:
    """The rank set by torchrun (or another launcher), or None outside one.

    Raises
    ------
    BadInputError
        ``RANK`` or ``WORLD_SIZE`` is not a number, or the rank is out of range.
    """
    env = dict(os.environ) if env is None else env
    if "RANK" not in env:
        return None
    try:
        rank = int(env["RANK"])
        world = int(env.get("WORLD_SIZE", "1"))
        local = int(env.get("LOCAL_RANK", str(rank)))
    except ValueError:
        raise BadInputError(
            f"RANK={env.get('RANK')!r} WORLD_SIZE={env.get('WORLD_SIZE')!r}: expected numbers"
        ) from None
    if world < 1 or not 0 <= rank < world:
        raise BadInputError(f"RANK={rank} WORLD_SIZE={world}: the rank must be below the size")
    return RankInfo(rank, world, local)


def is_trace_file_name(path: str) -> bool:
    """Whether ``path`` names a trace file (``.json``/``.json.gz``) rather than a folder."""
    return path.lower().endswith(TRACE_SUFFIXES)


@dataclass(frozen=True)
class OutPlan:
    """Where this process writes: a trace file, or its rank's file in a folder.

    Attributes
    ----------
    base : Path
        The trace file, or the folder of rank files.
    rank : int or None
        The rank (folder layout), or None (one file).
    """

    base: Path
    rank: int | None = None

    @property
    def is_folder(self) -> bool:
        """Whether the ranks' folder layout is used."""
        return self.rank is not None

    def window_path(self, window: int) -> Path:
        """The trace file of ``window`` (from 0)."""
        if self.rank is not None:
            folder = self.base if window == 0 else self.base / f"window-{window + 1}"
            return folder / f"rank-{self.rank}.json.gz"
        if window == 0:
            return self.base
        name = self.base.name
        suffix = next(s for s in TRACE_SUFFIXES if name.lower().endswith(s))
        return self.base.with_name(f"{name[: -len(suffix)]}.window-{window + 1}{suffix}")

    @property
    def trace(self) -> Path:
        """What ``gpuviz open`` should be given: the folder, or the first window's file."""
        return self.base if self.rank is not None else self.window_path(0)


def plan_output(
    out: str | None, stem: str, rank: RankInfo | None, now: datetime | None = None
) -> OutPlan:
    """Where the traces go (see the module docstring).

    Raises
    ------
    BadInputError
        A file name under a launcher, or a folder name without one.
    """
    if rank is not None:
        if out and is_trace_file_name(out):
            raise BadInputError(
                f"--out {out}: under a launcher (WORLD_SIZE={rank.world_size}) each rank writes "
                "its own rank-N.json.gz: give --out a folder"
            )
        base = Path(out) if out else _default_base(stem, True, now or _launcher_start())
        return OutPlan(base, rank.rank)
    if out and not is_trace_file_name(out):
        raise BadInputError(
            f"--out {out}: a trace file must end in .json or .json.gz (a folder is for the "
            "ranks of torchrun)"
        )
    return OutPlan(Path(out) if out else _default_base(stem, False, now))


def _default_base(stem: str, folder: bool, now: datetime | None) -> Path:
    from gpuviz.engine.request import default_trace_path

    return default_trace_path(stem, folder, now)


def _launcher_start() -> datetime | None:
    """When this process's launcher started: the same stamp for every local rank's folder."""
    try:
        import psutil

        return datetime.fromtimestamp(psutil.Process(os.getppid()).create_time())
    except Exception:
        return None


def rank_events_path(events: str, rank: RankInfo | None) -> str:
    """``--events E.jsonl`` for this process: ``E.rank-R.jsonl`` under a launcher."""
    if rank is None:
        return events
    p = Path(events)
    stem, suffix = (
        (p.name[: -len(".jsonl")], ".jsonl")
        if p.name.endswith(".jsonl")
        else (
            p.name,
            "",
        )
    )
    return str(p.with_name(f"{stem}.rank-{rank.rank}{suffix}"))


__all__ = [
    "DEFAULT_DURATION_S",
    "DEFAULT_SNAPSHOT_ENTRIES",
    "OutPlan",
    "ProfileOptions",
    "RankInfo",
    "is_trace_file_name",
    "launcher_rank",
    "parse_step_fn",
    "plan_output",
    "profile_argv",
    "rank_events_path",
]
