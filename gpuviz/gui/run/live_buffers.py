"""What a run has reported so far, in growable numpy buffers that the live plots read.

Qt-free and engine-free: :meth:`LiveRun.apply` takes any engine event (it dispatches on the
class name and reads attributes), so it works for events decoded from a child's pipe, from a
recorded file, or yielded by an in-thread Runner. Appending is O(1) amortized; the plots read
zero-copy views (:meth:`Column.view`). Each part keeps a version number, bumped on change, so
the ~30 Hz redraw timer redraws a plot only when its data moved (STYLE.md rule 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

NAN = float("nan")


class Column:
    """A float64 (or int64) column that grows by doubling; :meth:`view` is the filled part."""

    def __init__(self, dtype: Any = np.float64, capacity: int = 256) -> None:
        self._data = np.empty(capacity, dtype=dtype)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def append(self, value: float) -> None:
        """Add one value at the end."""
        if self._n == len(self._data):
            grown = np.empty(len(self._data) * 2, dtype=self._data.dtype)
            grown[: self._n] = self._data[: self._n]
            self._data = grown
        self._data[self._n] = value
        self._n += 1

    def truncate(self, n: int) -> None:
        """Keep the first ``n`` values."""
        self._n = max(0, min(n, self._n))

    def view(self) -> npt.NDArray[Any]:
        """The values so far (a view: valid until the next append)."""
        return self._data[: self._n]


def _num(v: Any) -> float:
    return NAN if v is None else float(v)


@dataclass
class MemoryColumns:
    """One device's memory samples: time (s from Started) and bytes (NaN where not reported)."""

    t_s: Column = field(default_factory=Column)
    rss_bytes: Column = field(default_factory=Column)
    allocated_bytes: Column = field(default_factory=Column)
    reserved_bytes: Column = field(default_factory=Column)
    nvml_used_bytes: Column = field(default_factory=Column)
    from_app: Column = field(default_factory=Column)  # 1.0: read by the app, not the engine

    def __len__(self) -> int:
        return len(self.t_s)

    def has(self, name: str) -> bool:
        """Whether any sample of this device reported ``name`` (``allocated_bytes``...)."""
        col: Column = getattr(self, name)
        return bool(len(col)) and bool(np.isfinite(col.view()).any())


@dataclass
class SplitBar:
    """One DataParallel replica's share of a step."""

    replica: int
    device: str
    rows: int
    gpu_ms: float | None


