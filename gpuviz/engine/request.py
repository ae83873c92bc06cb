"""What to run: :class:`RunRequest` (``gpuviz run``'s flags as data) and the default trace path.

Shared by the executors (:mod:`gpuviz.engine.runner`, :mod:`gpuviz.engine.inprocess`,
:mod:`gpuviz.engine.multiprocess`, :mod:`gpuviz.engine.child`); imports nothing heavy.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from gpuviz.workloads.registry import DEFAULT_STEPS


@dataclass
class RunRequest:
    """What to run: the same fields as ``gpuviz run``'s flags; JSON-able (sent to children).

    ``params`` holds typed values (already parsed from ``-p`` text); missing ones take their
    defaults. ``out`` None means :func:`default_trace_path`. ``profile`` False records no trace.
    """

    workload: str
    params: dict[str, Any] = field(default_factory=dict)
    device: str | None = None
    gpus: str | None = None
    steps: int = DEFAULT_STEPS
    out: str | None = None
    profile: bool = True
    rank_timeout_s: float = 300.0
    memory_snapshot: bool = False  # record allocator history (--memory-snapshot)
    snapshot_entries: int = 100_000

    def to_json(self) -> dict[str, Any]:
        """The request as a plain dict."""
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> RunRequest:
        """The request of :meth:`to_json`'s dict."""
        return cls(**obj)


def default_trace_path(
    workload: str, multi_process: bool = False, now: datetime | None = None
) -> Path:
    """``./gpuviz-runs/NAME-YYYYmmdd-HHMMSS.json.gz`` (a folder for multi-process workloads)."""
    name = workload
    if ":" in workload:  # FILE.py:FUNC -> FILE-FUNC
        path, _, func = workload.rpartition(":")
        name = f"{Path(path).stem}-{func}"
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    return Path("gpuviz-runs") / (f"{name}-{stamp}" if multi_process else f"{name}-{stamp}.json.gz")


__all__ = ["RunRequest", "default_trace_path"]
