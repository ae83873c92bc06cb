"""The script profiler behind ``gpuviz profile``: a user's script, unmodified, under the profiler.

- ``schedule``: which steps are skipped, warm up or are recorded (``torch.profiler.schedule``'s
  rule), and when ``--stop`` ends the script (torch-free).
- ``options``: the run's options (the CLI's flags) and where the traces go (torch-free).
- ``target``: the script or ``-m`` module, run as ``__main__`` with its own ``sys.argv`` and
  ``sys.path``; ``--step-fn`` wrapping (torch-free).
- ``steps``: where steps end: ``optimizer.step()`` (the global post hook), ``--step-fn`` and
  ``gpuviz.step()``; and the step timer (wall time, CUDA events).
- ``session``: :class:`~gpuviz.engine.script.session.ScriptSession`, which ties them to
  ``torch.profiler``, the memory sampler and the event stream, and always writes what it
  recorded.
- ``writing``: the event sink (``--events``, the app's pipe) and each window's trace file.
- ``signals``: SIGTERM as Ctrl-C, the no-step timer's wake-up, Ctrl-C held off while a trace
  is written (torch-free).
- ``forking``: a child forked by the script leaves the recording to its parent (torch-free).
- ``report``: the figures of a run and the lines printed at its end.
- ``launch``: ``--nproc-per-node N`` (starts ``torch.distributed.run``).
- ``process``: the app's side: ``python -m gpuviz profile`` in a child process, its events
  read from a pipe, Cancel as Ctrl-C (torch-free).

Importing this package imports nothing heavy; torch is imported when a session starts.
"""
