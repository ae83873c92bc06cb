"""DESIGN.md's layering table, checked by importing each module in a fresh interpreter."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import gpuviz

QT = ("PySide6", "pyqtgraph", "shiboken6")
TORCH = ("torch",)

# module prefix -> top-level packages it must never load at import time
FORBIDDEN = {
    "gpuviz.trace": QT + TORCH,
    "gpuviz.analysis": QT + TORCH,
    "gpuviz.workloads": QT + TORCH,
    "gpuviz.engine": QT,
    "gpuviz.gui": TORCH,
    "gpuviz.cli": QT + TORCH + ("numpy",),
    "gpuviz.commands": QT + TORCH,
}


def _modules() -> list[str]:
    root = Path(gpuviz.__file__).parent
    names = ["gpuviz.cli"]
    for info in pkgutil.walk_packages([str(root)], prefix="gpuviz."):
        if info.name.startswith(tuple(FORBIDDEN)) and not info.name.endswith("__main__"):
            names.append(info.name)
    return sorted(set(names))


def _loaded_after_import(module: str) -> list[str]:
    code = (
        f"import importlib, json, sys; importlib.import_module({module!r}); "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.parametrize("module", _modules())
def test_module_respects_layering(module: str) -> None:
    rule = next(v for k, v in FORBIDDEN.items() if module == k or module.startswith(k + "."))
    loaded = set(_loaded_after_import(module))
    assert not loaded & set(rule), f"{module} imports {sorted(loaded & set(rule))} at import time"


def test_the_check_can_fail() -> None:
    # Guard against a vacuous test: importing a Qt module must show Qt as loaded.
    assert "PySide6" in _loaded_after_import("PySide6.QtCore")


def test_every_layer_is_checked() -> None:
    mods = _modules()
    for layer in ("gpuviz.trace", "gpuviz.analysis", "gpuviz.cli"):
        assert any(m == layer or m.startswith(layer + ".") for m in mods)
