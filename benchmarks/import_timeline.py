"""The importer's timeline on a rank folder: when each child got its work and answered.

    python benchmarks/import_timeline.py DIR [--file-depth N]

Imports ``DIR`` in this process (``load_trace``, no cache) with the pipeline's hand-offs
wrapped: each send to a child, each reply taken in (and how long the importer waited for it),
each whole file the importer read itself, each merge and the assembly. It prints, per child,
the times its work was sent and its replies came in. That shows where children wait: for
the importer (a file it reads itself while their queues run dry) or at the end (a last round
that only some of them have work for). ``--file-depth`` tries another number of whole files
queued per child.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from gpuviz.trace import kineto, kineto_decode, kineto_parallel, kineto_worker

T0 = time.perf_counter()
Event = tuple[float, str, int, float]  # (time, what, child id or file, seconds or file)


def _now() -> float:
    return time.perf_counter() - T0


def _wrap(owner: Any, name: str, log: list[Event], what: str, key: Callable[..., int]) -> None:
    """Replace ``owner.name`` with a version that logs its start, ``key(args)`` and duration."""
    real = getattr(owner, name)

    def logged(*args: Any, **kw: Any) -> Any:
        t = _now()
        out = real(*args, **kw)
        log.append((t, what, key(*args), _now() - t))
        return out

    setattr(owner, name, logged)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder")
    p.add_argument("--file-depth", type=int, default=0, help="whole files queued per child")
    a = p.parse_args()
    if a.file_depth:
        kineto_worker.FILE_DEPTH = kineto_parallel.FILE_DEPTH = a.file_depth
    log: list[Event] = []
    child: Callable[..., int] = lambda self, *_: id(self) % 10000  # noqa: E731
    file: Callable[..., int] = lambda self, f, *_: int(f)  # noqa: E731
    _wrap(kineto_worker.Worker, "_send", log, "send", child)
    _wrap(kineto_worker.Worker, "receive", log, "reply", child)
    _wrap(kineto_worker.LocalDecoder, "decode_file", log, "read here", file)
    _wrap(kineto_decode.FileReader, "merge_file", log, "merge", lambda self, r, w, f: int(f))
    _wrap(kineto, "_assemble", log, "assemble", lambda *_: -1)
    kineto.load_trace(a.folder, cache=False)
    end = _now()
    children = sorted({k for _, what, k, _ in log if what == "send"})
    print(f"import {end:.2f} s, {len(children)} children")
    for t, what, k, d in log:
        if what in ("read here", "assemble"):
            print(f"  {t:7.2f} s  {what} {'' if k < 0 else f'file {k} '}for {d:.2f} s")
    merges = [(t, d) for t, what, _, d in log if what == "merge"]
    replies = [(t, k, d) for t, what, k, d in log if what == "reply"]
    if merges:
        print(f"  merging whole files {sum(d for _, d in merges):.2f} s in all, the last ending at "
              f"{merges[-1][0] + merges[-1][1]:.2f} s")  # fmt: skip
    print(f"  waiting in receive {sum(d for *_, d in replies):.2f} s in all")
    for c in children:
        sent = [f"{t:.1f}" for t, what, k, _ in log if what == "send" and k == c]
        came = [f"{t + d:.1f}" for t, k, d in replies if k == c]
        print(f"  child {c:4d}: sent at {' '.join(sent)}; replies at {' '.join(came)}")


if __name__ == "__main__":
    main()
