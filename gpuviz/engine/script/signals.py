"""What a ``gpuviz profile`` session does with signals while the script runs.

- SIGTERM (a launcher stopping the script) ends it like Ctrl-C does: :class:`Terminated` is
  raised where the script is, and what was recorded is written (exit 143).
- A real-time signal that no program uses (:data:`WAKE_SIGNAL`) lets the no-step timer's
  thread run code on the main thread (``_thread.interrupt_main``).
- Ctrl-C and SIGTERM that come while a window starts or is exported wait until it is done
  (:meth:`SessionSignals.deferred`), and from the end of the script on they wait until the
  trace is written (:meth:`SessionSignals.hold`): a trace cut mid-write would be lost.

Signal handlers can only be set from the main thread; elsewhere this does nothing.
Torch-free.
"""

from __future__ import annotations

import _thread
import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

WAKE_SIGNAL: Any = signal.SIGRTMIN + 5 if hasattr(signal, "SIGRTMIN") else signal.SIGUSR2
"""The signal number the session's timer uses to wake the main thread (never sent by the OS)."""


class Terminated(BaseException):
    """SIGTERM reached the script (a launcher stopping it): write what was recorded, exit 143."""


class StopRequested(BaseException):
    """``--stop``: the last window is written; end the script (status 0).

    A ``BaseException``, like ``SystemExit``: ``except Exception`` in the script lets it by.
    """


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


class SessionSignals:
    """The session's handlers, and the ones they replaced.

    Parameters
    ----------
    on_wake : callable
        Runs on the main thread when :meth:`wake_main` is called from another one.
    on_held : callable
        Called once for each Ctrl-C or SIGTERM held off by :meth:`hold`.
    """

    def __init__(self, on_wake: Callable[[], None], on_held: Callable[[], None]) -> None:
        self._on_wake = on_wake
        self._on_held = on_held
        self._saved: dict[int, Any] = {}
        self._wake_handler: Any = None
        self.holding = False
        self.held: list[int] = []

    def install(self, take_sigint: bool = False) -> None:
        """SIGTERM raises :class:`Terminated`; :data:`WAKE_SIGNAL` calls ``on_wake``.

        ``take_sigint``: Ctrl-C raises ``KeyboardInterrupt`` even where this process started
        with SIGINT ignored (the app's Cancel is SIGINT, and an app started in the background
        of a shell passes SIG_IGN on to its children: Cancel then ended the script with
        SIGTERM, exit 143 instead of 130).
        """
        if not _on_main_thread():
            return
        sigint = None
        if take_sigint and signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
            sigint = signal.default_int_handler

        def on_term(_signum: int, _frame: Any) -> None:
            raise Terminated()

        def on_wake(_signum: int, _frame: Any) -> None:
            self._on_wake()

        self._wake_handler = on_wake
        for sig, handler in (
            (signal.SIGINT, sigint),
            (signal.SIGTERM, on_term),
            (WAKE_SIGNAL, on_wake),
        ):
            try:
                old = signal.getsignal(sig)
                if handler is not None:
                    signal.signal(sig, handler)
            except (ValueError, OSError):
                continue
            self._saved[sig] = old

    def wake_main(self) -> None:
        """From any thread: run ``on_wake`` on the main thread (unless the script replaced
        the handler)."""
        if signal.getsignal(WAKE_SIGNAL) is self._wake_handler:
            _thread.interrupt_main(WAKE_SIGNAL)

    def hold(self) -> None:
        """From now on Ctrl-C and SIGTERM wait until :meth:`release` (main thread only)."""
        if self.holding or not _on_main_thread():
            return
        self.holding = True

        def hold(signum: int, _frame: Any) -> None:
            self.held.append(signum)
            self._on_held()

        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, hold)

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Ctrl-C during the block waits until it is done, then interrupts the script as
        usual (``KeyboardInterrupt``; SIGTERM: :class:`Terminated`)."""
        if self.holding or not _on_main_thread():
            yield
            return
        got: list[int] = []
        saved = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError, OSError):
                saved[sig] = signal.signal(sig, lambda signum, _f: got.append(signum))
        try:
            yield
        finally:
            for sig, old in saved.items():
                with contextlib.suppress(ValueError, OSError, TypeError):
                    signal.signal(sig, old)
        if signal.SIGINT in got:
            raise KeyboardInterrupt
        if signal.SIGTERM in got:
            raise Terminated()

    def release(self) -> None:
        """Put back the handlers that :meth:`install` replaced (idempotent)."""
        if not _on_main_thread():
            return
        for sig, old in self._saved.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(sig, old if old is not None else signal.SIG_DFL)
        self._saved = {}


__all__ = ["WAKE_SIGNAL", "SessionSignals", "StopRequested", "Terminated"]