class LiveRun:
    """The buffers of one run (or one replayed event stream).

    Attributes
    ----------
    workload, device : str
        From ``Started``.
    devices : list of str
        Every device of the run.
    step, total : int
        Progress (``total`` 0 until the first ``Progress``).
    labels : list of str
        Strategy names in the order their first step came.
    step_index, wall_ms, gpu_ms, profiled, label_id : Column
        One entry per ``StepTimed`` (``gpu_ms`` NaN on the CPU; ``profiled`` 0/1).
    memory : dict of str to MemoryColumns
        Per device.
    splits : dict of int to list of SplitBar
        Per step, the replicas in order.
    trace_path : str or None
        The last ``TraceReady`` path.
    terminal : object or None
        The ``Finished``/``Failed``/``Cancelled`` event, once it came.
    versions : dict of str to int
        ``steps``, ``memory``, ``splits``, ``progress``: bumped on each change.
    """

    def __init__(self) -> None:
        self.workload = ""
        self.device = ""
        self.devices: list[str] = []
        self.params: dict[str, Any] = {}
        self.step = 0
        self.total = 0
        self.labels: list[str] = []
        self.step_index = Column(np.int64)
        self.wall_ms = Column()
        self.gpu_ms = Column()
        self.profiled = Column(np.int64)
        self.label_id = Column(np.int64)
        self.last_step: dict[str, float] = {}
        self.last_label = ""
        self.memory: dict[str, MemoryColumns] = {}
        self.splits: dict[int, list[SplitBar]] = {}
        self.trace_path: str | None = None
        self.terminal: Any = None
        self.versions = {"steps": 0, "memory": 0, "splits": 0, "progress": 0}
        self.last_engine_sample_t_s = -math.inf

    # -- events -----------------------------------------------------------------------------
    def apply(self, event: Any) -> None:
        """Record one engine event (any of ``gpuviz.engine.events``)."""
        handler = getattr(self, f"_on_{type(event).__name__}", None)
        if handler is not None:
            handler(event)

    def _on_Started(self, e: Any) -> None:
        self.workload = str(e.workload)
        self.device = str(e.device)
        self.devices = [str(d) for d in e.devices]
        self.params = dict(e.params)
        self.versions["progress"] += 1

    def _on_Progress(self, e: Any) -> None:
        self.step, self.total = int(e.step), int(e.total)
        self.versions["progress"] += 1

    def _on_StepTimed(self, e: Any) -> None:
        if e.label not in self.labels:
            self.labels.append(e.label)
        self.step_index.append(int(e.step))
        self.wall_ms.append(float(e.wall_ms))
        self.gpu_ms.append(_num(e.gpu_ms))
        self.profiled.append(1 if e.profiled else 0)
        self.label_id.append(self.labels.index(e.label))
        self.last_step = {"step": e.step, "wall_ms": e.wall_ms, "gpu_ms": _num(e.gpu_ms)}
        self.last_label = e.label
        self.versions["steps"] += 1
        self.versions["progress"] += 1

    def _on_MemorySample(self, e: Any) -> None:
        self.add_memory(
            e.device,
            e.t_s,
            e.rss_bytes,
            e.allocated_bytes,
            e.reserved_bytes,
            e.nvml_used_bytes,
        )
        self.last_engine_sample_t_s = max(self.last_engine_sample_t_s, float(e.t_s))

    def add_memory(
        self,
        device: str,
        t_s: float,
        rss_bytes: float | None,
        allocated_bytes: float | None = None,
        reserved_bytes: float | None = None,
        nvml_used_bytes: float | None = None,
        *,
        from_app: bool = False,
    ) -> None:
        """Append one memory reading of ``device`` (the engine's, or one the app read itself)."""
        cols = self.memory.get(device)
        if cols is None:
            cols = self.memory[device] = MemoryColumns()
        if not from_app:
            # An engine sample that was delayed (the child's GIL was held) replaces the app's
            # stand-in readings after its time, so the curve never runs backwards.
            n = len(cols)
            while n and cols.from_app.view()[n - 1] and cols.t_s.view()[n - 1] >= t_s:
                n -= 1
            if n != len(cols):
                for c in (cols.t_s, cols.rss_bytes, cols.allocated_bytes, cols.reserved_bytes):
                    c.truncate(n)
                cols.nvml_used_bytes.truncate(n)
                cols.from_app.truncate(n)
        cols.t_s.append(float(t_s))
        cols.rss_bytes.append(_num(rss_bytes))
        cols.allocated_bytes.append(_num(allocated_bytes))
        cols.reserved_bytes.append(_num(reserved_bytes))
        cols.nvml_used_bytes.append(_num(nvml_used_bytes))
        cols.from_app.append(1.0 if from_app else 0.0)
        self.versions["memory"] += 1

    def _on_SplitRecorded(self, e: Any) -> None:
        bars = self.splits.setdefault(int(e.step), [])
        bars.append(SplitBar(int(e.replica), str(e.device), int(e.rows), e.gpu_ms))
        self.versions["splits"] += 1

    def _on_TraceReady(self, e: Any) -> None:
        self.trace_path = str(e.path)

    def _on_Finished(self, e: Any) -> None:
        self.terminal = e
        self.versions["progress"] += 1

    def _on_Failed(self, e: Any) -> None:
        self.terminal = e
        if e.partial_trace_path:
            self.trace_path = str(e.partial_trace_path)
        self.versions["progress"] += 1

    def _on_Cancelled(self, e: Any) -> None:
        self.terminal = e
        if e.partial_trace_path:
            self.trace_path = str(e.partial_trace_path)
        self.versions["progress"] += 1

    # -- reading ----------------------------------------------------------------------------
    @property
    def steps_timed(self) -> int:
        """How many ``StepTimed`` events came."""
        return len(self.wall_ms)

    def latest_split_step(self) -> int | None:
        """The last step that has split bars, or None."""
        return max(self.splits) if self.splits else None

    def split_devices(self) -> list[str]:
        """Every device that got a replica in any step, in first-seen order."""
        seen: list[str] = []
        for bars in self.splits.values():
            for b in bars:
                if b.device not in seen:
                    seen.append(b.device)
        return seen


__all__ = ["Column", "LiveRun", "MemoryColumns", "SplitBar"]
