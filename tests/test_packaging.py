"""Set-up metadata: no setuptools deprecation warning (issue 47, item 20).

``license = { text = "MIT" }`` (a TOML table) warned at every ``pip install -e .`` from
setuptools 77 on; the SPDX string form needs setuptools 77 or later, which [build-system]
asks for (setuptools 76 refuses the string: checked by hand, see the commit).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent


def _pyproject() -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_license_is_an_spdx_string_and_setuptools_can_read_it() -> None:
    doc = _pyproject()
    assert doc["project"]["license"] == "MIT"
    (req,) = [r for r in doc["build-system"]["requires"] if r.startswith("setuptools")]
    assert req.replace(" ", "") == "setuptools>=77"


def test_metadata_is_built_without_a_warning(tmp_path: Path) -> None:
    # the project's own metadata, built by the installed setuptools with its warnings as errors
    import setuptools

    assert int(setuptools.__version__.split(".")[0]) >= 77, setuptools.__version__
    for name in ("pyproject.toml", "README.md"):
        shutil.copyfile(ROOT / name, tmp_path / name)
    (tmp_path / "gpuviz").mkdir()
    (tmp_path / "gpuviz" / "__init__.py").write_text("")
    (tmp_path / "gpuviz" / "py.typed").write_text("")
    (tmp_path / "meta").mkdir()
    code = (
        "import warnings\n"
        "warnings.simplefilter('error')\n"
        "import setuptools.build_meta as b\n"
        "print(b.prepare_metadata_for_build_wheel('meta'))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    meta = next((tmp_path / "meta").glob("*.dist-info")) / "METADATA"
    assert "License-Expression: MIT" in meta.read_text()
