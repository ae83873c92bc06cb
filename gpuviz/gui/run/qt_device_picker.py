"""The device picker: the CPU, each GPU with its name, memory and current use (NVML), a GPU set.

GPUs are listed from NVML (``nvidia-ml-py``), never from torch, so the app does not load torch
to draw its panel. NVML numbers GPUs in PCI order; CUDA numbers the visible ones, so a
``CUDA_VISIBLE_DEVICES`` list of indices or UUIDs is applied to give CUDA's numbering. Where
NVML is missing (no driver, no GPU) the picker offers the CPU only.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

REFRESH_MS = 2000
"""How often the GPUs' memory and use are read again."""


@dataclass(frozen=True)
class GpuInfo:
    """One visible GPU, numbered as CUDA numbers it (``cuda:index``)."""

    index: int
    name: str
    total_bytes: int
    used_bytes: int | None = None
    utilization_pct: float | None = None

    def describe(self) -> str:
        """``cuda:0  NVIDIA H100 — 3.1 / 80.0 GiB, 12%``."""
        gib = float(1 << 30)
        used = "" if self.used_bytes is None else f"{self.used_bytes / gib:.1f} / "
        util = "" if self.utilization_pct is None else f", {self.utilization_pct:.0f}%"
        return f"cuda:{self.index}  {self.name} — {used}{self.total_bytes / gib:.1f} GiB{util}"


def _visible(count: int, uuids: list[str]) -> list[int]:
    """NVML indices in CUDA's order, from ``CUDA_VISIBLE_DEVICES``."""
    text = os.environ.get("CUDA_VISIBLE_DEVICES")
    if text is None:
        return list(range(count))
    out: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            break
        if part.isdigit():
            i = int(part)
            if i >= count:
                break  # CUDA stops at the first invalid entry
            out.append(i)
            continue
        match = [i for i, u in enumerate(uuids) if u.startswith(part) or u.endswith(part)]
        if len(match) != 1:
            break
        out.append(match[0])
    return out


_NVML: list[object] = []  # the initialized pynvml module, once (init costs far more than reads)


def _nvml() -> object | None:
    if _NVML:
        return _NVML[0]
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:
        return None
    _NVML.append(pynvml)
    return pynvml


def query_gpus() -> list[GpuInfo]:
    """The GPUs NVML sees, numbered as CUDA will number them; [] where there is no NVML."""
    pynvml: Any = _nvml()
    if pynvml is None:
        return []
    try:
        count = int(pynvml.nvmlDeviceGetCount())
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        uuids = []
        for h in handles:
            try:
                u = pynvml.nvmlDeviceGetUUID(h)
                uuids.append(u.decode() if isinstance(u, bytes) else str(u))
            except Exception:
                uuids.append("")
        out = []
        for cuda_index, nvml_index in enumerate(_visible(count, uuids)):
            h = handles[nvml_index]
            name = pynvml.nvmlDeviceGetName(h)
            name = name.decode() if isinstance(name, bytes) else str(name)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            try:
                util: float | None = float(pynvml.nvmlDeviceGetUtilizationRates(h).gpu)
            except Exception:
                util = None
            out.append(GpuInfo(cuda_index, name, int(mem.total), int(mem.used), util))
        return out
    except Exception:
        return []


