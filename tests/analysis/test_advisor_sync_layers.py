"""Cause before symptom: launch-bound gaps that follow host syncs are the syncs' (issue 47, item 9).

A loop with ``torch.cuda.synchronize()`` and ``.item()`` after each layer ranked
``launch_bound`` first (31%) and ``host_sync`` second (5.8%); but each sync empties the GPU's
queue, so the launches after it each leave the GPU waiting, and CUDA graphs (the launch-bound
fix) cannot capture a sync. The traces here are simulated launch by launch: every gap, and so
every saving, is worked out by the simulation, not by gpuviz.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from synthetic_trace import Ev, ev, make_trace

from gpuviz.analysis.advisor import advise
from gpuviz.trace.model import Kind
from gpuviz.trace.stacking import stack_depths

K, C, ANN, OP, RT = Kind.KERNEL, Kind.MEMCPY, Kind.USER_ANNOTATION, Kind.CPU_OP, Kind.RUNTIME
US = 1000
LAUNCH_NS, START_NS = 5 * US, 3 * US  # a launch call's length; a kernel's start after it


@dataclass
class Loop:
    """A CPU thread launching onto one stream; the GPU runs each item when it is free.

    It keeps, by construction, what each GPU idle gap is owed to: after a sync that blocked
    the CPU for B, the gaps until the next sync are the sync's up to B in all (the CPU would
    have queued that much further ahead without it); the rest of them is launch time.
    """

    cpu: int = 0
    gpu_free: int = 0
    corr: int = 1
    credit: int = 0  # what the last sync's blocked time has left to cover
    events: list[Ev] = field(default_factory=list)
    by_sync: int = 0  # gap time the syncs account for
    by_launch: int = 0  # the rest
    syncs: int = 0

    def launch(self, name: str, dur: int, python: int, kind: Kind = K) -> None:
        self.cpu += python
        op0 = self.cpu
        self.events.append(ev(RT, self.cpu + US, LAUNCH_NS, "cudaLaunchKernel", corr=self.corr))
        self.cpu += US + LAUNCH_NS
        k0 = max(self.gpu_free, self.cpu + START_NS)
        if k0 > self.gpu_free and self.gpu_free > 0:
            gap = k0 - self.gpu_free
            mine = min(gap, self.credit)
            self.by_sync += mine
            self.by_launch += gap - mine
            self.credit -= gap
        self.credit = max(self.credit, 0)
        self.events.append(ev(kind, k0, dur, name, corr=self.corr, stream=7))
        self.events.append(ev(OP, op0, self.cpu + US - op0, f"aten::{name}"))
        self.cpu += US
        self.gpu_free, self.corr = k0 + dur, self.corr + 1

    def sync(self, call: str, op: str | None = None) -> None:
        end = max(self.cpu, self.gpu_free) + 2 * US
        self.events.append(ev(RT, self.cpu, end - self.cpu, call))
        if op:
            self.events.append(ev(OP, self.cpu - US, end - self.cpu + 2 * US, op))
        self.credit = end - self.cpu
        self.syncs += 1
        self.cpu = end + US if op else end


def _sync_layers(steps: int, addmm_ns: int) -> Loop:
    """8 layers a step: addmm, relu, synchronize(), then sum, div, mul of the result and its
    .item() (a copy and a stream sync), with 25 µs of Python between the small ops."""
    loop = Loop()
    for n in range(steps):
        c0 = loop.cpu
        for _ in range(8):
            loop.launch("addmm", addmm_ns, 3 * US)
            loop.launch("relu", 4 * US, 3 * US)
            loop.sync("cudaDeviceSynchronize")
            loop.launch("sum", 3 * US, 3 * US)
            loop.launch("div", 3 * US, 25 * US)
            loop.launch("mul", 3 * US, 25 * US)
            loop.launch("Memcpy DtoH (Device -> Pageable)", 2 * US, 25 * US, kind=C)
            loop.sync("cudaStreamSynchronize", op="aten::item")
        loop.events.append(ev(ANN, c0, loop.cpu - c0, f"ProfilerStep#{n}"))
    return loop


def _trace(loop: Loop):
    trace = make_trace(loop.events)
    s = trace.slices
    s.depth = stack_depths(s.track, s.start_ns, s.dur_ns)
    for info in trace.ranks:
        info.metadata["deviceProperties"] = [{"id": 0, "name": "NVIDIA H100", "numSms": 132}]
    return trace


def test_gaps_after_syncs_are_the_syncs_and_host_sync_comes_first() -> None:
    # GPU-bound layers (addmm 150 µs): each synchronize() blocks the CPU ~150 µs, more than the
    # launch gaps after it: without the syncs the CPU would have queued all of that work.
    loop = _sync_layers(3, 150 * US)
    advice = advise(_trace(loop))
    kinds = [f.kind for f in advice.findings]
    assert kinds[0] == "host_sync", kinds
    # By the simulation: the gaps each sync's blocked time covers, summed (the last sync's
    # gap, after the trace's last work, is none).
    f = advice.findings[0]
    assert f.saving_ns == loop.by_sync
    # Only the part of the gaps after the .item()s' short stream syncs is left to launches.
    assert 0 < loop.by_launch < 0.1 * loop.by_sync
    assert "launch_bound" not in kinds  # no launch gap is left that a sync does not explain


def test_a_cpu_bound_sync_loop_puts_host_sync_before_launch_bound() -> None:
    # Tiny layers (addmm 2 µs): the CPU is the bottleneck, the syncs barely block it, so their
    # own saving is small; but 16 syncs a step split it where no CUDA graph can reach.
    advice = advise(_trace(_sync_layers(3, 2 * US)))
    kinds = [f.kind for f in advice.findings]
    assert kinds[:2] == ["host_sync", "launch_bound"], kinds
    hs, lb = advice.findings[0], advice.findings[1]
    assert hs.severity in ("warning", "critical")
    assert "Remove them first" in hs.detail and "follow host syncs" in lb.detail
    assert hs.saving_ns < lb.saving_ns  # the savings stay as measured


def test_one_item_a_step_leaves_launch_bound_first() -> None:
    # A CPU-bound loop of 40 small kernels a step and one loss.item() at its end: the step's
    # body is a CUDA graph's to capture, so launch_bound stays the top finding.
    loop = Loop()
    for n in range(3):
        c0 = loop.cpu
        for _ in range(40):
            loop.launch("add", 3 * US, 20 * US)
        loop.launch("Memcpy DtoH (Device -> Pageable)", 2 * US, 5 * US, kind=C)
        loop.sync("cudaStreamSynchronize", op="aten::item")
        loop.events.append(ev(ANN, c0, loop.cpu - c0, f"ProfilerStep#{n}"))
    kinds = [f.kind for f in advise(_trace(loop)).findings]
    assert kinds[0] == "launch_bound", kinds
