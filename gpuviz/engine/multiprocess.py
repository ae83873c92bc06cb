"""Multi-process workloads (``ddp``): one process per rank, events back as JSON lines.

:func:`run_multiprocess` is what :class:`gpuviz.engine.runner.Runner` hands a workload with
``multi_process=True``. It starts the ranks through ``torch.multiprocessing.start_processes``
(spawn; never a launcher of our own): one per GPU of the run's GPU set, or ``cpu_ranks``
(default 2) on ``--device cpu``. Each rank runs an ordinary one-process run of the workload
(:class:`~gpuviz.engine.inprocess.InProcessRun`, the Runner's base: this module never imports
the runner) on its own device, and writes its trace as ``rank-N.json.gz`` into the ``--out``
folder.

Wire: each rank writes its events, one JSON line each (:mod:`gpuviz.engine.events`' form, plus
``"rank"`` and ``"t_ns"``, the wall time of the write, which readers ignore), into its own file
in a private temporary folder; the parent tails the files. Nothing from a rank is unpickled
(the spawn arguments go the other way, parent to child, as one JSON string; torch's error
files, which are pickles, are never read: a rank catches its own exceptions).

The merged stream: ``Started`` (the parent's), then the ranks' events as they come, with
``StepTimed.label`` as ``rank{N}:{label}`` and a CPU rank's ``MemorySample.device`` as
``rank{N}:cpu``; ``Progress`` sums the ranks' steps; one ``TraceReady`` for the folder; then
``Finished`` with per-rank step times and, from the traces, each rank's NCCL kernel time and how
much of it overlaps compute (:func:`gpuviz.analysis.comm.comm_figures`).

Faults: a rank that fails (its ``Failed``), dies (an exit code or a signal, without a
terminal event), or sends no event for ``--rank-timeout`` seconds (hung) ends the run as
``Failed``, naming the rank; the other ranks are stopped (SIGTERM, then SIGKILL) and reaped,
and no process is left behind. A rank that has not reached its first step (imports, rendezvous,
warm-ups) gets at least :data:`STARTUP_GRACE_S`. For a hang, every silent rank's Python stack
is taken (``faulthandler``) to tell the rank stuck in its own code from those that wait for it
inside torch (a collective): the report names the former, and gives the stacks.

Environment: the ranks inherit the parent's environment (``NCCL_NVLS_ENABLE`` and friends
included). On a machine with 2 or more GPUs they also get ``NCCL_NVLS_ENABLE=0``,
``TORCH_SYMM_MEM_DISABLE_MULTICAST=1`` and ``NVSHMEM_DISABLE_NVLS=1`` where the parent does
not set them: NVLink multicast can take shared GPUs out of service.

Cancel: ``runner.cancel()`` sends each rank SIGUSR1, which cancels its Runner at its next step
boundary; ranks that have not ended after :data:`CANCEL_GRACE_S` are stopped.

The parts: a rank's own process is :mod:`gpuviz.engine.multiprocess_rank`; the parent's record
of each rank and how a failure or a hang is named, :mod:`gpuviz.engine.multiprocess_faults`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gpuviz.engine.events import (
    Cancelled,
    Event,
    EventDecodeError,
    Failed,
    Finished,
    MemorySample,
    Progress,
    Started,
    StepTimed,
    TraceReady,
    event_from_dict,
)
from gpuviz.engine.inprocess import InProcessRun
from gpuviz.engine.multiprocess_faults import (
    Rank,
    RankFailure,
    first_failure,
    hang_failure,
    main_frames,
)
from gpuviz.engine.multiprocess_rank import rank_entry

NVLINK_MULTICAST_OFF = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}
"""Set for ranks on multi-GPU machines, unless the caller has its own values."""

STARTUP_GRACE_S = 60.0
"""Minimum silence allowed to a rank before its first step (imports, rendezvous, warm-ups)."""

CANCEL_GRACE_S = 15.0
"""How long ranks may take to stop at a step boundary after a cancel, before they are killed."""

POLL_S = 0.05
STOP_GRACE_S = 3.0
STACK_WAIT_S = 1.5
RANK_FILE = "rank-{rank}.json.gz"


def rank_env(caller: dict[str, str], gpus_on_machine: int) -> dict[str, str]:
    """The variables added to the ranks' environment (the caller's values always win)."""
    extra = {}
    if gpus_on_machine >= 2:
        for k, v in NVLINK_MULTICAST_OFF.items():
            if k not in caller:
                extra[k] = v
    return extra


# -------------------------------------------------------------------------------- parent side


def run_multiprocess(runner: InProcessRun) -> Iterator[Event]:
    """The events of a multi-process run (see the module docstring).

    Parameters
    ----------
    runner : gpuviz.engine.inprocess.InProcessRun
        The checked run: its ``request``, ``spec``, ``params``, ``device``, ``devices`` and
        ``trace_path`` (a folder), and ``cancelled``.

    Yields
    ------
    Event
        ``Started`` first, exactly one terminal event last.
    """
    return _MultiRun(runner).events()


class _MultiRun:
    def __init__(self, runner: InProcessRun) -> None:
        self.runner = runner
        self.request = runner.request
        self.spec = runner.spec
        self.cuda = runner.device.type == "cuda"
        if self.cuda:
            self.rank_devices = [f"cuda:{d.index}" for d in runner.devices]
        else:
            n = int(runner.params.get("cpu_ranks", 2))
            self.rank_devices = ["cpu"] * n
        self.world = len(self.rank_devices)
        self.folder: Path | None = Path(runner.trace_path) if runner.trace_path else None
        self.timeout_s = float(self.request.rank_timeout_s)
        self.ranks: list[Rank] = []
        self.tmp: Path | None = None
        self.t0 = 0.0
        self.t0_wall_ns = 0
        self.pids: list[int] = []

    # -- the run --------------------------------------------------------------------------------
    def events(self) -> Iterator[Event]:
        import torch

        self.t0 = time.monotonic()
        self.t0_wall_ns = time.time_ns()
        yield Started(
            workload=self.spec.name,
            params=dict(self.runner.params),
            device=str(self.runner.device),
            devices=list(self.rank_devices),
            torch_version=str(torch.__version__),
        )
        outcome: Event | None = None
        cancelled = False
        try:
            if self.folder is not None:
                self.folder.mkdir(parents=True, exist_ok=True)
            self.tmp = Path(tempfile.mkdtemp(prefix="gpuviz-ranks-"))
            self._start()
            try:
                yield from self._watch()
            except KeyboardInterrupt:
                cancelled = True
                self.runner.cancel()
                yield from self._cancel_wait()
            if self.runner.cancelled:
                cancelled = True
        except RankFailure as exc:
            outcome = Failed(str(exc), exc.traceback, self._partial())
        except Exception as exc:
            import traceback

            outcome = Failed(
                f"{type(exc).__name__}: {exc}", traceback.format_exc(), self._partial()
            )
        finally:
            self._stop_all()
            if self.tmp is not None:
                shutil.rmtree(self.tmp, ignore_errors=True)
        if outcome is None and cancelled:
            outcome = Cancelled(self._partial())
        if outcome is None:
            try:
                if self.folder is not None and self._partial():
                    yield TraceReady(str(self.folder))
                outcome = Finished(self._result())
            except Exception as exc:
                import traceback

                outcome = Failed(
                    f"{type(exc).__name__}: {exc}", traceback.format_exc(), self._partial()
                )
        yield outcome

    def _start(self) -> None:
        import torch.multiprocessing as tmp_mp

        assert self.tmp is not None
        env = rank_env(dict(os.environ), _visible_gpus())
        cfg_base = {
            "env": env,
            "world_size": self.world,
            "init_method": "file://" + str(self.tmp / "store"),
            # The collective timeout outlasts ours, so that a hang is ours to report.
            "dist_timeout_s": self.timeout_s + 120.0,
            "parent_pid": os.getpid(),
            "tmp": str(self.tmp),
        }
        payloads = []
        for r, dev in enumerate(self.rank_devices):
            req = self.request.to_json()
            req.update(
                params=dict(self.runner.params),
                device=dev,
                gpus=None,
                out=str(self.folder / RANK_FILE.format(rank=r)) if self.folder else None,
            )
            payloads.append(dict(cfg_base, request=req))
        # One payload for all: the rank index picks its device inside.
        payload = json.dumps({"ranks": payloads})
        now = time.monotonic()
        self.ranks = [
            Rank(
                r,
                dev,
                None,
                self.tmp / f"events-{r}.jsonl",
                self.tmp / f"stack-{r}.txt",
                last_event_s=now,
            )
            for r, dev in enumerate(self.rank_devices)
        ]
        ctx = tmp_mp.start_processes(
            rank_entry,
            args=(payload,),
            nprocs=self.world,
            join=False,
            daemon=True,
            start_method="spawn",
        )
        for r, proc in enumerate(ctx.processes):
            self.ranks[r].proc = proc
            self.ranks[r].last_event_s = time.monotonic()
        self.pids = [p.pid for p in ctx.processes]

    def _watch(self) -> Iterator[Event]:
        while True:
            progressed = False
            for rk in self.ranks:
                for obj in self._read(rk):
                    progressed = True
                    yield from self._on_event(rk, obj)
            failed = [rk for rk in self.ranks if isinstance(rk.terminal, Failed)]
            if failed:
                self._settle()
                raise self._failure()
            now = time.monotonic()
            for rk in self.ranks:
                if rk.terminal is None and rk.proc.exitcode is not None:
                    # Read what it wrote before dying, then report the death.
                    for obj in self._read(rk):
                        yield from self._on_event(rk, obj)
                    if rk.terminal is None:
                        self._settle()
                        raise self._failure()
            if all(rk.terminal is not None for rk in self.ranks):
                if all(isinstance(rk.terminal, Finished) for rk in self.ranks):
                    return
                if any(isinstance(rk.terminal, Cancelled) for rk in self.ranks):
                    self.runner.cancel()
                    return
            silent = [rk for rk in self.ranks if rk.terminal is None and self._overdue(rk, now)]
            if silent:
                raise self._hang(silent, now)
            if self.runner.cancelled:
                yield from self._cancel_wait()
                return
            if not progressed:
                time.sleep(POLL_S)

    def _overdue(self, rk: Rank, now: float) -> bool:
        limit = self.timeout_s if rk.stepping else max(self.timeout_s, STARTUP_GRACE_S)
        return now - rk.last_event_s > limit

    def _read(self, rk: Rank) -> list[dict[str, Any]]:
        try:
            with open(rk.events_path, "rb") as f:
                f.seek(rk.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        if not data:
            return []
        rk.offset += len(data)
        data = rk.partial + data
        lines = data.split(b"\n")
        rk.partial = lines.pop()  # a line not finished yet
        out = []
        for line in lines:
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                continue  # never trust a torn line (or one nested too deeply to read)
            if isinstance(obj, dict):
                out.append(obj)
        if out:
            rk.last_event_s = time.monotonic()
        return out

    def _on_event(self, rk: Rank, obj: dict[str, Any]) -> Iterator[Event]:
        try:
            event = event_from_dict(obj)
        except EventDecodeError:
            return
        t_ns = int(obj.get("t_ns", 0) or 0)
        if isinstance(event, Started):
            rk.t_offset_s = max(0.0, (t_ns - self.t0_wall_ns) / 1e9) if t_ns else 0.0
            return
        if isinstance(event, Progress):
            rk.stepping = True
            rk.step, rk.total = event.step, event.total
            if all(r.total is not None for r in self.ranks):
                yield Progress(
                    sum(r.step for r in self.ranks), sum(r.total or 0 for r in self.ranks)
                )
            return
        if isinstance(event, StepTimed):
            rk.steps.append({k: v for k, v in obj.items() if k not in ("type", "t_ns")})
            yield StepTimed(
                event.step,
                f"rank{rk.rank}:{event.label}",
                event.wall_ms,
                event.gpu_ms,
                event.profiled,
            )
            return
        if isinstance(event, MemorySample):
            dev = f"rank{rk.rank}:{event.device}" if event.device == "cpu" else event.device
            yield MemorySample(
                event.t_s + rk.t_offset_s,
                dev,
                event.rss_bytes,
                event.allocated_bytes,
                event.reserved_bytes,
                event.peak_allocated_bytes,
                event.nvml_used_bytes,
                event.utilization_pct,
            )
            return
        if isinstance(event, TraceReady):
            rk.trace = event.path
            return
        if isinstance(event, (Finished, Failed, Cancelled)):
            rk.terminal = event
            rk.terminal_t_ns = t_ns
            return
        yield event  # SplitRecorded and anything newer pass through

    def _settle(self) -> None:
        """Let near-simultaneous ends arrive, so that the first failure is the one named."""
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            for rk in self.ranks:
                for obj in self._read(rk):
                    for _ in self._on_event(rk, obj):
                        pass
            time.sleep(POLL_S)

    def _failure(self) -> RankFailure:
        return first_failure(self.ranks)

    def _hang(self, silent: list[Rank], now: float) -> RankFailure:
        running = [rk for rk in self.ranks if rk.terminal is None and rk.alive()]
        return hang_failure(running, silent, self._stacks(running), now, self.timeout_s)

    def _stacks(self, ranks: list[Rank]) -> dict[int, list[str]]:
        """The main-thread Python stack of each rank, through faulthandler (SIGUSR2)."""
        sizes = {}
        for rk in ranks:
            try:
                sizes[rk.rank] = rk.stack_path.stat().st_size
                os.kill(rk.pid, signal.SIGUSR2)  # type: ignore[arg-type]
            except (OSError, TypeError):
                continue
        deadline = time.monotonic() + STACK_WAIT_S
        out: dict[int, list[str]] = {}
        while time.monotonic() < deadline and len(out) < len(sizes):
            time.sleep(0.1)
            for rk in ranks:
                if rk.rank in out or rk.rank not in sizes:
                    continue
                frames = main_frames(rk.stack_path)
                if frames:
                    out[rk.rank] = frames
        return out

    def _cancel_wait(self) -> Iterator[Event]:
        for rk in self.ranks:
            if rk.alive():
                with contextlib.suppress(OSError, TypeError):
                    os.kill(rk.pid, signal.SIGUSR1)  # type: ignore[arg-type]
        deadline = time.monotonic() + CANCEL_GRACE_S
        while time.monotonic() < deadline:
            for rk in self.ranks:
                for obj in self._read(rk):
                    yield from self._on_event(rk, obj)
            if all(rk.terminal is not None or not rk.alive() for rk in self.ranks):
                return
            time.sleep(POLL_S)

    def _stop_all(self) -> None:
        """Stop every rank still running (SIGTERM, then SIGKILL) and reap them all."""
        procs = [rk.proc for rk in self.ranks if rk.proc is not None]
        for p in procs:
            if p.is_alive():
                with contextlib.suppress(Exception):
                    p.join(0.0)
        ended_well = all(isinstance(rk.terminal, Finished) for rk in self.ranks)
        if ended_well:
            # Finished ranks close their process group and exit on their own.
            deadline = time.monotonic() + 30.0
            for p in procs:
                p.join(max(0.0, deadline - time.monotonic()))
        for p in procs:
            if p.is_alive():
                with contextlib.suppress(Exception):
                    p.terminate()
        deadline = time.monotonic() + STOP_GRACE_S
        for p in procs:
            with contextlib.suppress(Exception):
                p.join(max(0.0, deadline - time.monotonic()))
        for p in procs:
            if p.is_alive():
                with contextlib.suppress(Exception):
                    p.kill()
                    p.join(5.0)

    def _partial(self) -> str | None:
        if self.folder is None:
            return None
        files = [self.folder / RANK_FILE.format(rank=r) for r in range(self.world)]
        return str(self.folder) if any(f.exists() for f in files) else None

    # -- the result -----------------------------------------------------------------------------
    def _result(self) -> dict[str, Any]:
        results = [rk.terminal.result for rk in self.ranks]  # type: ignore[union-attr]
        first = results[0]
        ranks = []
        strategies = []
        steps = []
        peak_rss = 0
        mem_devices: dict[str, Any] = {}
        for rk, res in zip(self.ranks, results):
            entry: dict[str, Any] = {"rank": rk.rank, "device": rk.device, "pid": rk.pid}
            for s in res.get("strategies", []):
                strategies.append(dict(s, name=f"rank{rk.rank}:{s['name']}", rank=rk.rank))
                for k in (
                    "status",
                    "median_wall_ms",
                    "min_wall_ms",
                    "max_wall_ms",
                    "median_gpu_ms",
                    "min_gpu_ms",
                    "profiled_wall_ms",
                    "timed_steps",
                    "items_per_s",
                ):
                    if k in s:
                        entry[k] = s[k]
            for st in res.get("steps", []):
                steps.append(dict(st, rank=rk.rank))
            if res.get("trace"):
                entry["trace"] = res["trace"]
            mem = res.get("memory", {})
            peak_rss = max(peak_rss, int(mem.get("peak_rss_bytes", 0)))
            for dev, m in mem.get("devices", {}).items():
                mem_devices[dev] = m
            entry["peak_rss_bytes"] = int(mem.get("peak_rss_bytes", 0))
            for key in ("backend", "world_size", "env"):
                if key in res:
                    entry[key] = res[key]
            ranks.append(entry)
        result: dict[str, Any] = {
            "workload": self.spec.name,
            "title": self.spec.title,
            "device": str(self.runner.device),
            "devices": list(self.rank_devices),
            "params": dict(self.runner.params),
            "torch_version": first.get("torch_version"),
            "steps_per_strategy": self.request.steps,
            "world_size": self.world,
            "backend": first.get("backend", "nccl" if self.cuda else "gloo"),
            "ranks": ranks,
            "steps": steps,
            "baseline": None,
            "strategies": strategies,
            "skipped": [],
            "memory": {"peak_rss_bytes": peak_rss, "devices": mem_devices},
            "trace": str(self.folder) if self.folder and self._partial() else None,
        }
        if result["trace"]:
            try:
                comm = _trace_comm_figures(result["trace"])
            except Exception as exc:  # figures are a bonus; the traces are there
                result.setdefault("warnings", []).append(f"trace figures failed: {exc}")
            else:
                result["comm"] = comm
                by_rank = {c["rank"]: c for c in comm["ranks"]}
                for entry in ranks:
                    entry.update(
                        {k: v for k, v in by_rank.get(entry["rank"], {}).items() if k != "rank"}
                    )
        return result


def _trace_comm_figures(folder: str) -> dict[str, Any]:
    """:func:`gpuviz.analysis.comm.comm_figures` of the ranks' traces in ``folder``."""
    from gpuviz.analysis.comm import comm_figures
    from gpuviz.engine.profiling import STEP_PREFIX
    from gpuviz.trace.kineto import load_trace

    return comm_figures(load_trace(folder), STEP_PREFIX)


def _visible_gpus() -> int:
    # A CPU run on a GPU machine still follows the multi-GPU rule for its children.
    try:
        from gpuviz.engine.devices import cuda_count

        return cuda_count()
    except Exception:
        return 0


__all__ = [
    "CANCEL_GRACE_S",
    "NVLINK_MULTICAST_OFF",
    "STARTUP_GRACE_S",
    "RankFailure",
    "rank_env",
    "run_multiprocess",
]

if __name__ == "__main__":  # pragma: no cover
    sys.exit("gpuviz.engine.multiprocess is started by the Runner, not by hand")
