"""What the advisor says: findings with evidence, savings and severities (the JSON contract).

A :class:`Finding` names a problem (``kind``, one of :data:`KINDS`), says how bad it is in this
trace (``detail``), how to fix it (``fix``), what fixing it could save (``saving_ns`` and one
sentence on how that was estimated), and where to look (``evidence``: time ranges on ranks,
devices, streams or threads). ``gpuviz advise --json`` writes them as
``{kind, severity, title, detail, fix, saving_us, saving_total_us, saving_how, share, step_us,
saving_per_step_us, evidence[]}``.

Every saving a reader sees is per step: ``saving_us`` (and ``saving_per_step_us``, the same
figure) is :attr:`Finding.saving_per_step_ns`, the share of the mean step times that step,
never more than the step. ``saving_total_us`` (:attr:`Finding.saving_ns`) sums it over the
trace's steps, which no text states as a saving: an agent told "could save 211.5 ms (50% of
the step time)" of an 85 ms step read a sum over 5 steps as a step's. The steps it was
measured on ran under the profiler, which slows them (:func:`per_step_ns` scales it to
another pace); :func:`saving_phrase` is the text every command uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

KINDS = (
    "launch_bound",
    "host_sync",
    "pageable_copy",
    "gpu_starved",
    "fp32_matmul",
    "idle_devices",
    "dp_imbalance",
    "copy_not_overlapped",
    "exposed_comm",
    "straggler",
    "low_occupancy",
    "low_mfu",
    "memory_bound_hot",
    "eager_decode",
    "scheduler_gaps",
    "small_decode_batch",
    "mixed_step_slow",
)
"""Every finding kind, by its contract id."""

SEVERITIES = ("info", "warning", "critical")

CRITICAL_SHARE = 0.25
"""A saving of at least this share of the step time is critical…"""
WARNING_SHARE = 0.05
"""…at least this share is a warning, and less is info."""
REPORT_SHARE = 0.02
"""Below this share of the step time a rule stays silent: a healthy run has such crumbs."""

MAX_EVIDENCE = 10


def severity_for(share: float) -> str:
    """The default severity of a saving that is ``share`` of the step time."""
    if share >= CRITICAL_SHARE:
        return "critical"
    if share >= WARNING_SHARE:
        return "warning"
    return "info"


@dataclass(frozen=True)
class Evidence:
    """One place in the trace that shows a finding.

    Attributes
    ----------
    rank : int or None
        None for a lone file.
    device : int or None
        The GPU; None for CPU-side evidence.
    start_ns, end_ns : int
        The range, in ns from the trace zero.
    stream : int or None
        The GPU stream, where one stream shows it.
    thread : int or None
        The CPU thread id, where one thread shows it.
    names : list of str or None
        The kernels, copies, ops or calls involved (as in the trace: data, not markup).
    count : int or None
        How many events the range stands for.
    ops, modules, lines : tuple of str or None
        Where in the code the range's work comes from, most first (at most three each): the
        ops that launched it, their module paths and source lines
        (:mod:`gpuviz.analysis.advisor.where`); None where the trace cannot tell (no ops, no
        Python stacks).
    """

    rank: int | None
    device: int | None
    start_ns: int
    end_ns: int
    stream: int | None = None
    thread: int | None = None
    names: tuple[str, ...] | None = None
    count: int | None = None
    ops: tuple[str, ...] | None = None
    modules: tuple[str, ...] | None = None
    lines: tuple[str, ...] | None = None

    @property
    def where(self) -> str:
        """Where it is, in words: ``rank 1, GPU 0, stream 7`` (``trace`` when nothing says)."""
        parts = [
            f"{label} {value}"
            for label, value in (
                ("rank", self.rank),
                ("GPU", self.device),
                ("stream", self.stream),
                ("thread", self.thread),
            )
            if value is not None
        ]
        return ", ".join(parts) or "trace"

    def to_json(self) -> dict[str, Any]:
        """``{rank, device, stream?, thread?, start_us, end_us, names?, count?, ops?, modules?,
        lines?}``."""
        out: dict[str, Any] = {"rank": self.rank, "device": self.device}
        if self.stream is not None:
            out["stream"] = self.stream
        if self.thread is not None:
            out["thread"] = self.thread
        out["start_us"] = self.start_ns / 1000.0
        out["end_us"] = self.end_ns / 1000.0
        if self.names is not None:
            out["names"] = list(self.names)
        if self.count is not None:
            out["count"] = self.count
        for key in ("ops", "modules", "lines"):
            value = getattr(self, key)
            if value is not None:
                out[key] = list(value)
        return out


@dataclass(frozen=True)
class Finding:
    """One problem found in a trace.

    Attributes
    ----------
    kind : str
        One of :data:`KINDS`.
    severity : str
        ``info``, ``warning`` or ``critical``.
    title : str
        One line.
    detail : str
        This trace's numbers.
    fix : str
        What to change, with a code hint.
    saving_ns : int
        What fixing it could save, summed over the steps of the trace (see ``saving_how``);
        texts state :attr:`saving_per_step_ns` instead.
    saving_how : str
        One sentence: how ``saving_ns`` was estimated.
    share : float
        ``saving_ns`` over the step time it was measured against.
    evidence : tuple of Evidence
        Where to look, most telling first.
    step_ns : float
        The mean step of the steps ``saving_ns`` was measured over (0 when unknown).
    """

    kind: str
    severity: str
    title: str
    detail: str
    fix: str
    saving_ns: int
    saving_how: str
    share: float
    evidence: tuple[Evidence, ...] = field(default_factory=tuple)
    step_ns: float = 0.0

    @property
    def saving_per_step_ns(self) -> float:
        """What fixing it could save in one step, as measured (never more than the step)."""
        return per_step_ns(self.share, self.step_ns) if self.step_ns > 0 else float(self.saving_ns)

    def to_json(self) -> dict[str, Any]:
        """The finding as ``gpuviz advise --json`` writes it."""
        return {
            "kind": self.kind,
            "severity": self.severity,
            "title": self.title,
            "detail": self.detail,
            "fix": self.fix,
            "saving_us": self.saving_per_step_ns / 1000.0,
            "saving_total_us": self.saving_ns / 1000.0,
            "saving_how": self.saving_how,
            "share": self.share,
            "step_us": self.step_ns / 1000.0,
            "saving_per_step_us": self.saving_per_step_ns / 1000.0,
            "evidence": [e.to_json() for e in self.evidence],
        }


def per_step_ns(share: float, step_ns: float) -> float:
    """A saving that is ``share`` of the step time, in one step of ``step_ns``: at most the
    step itself (a share above 1, summed over several GPUs, is capped)."""
    return min(max(float(share), 0.0), 1.0) * float(step_ns)


def saving_phrase(
    saving_ns: float, share: float, step_ns: float, pace_ns: float | None = None
) -> str:
    """What a finding could save, per step, as the texts say it.

    ``pace_ns`` is the step time without the profiler, where it was measured (``gpuviz
    profile`` times its unprofiled steps): the saving's share of the step is then stated at
    that pace. Otherwise the saving is per step of the trace, said to be measured under the
    profiler. A trace without steps gets its total.
    """
    pct = fmt_pct(min(max(share, 0.0), 1.0))
    if pace_ns is not None and pace_ns > 0:
        return (
            f"~{fmt_ms(per_step_ns(share, pace_ns))} a step ({pct} of the "
            f"{fmt_ms(pace_ns)} unprofiled step)"
        )
    if step_ns > 0:
        return (
            f"{fmt_ms(per_step_ns(share, step_ns))} a step ({pct} of its {fmt_ms(step_ns)} "
            "step, measured under the profiler)"
        )
    return f"{fmt_ms(saving_ns)} over the trace ({fmt_pct(share)} of its time; it has no steps)"


def finding_saving(f: Finding, pace_ns: float | None = None) -> str:
    """:func:`saving_phrase` of a finding: ``1.2 ms a step (30% of its 4.0 ms step, …)``."""
    return saving_phrase(f.saving_ns, f.share, f.step_ns, pace_ns)


def fmt_ms(ns: float) -> str:
    """``12.3 ms`` / ``456 µs`` / ``7.8 µs``: a duration as people read it."""
    ns = float(ns)
    if abs(ns) >= 1e6:
        return f"{ns / 1e6:.1f} ms"
    if abs(ns) >= 1e4:
        return f"{ns / 1e3:.0f} µs"
    return f"{ns / 1e3:.1f} µs"


def fmt_bytes(n: float) -> str:
    """``256 MiB`` / ``12.0 KiB``."""
    n = float(n)
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}".replace(".0 ", " ")
    return f"{n:.0f} B"


def fmt_pct(share: float) -> str:
    """``12%``, ``0.4%``."""
    pct = 100.0 * share
    return f"{pct:.0f}%" if pct >= 10 else f"{pct:.1f}%"
