"""How a child process's end is told in a message: the name of the signal that killed it.

Shared by the engine's child runner (:mod:`gpuviz.engine.child`), the script profiler's child
(:mod:`gpuviz.engine.script.process`) and the ranks of a multi-process run
(:mod:`gpuviz.engine.multiprocess_faults`).
"""

from __future__ import annotations

import signal


def signal_name(num: int) -> str:
    """``"SIGKILL"`` for 9; ``"signal N"`` for a number that names no signal here."""
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


__all__ = ["signal_name"]
