"""Where workloads come from: built-ins, user files and the ``gpuviz.workloads`` entry points."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from gpuviz.errors import BadInputError
from gpuviz.workloads import registry
from gpuviz.workloads.params import Param
from gpuviz.workloads.registry import WorkloadSpec, builtin_workloads, resolve_workload

SINGLE_GPU = ("loops", "streams", "placement", "training")


def test_the_single_gpu_builtins_are_declared() -> None:
    specs = builtin_workloads()
    for name in SINGLE_GPU:
        spec = specs[name]
        assert spec.name == name and spec.title and spec.params
        assert not spec.multi_process
        assert spec.entry.startswith(f"gpuviz.workloads.{name}:")
        json.dumps(spec.to_json())  # plain JSON for the app and --json


def test_listing_and_declarations_import_no_torch() -> None:
    code = (
        "import sys, json; from gpuviz.workloads.registry import builtin_workloads; "
        "s = builtin_workloads(); [p.to_json() for w in s.values() for p in w.params]; "
        "print(json.dumps(['torch' in sys.modules, sorted(s)]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    torch_loaded, names = json.loads(out.stdout)
    assert not torch_loaded
    assert set(SINGLE_GPU) <= set(names)


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(BadInputError) as info:
        resolve_workload("nope")
    assert "nope" in str(info.value) and "loops" in str(info.value)
    with pytest.raises(BadInputError, match="name the function"):
        resolve_workload("file.py")


def test_user_file_spec(tmp_path: Path) -> None:
    f = tmp_path / "mine.py"
    f.write_text('def sq(device, n: int = 5):\n    """Squares."""\n    return n\n')
    spec = resolve_workload(f"{f}:sq")
    assert spec.kind == "function" and spec.title == "Squares."
    assert [p.name for p in spec.params] == ["n"]
    assert spec.load()(None, n=2) == 2


def test_missing_user_function(tmp_path: Path) -> None:
    f = tmp_path / "mine.py"
    f.write_text("def other(device):\n    pass\n")
    with pytest.raises(BadInputError, match="no function 'sq'"):
        resolve_workload(f"{f}:sq")


def _plugin_function(device: object, n: int = 3, name: str = "a") -> int:
    """A plugin workload."""
    return n


PLUGIN_SPEC = WorkloadSpec(
    name="plugged", title="A plugin plan", params=(Param("k", "int", 2),), entry="x:build"
)


def test_entry_point_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    eps = [
        SimpleNamespace(
            name="plugfn",
            value="m:f",
            dist=SimpleNamespace(name="pkg"),
            load=lambda: _plugin_function,
        ),
        SimpleNamespace(
            name="plugged", value="m:S", dist=SimpleNamespace(name="pkg"), load=lambda: PLUGIN_SPEC
        ),
        SimpleNamespace(
            name="loops",
            value="m:L",
            dist=SimpleNamespace(name="pkg"),
            load=lambda: WorkloadSpec(name="loops", title="impostor"),
        ),
    ]

    def broken() -> None:
        raise ImportError("boom")

    eps.append(
        SimpleNamespace(name="broken", value="m:b", dist=SimpleNamespace(name="bad"), load=broken)
    )
    import importlib.metadata

    monkeypatch.setattr(
        importlib.metadata, "entry_points", lambda group: eps if group == "gpuviz.workloads" else []
    )
    specs = registry.all_workloads()
    assert specs["plugfn"].kind == "function"
    assert [(p.name, p.kind, p.default) for p in specs["plugfn"].params] == [
        ("n", "int", 3),
        ("name", "str", "a"),
    ]
    assert specs["plugged"].source == "plugin:pkg"
    assert specs["loops"].source == "builtin"  # a plugin never replaces a built-in
    assert "broken" not in specs
    assert resolve_workload("plugged").title == "A plugin plan"


def test_default_steps_are_one_epoch_for_dataparallel_and_five_elsewhere() -> None:
    from gpuviz.workloads.registry import DEFAULT_STEPS, builtin_workloads

    specs = builtin_workloads()
    # DESIGN.md: the tutorial's data (100 rows, batch 30) is one epoch of 4 batches.
    assert specs["dataparallel"].steps_for({}) == 4
    assert specs["dataparallel"].steps_for({"batch": 50}) == 2
    assert specs["dataparallel"].steps_for({"length": 7, "batch": 30}) == 1
    assert specs["loops"].steps_for({"n": 10}) == DEFAULT_STEPS == 5
