"""The views of one open trace, grouped by the app's parts.

``qt_trace_view`` assembles them into one tab; ``trace/`` (Timeline slot, Summary, Kernels),
``ops/`` (Operators, Modules, Source, Roofline), ``memory/``, ``ranks/`` (Ranks, Splits) and
``insights/`` hold the views; ``qt_staged``, ``qt_plot_style`` and ``view_availability`` are
shared by them.
"""
