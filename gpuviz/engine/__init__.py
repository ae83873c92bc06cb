"""Runner, profiling, CUDA-event timing, memory sampling and executors (torch, never Qt).

- ``events``: the frozen event dataclasses and their JSON-lines wire form (torch-free).
- ``runner``: :class:`~gpuviz.engine.runner.Runner` and ``RunRequest``, the in-thread executor.
- ``inprocess``: the Runner's single-process body (also what each rank of a multi-process run
  runs). ``request``: ``RunRequest`` and the default trace path.
- ``child``: the child-process executor (``--isolate``, the app's profiled runs).
- ``multiprocess``: one child per rank for multi-process workloads (``ddp``).
- ``profiling``: the profiler window, the fast trace writer, per-strategy figures.
- ``timing``: step timing with CUDA events. ``sampler``: the memory sampler thread.
- ``devices``: ``--device`` / ``--gpus``.

Importing this package imports nothing heavy; each module imports torch where it needs it.
"""
