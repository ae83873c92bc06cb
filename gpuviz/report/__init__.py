"""Text and JSON of analysis results, shared by the CLI's commands, the agents' server and the
app's Markdown export (DESIGN.md's layer table): the commands and the agents never import each
other, so what both print lives here. It imports trace, analysis and :mod:`gpuviz.display`;
never commands, agents, Qt or torch (tests/test_architecture.py).

- :mod:`~gpuviz.report.tables`: aligned text tables (summary, breakdown, advise, answers)
- :mod:`~gpuviz.report.findings`: a finding as text, and the code names of its evidence
- :mod:`~gpuviz.report.memory`: allocator sites and their folded stacks
- :mod:`~gpuviz.report.peaks`: the peaks line MFU and rooflines are measured against
- :mod:`~gpuviz.report.comparison`, :mod:`~gpuviz.report.changes`: two runs compared
- :mod:`~gpuviz.report.markdown`: the advice as Markdown (the app's export)
"""
