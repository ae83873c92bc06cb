"""Where workloads come from: built-ins, user files (``FILE.py:FUNC``) and plugins.

Torch-free at import time, and listing workloads imports no torch either: built-in workload
modules keep torch inside their functions, and a user file is read with :mod:`ast`, never run
(see :mod:`gpuviz.workloads.params`). Only :meth:`WorkloadSpec.load` imports a body.

- **Built-ins**: each module named in :data:`BUILTIN_MODULES` that exists defines ``WORKLOAD``,
  a :class:`WorkloadSpec`. A module that is not there (yet) is skipped, so a new built-in is
  added by writing ``gpuviz/workloads/<name>.py`` with ``WORKLOAD`` and naming it here.
- **User files**: ``path/to/file.py:func``. The function is called once per step as
  ``func(device, **params)``; its annotated keyword parameters are its declared parameters.
- **Plugins**: the ``gpuviz.workloads`` entry-point group. An entry point may name a
  :class:`WorkloadSpec` (preferred: its parameters are then known without importing the body)
  or a plain function with the user-file signature.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gpuviz.display import echo
from gpuviz.errors import BadInputError
from gpuviz.workloads.params import Param, docstring_from_source, params_from_source

ENTRY_POINT_GROUP = "gpuviz.workloads"
"""The entry-point group through which installed packages add workloads."""

BUILTIN_MODULES: tuple[str, ...] = (
    "loops",
    "streams",
    "placement",
    "training",
    "dataparallel",
    "ddp",
    "model_parallel",
)
"""``gpuviz.workloads.<module>`` names that define a ``WORKLOAD``, in listing order."""

DEFAULT_STEPS = 5
"""Timed steps per strategy when neither ``--steps`` nor the workload says otherwise."""


@dataclass(frozen=True)
class WorkloadSpec:
    """A workload's torch-free declaration.

    Parameters
    ----------
    name : str
        What ``gpuviz run NAME`` takes (``loops``), or ``FILE.py:FUNC`` for a user file.
    title : str
        One line for lists and the app.
    help : str
        A paragraph: what it compares or shows.
    params : tuple of Param
        Its typed parameters.
    entry : str
        ``"module:function"`` of the body. For a built-in or plugin the body is
        ``build(ctx) -> Plan`` (see :mod:`gpuviz.workloads.base`); for a user file
        (``kind == "function"``) it is the function called once per step.
    multi_gpu : bool
        It uses several GPUs of one process (``--gpus`` applies).
    multi_process : bool
        It runs one process per rank (``ddp``); ``--out`` is then a folder of ``rank-N.json.gz``.
    kind : {"plan", "function"}
        Whether ``entry`` builds a plan or is a per-step function.
    source : str
        ``builtin``, ``plugin:<distribution>`` or the user file's path.
    file : str, optional
        A user file's path (its entry's module is loaded from there).
    default_steps : callable, optional
        ``default_steps(params) -> int``: the timed steps per strategy when ``--steps`` is not
        given (``dataparallel``: one epoch, ``ceil(length / batch)`` batches). None means
        :data:`DEFAULT_STEPS`.
    """

    name: str
    title: str
    help: str = ""
    params: tuple[Param, ...] = ()
    entry: str = ""
    multi_gpu: bool = False
    multi_process: bool = False
    kind: str = "plan"
    source: str = "builtin"
    file: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    default_steps: Callable[[Mapping[str, Any]], int] | None = field(default=None, compare=False)

    def steps_for(self, params: Mapping[str, Any]) -> int:
        """The timed steps per strategy when none are asked for (see ``default_steps``)."""
        if self.default_steps is None:
            return DEFAULT_STEPS
        return max(1, int(self.default_steps({**self.defaults(), **params})))

    def defaults(self) -> dict[str, Any]:
        """Each parameter's default value."""
        return {p.name: p.default for p in self.params}

    def param(self, name: str) -> Param:
        """The declared parameter called ``name`` (KeyError if none)."""
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        """A plain-JSON description (``gpuviz workloads --json``)."""
        return {
            "name": self.name,
            "title": self.title,
            "help": self.help,
            "multi_gpu": self.multi_gpu,
            "multi_process": self.multi_process,
            "source": self.source,
            "params": [p.to_json() for p in self.params],
        }

    def load(self) -> Callable[..., Any]:
        """Import and return the body (this may import torch and, for a user file, run it)."""
        module_name, _, attr = self.entry.partition(":")
        if self.file is not None:
            module = load_user_module(self.file)
        else:
            module = importlib.import_module(module_name)
        try:
            return getattr(module, attr)
        except AttributeError:
            where = self.file or module_name
            raise BadInputError(f"{where}: no function {attr!r}") from None


def builtin_workloads() -> dict[str, WorkloadSpec]:
    """The built-in workloads, by name, in listing order (modules not written yet are skipped)."""
    out: dict[str, WorkloadSpec] = {}
    for mod in BUILTIN_MODULES:
        try:
            module = importlib.import_module(f"gpuviz.workloads.{mod}")
        except ModuleNotFoundError as exc:
            if exc.name == f"gpuviz.workloads.{mod}":
                continue
            raise
        spec = getattr(module, "WORKLOAD", None)
        if isinstance(spec, WorkloadSpec):
            out[spec.name] = spec
    return out


