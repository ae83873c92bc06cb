"""A rank's process of a multi-process run (spawned by :mod:`gpuviz.engine.multiprocess`).

:func:`rank_entry` is ``torch.multiprocessing``'s target. The rank runs an ordinary one-process
run of the workload (:class:`~gpuviz.engine.inprocess.InProcessRun`) on its own device and
writes its events, one JSON line each (plus ``"rank"`` and ``"t_ns"``), into its own file, which
the parent tails; it registers a faulthandler dump on SIGUSR2 (the parent's hang diagnosis),
cancels on SIGUSR1, and ends itself when its parent is gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from pathlib import Path

from gpuviz.engine.events import Cancelled, Event, Failed, Finished, encode_event
from gpuviz.engine.inprocess import InProcessRun
from gpuviz.engine.request import RunRequest


def rank_entry(index: int, payload: str) -> None:
    """torch.multiprocessing's target: pick this rank's share of the payload."""
    cfg = json.loads(payload)["ranks"][index]
    _rank_main(index, json.dumps(cfg))


def _rank_main(index: int, payload: str) -> None:
    """A rank's process (spawned): run the workload's Runner, write events as JSON lines."""
    cfg = json.loads(payload)
    rank = index
    os.environ.update(cfg["env"])
    os.environ.update(
        {
            "RANK": str(rank),
            "LOCAL_RANK": str(rank),
            "WORLD_SIZE": str(cfg["world_size"]),
            "GPUVIZ_DIST_INIT": cfg["init_method"],
            "GPUVIZ_DIST_TIMEOUT_S": str(cfg["dist_timeout_s"]),
            "GPUVIZ_RANK_CHILD": "1",
        }
    )
    # Ctrl-C reaches the whole process group; the parent decides and stops us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    tmp = Path(cfg["tmp"])
    out = open(tmp / f"events-{rank}.jsonl", "w", encoding="utf-8", buffering=1)
    lock = threading.Lock()

    def send(event: Event) -> None:
        obj = json.loads(encode_event(event))
        obj["rank"] = rank
        obj["t_ns"] = time.time_ns()
        with lock:
            out.write(json.dumps(obj) + "\n")
            out.flush()

    _watch_parent(int(cfg["parent_pid"]))
    import faulthandler

    stack_file = open(tmp / f"stack-{rank}.txt", "w", encoding="utf-8")
    stack_file.write(f"main 0x{threading.main_thread().ident:016x}\n")
    stack_file.flush()
    faulthandler.register(signal.SIGUSR2, file=stack_file, all_threads=True)

    terminal: Event | None = None
    try:
        from dataclasses import replace

        from gpuviz.workloads.registry import resolve_workload

        request = RunRequest.from_json(cfg["request"])
        # In the rank the workload is an ordinary one-process run on one device.
        spec = replace(resolve_workload(request.workload), multi_process=False, multi_gpu=False)
        runner = InProcessRun(request, spec=spec)
        signal.signal(signal.SIGUSR1, lambda *_: runner.cancel())
        for event in runner:
            if isinstance(event, (Finished, Failed, Cancelled)):
                terminal = event
            send(event)
    except BaseException as exc:  # never let an exception reach torch's pickled error file
        import traceback

        if terminal is None:
            send(Failed(f"{type(exc).__name__}: {exc}", traceback.format_exc(), None))
    finally:
        out.close()
    # Close the process group only now that the rank's last event is out (see ddp.py).
    with contextlib.suppress(Exception):
        import torch.distributed as dist

        if dist.is_initialized() and isinstance(terminal, Finished):
            dist.destroy_process_group()


def _watch_parent(parent_pid: int) -> None:
    """End this rank if its parent is gone (no orphan outlives a killed parent)."""

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="gpuviz-parent-watch", daemon=True).start()


__all__ = ["rank_entry"]
