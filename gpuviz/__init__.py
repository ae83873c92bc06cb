"""gpuviz: see how PyTorch work runs on GPUs.

The package is layered (see DESIGN.md): ``gpuviz.trace`` and ``gpuviz.analysis`` are pure
numpy, ``gpuviz.workloads`` and ``gpuviz.engine`` hold the torch code, and only
``gpuviz.gui`` imports Qt. Importing this package imports none of them, nor numpy: a script
may ``import gpuviz`` for :func:`step` at no cost.
"""

from __future__ import annotations

from collections.abc import Callable

__version__ = "0.1.0"

_step_hook: Callable[[], None] | None = None
"""Set by ``gpuviz profile`` while it runs a script (its session's step boundary)."""


def step() -> None:
    """Mark the end of one step of your script, for ``gpuviz profile``.

    ``gpuviz profile`` finds a training script's steps by itself (each ``optimizer.step()``).
    Call this where a step of yours ends when that does not fit: an inference loop, or a
    loop with several optimizers. Once a script calls it, its calls alone end steps.
    Outside ``gpuviz profile`` it does nothing, and costs a function call.

    Examples
    --------
    >>> import gpuviz
    >>> for batch in range(3):
    ...     pass  # one request, one batch...
    ...     gpuviz.step()
    """
    hook = _step_hook
    if hook is not None:
        hook()


__all__ = ["__version__", "step"]