def plugin_workloads() -> dict[str, WorkloadSpec]:
    """Workloads that installed packages add through the ``gpuviz.workloads`` group.

    A plugin that fails to load is skipped with a warning on stderr, so one broken package
    does not hide the others.
    """
    from importlib.metadata import entry_points

    out: dict[str, WorkloadSpec] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(getattr(ep, "dist", None), "name", "?")
        try:
            obj = ep.load()
        except Exception as exc:  # a broken plugin must not break listing
            echo(
                f"gpuviz: plugin workload {ep.name} ({dist}) failed to load: {exc}", file=sys.stderr
            )
            continue
        if isinstance(obj, WorkloadSpec):
            out[obj.name] = replace(obj, source=f"plugin:{dist}")
        elif callable(obj):
            out[ep.name] = WorkloadSpec(
                name=ep.name,
                title=(inspect.getdoc(obj) or ep.name).splitlines()[0],
                params=tuple(params_from_signature(obj)),
                entry=ep.value,
                kind="function",
                source=f"plugin:{dist}",
            )
    return out


def all_workloads() -> dict[str, WorkloadSpec]:
    """Built-ins, then plugins (a plugin never replaces a built-in of the same name)."""
    out = builtin_workloads()
    for name, spec in plugin_workloads().items():
        out.setdefault(name, spec)
    return out


def is_user_file(text: str) -> bool:
    """Whether ``text`` names a user workload (``FILE.py:FUNC``) rather than a workload name."""
    path, sep, _ = text.rpartition(":")
    return bool(sep) and path.endswith(".py")


def user_workload(text: str) -> WorkloadSpec:
    """The declaration of ``FILE.py:FUNC``, read from the source without running it.

    Raises
    ------
    BadInputError
        For a missing file, a syntax error or a missing function (each says which).
    """
    path, sep, func = text.rpartition(":")
    if not sep or not path.endswith(".py") or not func.isidentifier():
        raise BadInputError(f"{text}: expected FILE.py:FUNCTION")
    params = params_from_source(path, func)
    doc = docstring_from_source(path, func)
    return WorkloadSpec(
        name=text,
        title=doc or f"{func} from {os.path.basename(path)}",
        params=tuple(params),
        entry=f"{Path(path).stem}:{func}",
        kind="function",
        source=str(Path(path).resolve()),
        file=str(Path(path).resolve()),
    )


def resolve_workload(text: str) -> WorkloadSpec:
    """The workload that ``gpuviz run TEXT`` names: a built-in or plugin name, or ``FILE.py:FUNC``.

    Raises
    ------
    BadInputError
        Unknown name (listing the known ones) or a bad user file.
    """
    if is_user_file(text):
        return user_workload(text)
    if text.endswith(".py"):
        raise BadInputError(f"{text}: name the function too, as {text}:FUNCTION")
    known = builtin_workloads()
    if text in known:
        return known[text]
    plugins = plugin_workloads()
    if text in plugins:
        return plugins[text]
    names = ", ".join([*known, *plugins])
    raise BadInputError(f"{text}: no such workload (workloads: {names}; or FILE.py:FUNCTION)")


def load_user_module(path: str) -> Any:
    """Import a user file as a fresh module (this runs its top level; engine side only)."""
    import importlib.util

    p = Path(path)
    name = f"gpuviz_user_{p.stem}_{abs(hash(str(p.resolve()))) % 10**8}"
    spec = importlib.util.spec_from_file_location(name, p)
    if spec is None or spec.loader is None:
        raise BadInputError(f"{path}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # The user's folder goes on sys.path so the file can import its neighbours.
    folder = str(p.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec.loader.exec_module(module)
    return module


def params_from_signature(func: Callable[..., Any]) -> list[Param]:
    """Declared parameters of a function object (plugins): like the ``ast`` reading of a file."""
    kinds = {
        int: "int",
        float: "float",
        bool: "bool",
        str: "str",
        "int": "int",
        "float": "float",
        "bool": "bool",
        "str": "str",
    }
    out: list[Param] = []
    sig = inspect.signature(func)
    for i, p in enumerate(sig.parameters.values()):
        if i == 0 or p.default is inspect.Parameter.empty:
            continue
        kind = kinds.get(p.annotation)
        if kind is None:
            continue
        out.append(Param(p.name, kind, p.default, f"{kind} parameter of {func.__name__}"))  # type: ignore[arg-type]
    return out


__all__ = [
    "BUILTIN_MODULES",
    "ENTRY_POINT_GROUP",
    "WorkloadSpec",
    "all_workloads",
    "builtin_workloads",
    "is_user_file",
    "load_user_module",
    "params_from_signature",
    "plugin_workloads",
    "resolve_workload",
    "user_workload",
]
