"""gpuviz for coding agents: the ``gpuviz mcp`` server (Model Context Protocol, stdio).

The server answers an agent's questions about traces, rank folders and allocator snapshots
with the analyses the CLI and the app use (:mod:`gpuviz.analysis`), as compact text with the
key numbers first. Modules:

- :mod:`gpuviz.agents.confine`: which paths it may read (its roots; symlinks resolved first);
- :mod:`gpuviz.agents.store`: traces and snapshots opened once per server process;
- :mod:`gpuviz.agents.answers`, :mod:`gpuviz.agents.memory_answer`: the tools' text;
- :mod:`gpuviz.agents.run_profile`: ``gpuviz profile`` in a child process (``--allow-run``);
- :mod:`gpuviz.agents.server`: the tools, registered on the official ``mcp`` SDK's server.

Layering (DESIGN.md): this package imports ``mcp``, :mod:`gpuviz.trace` and
:mod:`gpuviz.analysis`, never Qt, and never torch (the engine runs only in the profile child).
"""
