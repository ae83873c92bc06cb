"""gpuviz: see how PyTorch work runs on GPUs.

The package is layered (see DESIGN.md): ``gpuviz.trace`` and ``gpuviz.analysis`` are pure
numpy, ``gpuviz.workloads`` and ``gpuviz.engine`` hold the torch code, and only
``gpuviz.gui`` imports Qt. Importing this package imports none of them.
"""

__version__ = "0.1.0"
