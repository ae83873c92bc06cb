"""Running workloads from the app: the workload panel, the run worker, live plots, comparisons.

Modules:

- ``qt_workload_panel`` / ``qt_param_form`` / ``qt_device_picker``: what to run, where.
- ``qt_run_worker``: the QThread that drives the engine (a child process for profiled runs).
- ``live_buffers`` (Qt-free) and ``qt_live_plots``: events -> buffers -> plots at ~30 Hz.
- ``compare_figures`` (Qt-free) and ``qt_compare``: strategy chart, two runs side by side.
- ``qt_failure_dialog``: a failed run's message, traceback and partial trace.
- ``replay`` (Qt-free): a recorded event stream driven like a run.
- ``qt_run_controller``: wires them into the main window (:func:`install_run_panel`).
- ``launch``: ``gpuviz run NAME --gui`` (:func:`run_gui`).

Nothing here imports the engine or torch at import time; a run imports the engine when it starts.
"""