class QtDevicePicker(QWidget):
    """Pick the run's device (CPU or one GPU) and, for multi-GPU workloads, its GPU set.

    Signals
    -------
    changed()
        The device or the GPU set changed.

    Parameters
    ----------
    gpus : sequence of GpuInfo, optional
        The GPUs to offer (tests); by default they are read from NVML, and re-read every
        :data:`REFRESH_MS` to show current use.
    """

    changed = Signal()

    def __init__(
        self, gpus: Sequence[GpuInfo] | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._live = gpus is None
        self.gpus: list[GpuInfo] = list(query_gpus() if gpus is None else gpus)
        self._multi_gpu = False

        self.combo = QComboBox()
        self.combo.setToolTip("Where the workload runs")
        self.combo.addItem("CPU", "cpu")
        for g in self.gpus:
            self.combo.addItem(g.describe(), f"cuda:{g.index}")
        if self.gpus:
            self.combo.setCurrentIndex(1)  # like the CLI: cuda when there is one
        self.combo.currentIndexChanged.connect(self._on_device_changed)

        self.gpu_box = QGroupBox("GPU set (multi-GPU workloads)")
        box = QVBoxLayout(self.gpu_box)
        box.setContentsMargins(6, 4, 6, 4)
        self.gpu_checks: list[QCheckBox] = []
        for g in self.gpus:
            cb = QCheckBox(g.describe())
            cb.setChecked(True)
            cb.toggled.connect(self._on_gpus_toggled)
            box.addWidget(cb)
            self.gpu_checks.append(cb)
        self.gpu_note = QLabel()
        self.gpu_note.setWordWrap(True)
        box.addWidget(self.gpu_note)

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.combo, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.gpu_box)
        if not self.gpus:
            self.combo.setToolTip("No GPU found (NVML): workloads run on the CPU")
        self._update_gpu_box()

        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self._on_refresh)
        if self._live and self.gpus:
            self.timer.start()

    # -- public -----------------------------------------------------------------------------
    def device(self) -> str:
        """``cpu`` or ``cuda:N``."""
        return str(self.combo.currentData())

    def set_device(self, text: str) -> bool:
        """Pick ``text`` (``cpu``, ``cuda`` or ``cuda:N``); False when it is not offered."""
        text = "cuda:0" if text == "cuda" else text
        i = self.combo.findData(text)
        if i < 0:
            return False
        self.combo.setCurrentIndex(i)
        return True

    def gpu_set(self) -> list[int]:
        """The checked GPUs' CUDA indices."""
        return [g.index for g, cb in zip(self.gpus, self.gpu_checks) if cb.isChecked()]

    def gpus_text(self) -> str | None:
        """``--gpus`` for the run: the set (``0,2``) for multi-GPU workloads on CUDA, else None."""
        if not self._multi_gpu or self.device() == "cpu" or not self.gpus:
            return None
        return ",".join(str(i) for i in self.gpu_set())

    def set_gpus(self, text: str | None) -> None:
        """Check the GPUs of a ``--gpus`` text (``2`` = the first two, or ``0,2``)."""
        if not text:
            return
        t = text.strip()
        ids = set(range(int(t))) if t.isdigit() else {int(v) for v in t.split(",") if v.strip()}
        for g, cb in zip(self.gpus, self.gpu_checks):
            cb.setChecked(g.index in ids)

    def set_multi_gpu(self, multi_gpu: bool) -> None:
        """Show the GPU set for a multi-GPU workload."""
        self._multi_gpu = multi_gpu
        self._update_gpu_box()

    def problem(self) -> str | None:
        """Why Run cannot go ahead with this choice, or None."""
        if self._multi_gpu and self.device() != "cpu" and self.gpus and not self.gpu_set():
            return "pick at least one GPU for this multi-GPU workload"
        return None

    # -- handlers ---------------------------------------------------------------------------
    def _update_gpu_box(self) -> None:
        self.gpu_box.setVisible(self._multi_gpu)
        on_cpu = self.device() == "cpu"
        for cb in self.gpu_checks:
            cb.setEnabled(not on_cpu)
        if not self.gpus:
            self.gpu_note.setText(
                "No GPU here: on the CPU, DataParallel runs its module directly, DDP uses 2 "
                "gloo processes, model parallel runs its stages in turn."
            )
        elif on_cpu:
            self.gpu_note.setText("The CPU was picked: the GPU set is not used.")
        else:
            self.gpu_note.setText("")
        self.gpu_note.setVisible(bool(self.gpu_note.text()))

    def _on_device_changed(self, _index: int) -> None:
        self._update_gpu_box()
        self.changed.emit()

    def _on_gpus_toggled(self, _on: bool) -> None:
        self.changed.emit()

    def _on_refresh(self) -> None:
        fresh = {g.index: g for g in query_gpus()}
        for i, g in enumerate(self.gpus):
            if g.index in fresh:
                self.gpus[i] = fresh[g.index]
                self.combo.setItemText(i + 1, fresh[g.index].describe())
                self.gpu_checks[i].setText(fresh[g.index].describe())


__all__ = ["REFRESH_MS", "GpuInfo", "QtDevicePicker", "query_gpus"]
