"""The script (or ``-m`` module) that ``gpuviz profile`` runs, as Python itself would run it.

It runs as ``__main__`` in this process, with ``sys.argv`` = ``[SCRIPT, *ARGS]`` (for a module,
its file, as ``python -m`` does), and its folder first on ``sys.path`` (the working folder for
a module). The module object stands in ``sys.modules["__main__"]`` while it runs, with
``__file__`` (and ``__spec__`` for a module) set, so ``multiprocessing`` with ``spawn`` (the
DataLoader's workers) finds and re-imports it in its children as it would under ``python``.

``--step-fn __main__:QUALNAME`` names a function that does not exist until the script defines
it. The script is compiled from its source with one decorator added to that ``def`` (the
parse tree is changed, not the text: line numbers and tracebacks stay the script's own), so
each of its returns ends a step. Functions of other modules are wrapped when their module is
imported (:mod:`gpuviz.engine.script.steps`).

Torch-free.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import io
import os
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuviz.errors import BadInputError

STEP_DECORATOR = "__gpuviz_step_fn__"
"""The global name of the decorator put on a ``--step-fn __main__:...`` function."""


@dataclass
class Target:
    """What runs: a script file or a module, and its arguments.

    Attributes
    ----------
    kind : {"script", "module"}
    name : str
        The script as given, or the module's name.
    args : list of str
        The script's own arguments.
    file : Path or None
        The file that runs (a module's ``__main__``'s file); None for a module with no source.
    spec : ModuleSpec or None
        For a module.
    """

    kind: str
    name: str
    args: list[str]
    file: Path | None
    spec: Any = None

    @property
    def label(self) -> str:
        """``train.py`` or ``pkg.train``: the name in messages and ``Started.workload``."""
        return Path(self.name).name if self.kind == "script" else self.name

    @property
    def stem(self) -> str:
        """The default trace name's first part: ``train`` for ``train.py``, ``pkg.train``."""
        return Path(self.name).stem if self.kind == "script" else self.name

    @property
    def argv(self) -> list[str]:
        """The script's ``sys.argv``."""
        first = str(self.file) if self.kind == "module" and self.file else self.name
        return [first, *self.args]


def resolve_target(script: str | None, module: str | None, args: list[str]) -> Target:
    """Find the script or module, and set ``sys.path[0]`` as Python would for it.

    Raises
    ------
    BadInputError
        No such file, a folder, or no such module (one line, exit 2).
    """
    if script is not None:
        path = Path(script)
        if not path.exists():
            raise BadInputError(f"{script}: no such script")
        if path.is_dir():
            raise BadInputError(f"{script}: is a folder; name the script to run (a .py file)")
        sys.path[0:1] = [str(path.resolve().parent)]
        return Target("script", script, list(args), path.resolve())
    assert module is not None
    sys.path[0:1] = [os.getcwd()]
    spec = _module_spec(module)
    file = Path(spec.origin) if spec.origin and spec.has_location else None
    return Target("module", module, list(args), file, spec)


def _module_spec(name: str) -> Any:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as exc:
        raise BadInputError(f"-m {name}: cannot find the module ({exc})") from None
    if spec is None:
        raise BadInputError(f"-m {name}: no module named {name!r}")
    if spec.submodule_search_locations is not None:  # a package: run its __main__
        if name == "__main__" or name.endswith(".__main__"):
            raise BadInputError(f"-m {name}: cannot run a package's __main__ as a package")
        return _module_spec(name + ".__main__")
    if spec.loader is None:
        raise BadInputError(f"-m {name}: {name!r} is a namespace package, not a module")
    return spec


class _AddStepDecorator(ast.NodeTransformer):
    """Puts ``@__gpuviz_step_fn__`` (innermost) on every ``def`` at ``qualname``."""

    def __init__(self, qualname: str) -> None:
        self.path = [p for p in qualname.split(".") if p != "<locals>"]
        self.found = 0

    def visit_Module(self, node: ast.Module) -> ast.Module:
        self._descend(node.body, 0)
        return node

    def _descend(self, body: list[ast.stmt], depth: int) -> None:
        name = self.path[depth]
        last = depth == len(self.path) - 1
        for stmt in body:
            for node in _defs_in(stmt):
                if node.name != name:
                    continue
                if last and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    dec = ast.copy_location(ast.Name(id=STEP_DECORATOR, ctx=ast.Load()), node)
                    node.decorator_list.append(dec)
                    self.found += 1
                elif not last:
                    self._descend(node.body, depth + 1)


def _defs_in(stmt: ast.stmt) -> list[Any]:
    """The defs and classes a statement makes, looking inside if/try/with blocks."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt]
    out: list[Any] = []
    for attr in ("body", "orelse", "finalbody", "handlers"):
        for child in getattr(stmt, attr, []) or []:
            if isinstance(child, ast.ExceptHandler):
                for c in child.body:
                    out.extend(_defs_in(c))
            elif isinstance(child, ast.stmt):
                out.extend(_defs_in(child))
    return out


def compile_main(target: Target, step_qualname: str | None) -> tuple[types.CodeType, int]:
    """The code object of the target, with ``--step-fn __main__:step_qualname`` decorated.

    Returns the code and how many ``def`` were decorated. ``SyntaxError`` is the script's own
    failure, raised as Python would raise it.
    """
    if target.kind == "module":
        loader = target.spec.loader
        if step_qualname is None:
            code = loader.get_code(target.spec.name)
            if code is None:
                raise BadInputError(f"-m {target.name}: the module has no code to run")
            return code, 0
        source = loader.get_source(target.spec.name)
        if source is None:
            raise BadInputError(
                f"--step-fn __main__:{step_qualname}: -m {target.name} has no source to read"
            )
        filename = str(target.file or target.spec.origin)
    else:
        with io.open_code(str(target.file)) as f:
            source = f.read()
        filename = str(target.file)
    if step_qualname is None:
        # dont_inherit: gpuviz's own ``from __future__`` imports must not reach the script.
        return compile(source, filename, "exec", dont_inherit=True), 0
    tree = compile(source, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    marker = _AddStepDecorator(step_qualname)
    tree = ast.fix_missing_locations(marker.visit(tree))
    return compile(tree, filename, "exec", dont_inherit=True), marker.found


def run_as_main(
    target: Target, code: types.CodeType, extra_globals: dict[str, Any] | None = None
) -> None:
    """Run ``code`` as ``__main__`` with the target's ``sys.argv``; raises what the script raises.

    ``sys.modules["__main__"]`` and ``sys.argv`` are put back afterwards, as ``runpy`` does.
    The script's module is kept until the process exits (:data:`_FINISHED`), as under
    ``python script.py``, where its globals outlive its last line.
    """
    module = types.ModuleType("__main__")
    g = module.__dict__
    g.update(__builtins__=builtins, __cached__=None, __doc__=None)
    if target.kind == "module":
        spec = target.spec
        g.update(
            __file__=spec.origin,
            __cached__=spec.cached,
            __loader__=spec.loader,
            __package__=spec.parent,
            __spec__=spec,
        )
    else:
        g.update(__file__=str(target.file), __loader__=None, __package__=None, __spec__=None)
    if extra_globals:
        g.update(extra_globals)
    saved_main = sys.modules.get("__main__")
    saved_argv = sys.argv[:]
    sys.modules["__main__"] = module
    sys.argv[:] = target.argv
    try:
        exec(code, g)
    finally:
        _FINISHED.append(module)
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
        sys.argv[:] = saved_argv


_FINISHED: list[types.ModuleType] = []
"""The modules of the scripts that ran. Freeing one as soon as its last line returned freed
its objects while their threads were still busy: a DDP model's gloo process group, whose
destructor joins gloo's worker threads while holding the GIL, deadlocked when a worker still
finishing its last collective needed the GIL (seen as a hang of both ranks of
``test_torchrun_two_gloo_ranks_merge_in_summary``, stuck in ``~ProcessGroupGloo`` from the
Reducer's dealloc, after their traces were written)."""


def trim_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` without gpuviz's and runpy's frames at its top: the traceback Python would print."""
    package = str(Path(__file__).resolve().parents[2]) + os.sep
    runpy_file = _runpy_file()
    while tb is not None:
        filename = os.path.abspath(tb.tb_frame.f_code.co_filename)
        if filename.startswith(package) or filename == runpy_file:
            tb = tb.tb_next
            continue
        break
    return tb


def _runpy_file() -> str:
    import runpy

    return os.path.abspath(runpy.__file__)


def print_exception(exc: BaseException) -> None:
    """Print ``exc`` as Python prints an uncaught exception (through ``sys.excepthook``)."""
    tb = trim_traceback(exc.__traceback__)
    exc.__traceback__ = tb  # Python's hook prints the exception's own traceback
    hook: Callable[..., Any] = sys.excepthook
    try:
        hook(type(exc), exc, tb)
    except Exception:  # a broken hook of the script's: fall back to Python's own
        sys.__excepthook__(type(exc), exc, tb)


def exit_code_of(exc: SystemExit) -> int:
    """The status Python exits with for ``sys.exit(code)``: an int as is, None 0, else 1.

    A non-int code is printed on stderr first, as Python does.
    """
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):  # bool too: sys.exit(True) is 1
        return int(code) % 256  # what a POSIX shell sees
    print(code, file=sys.stderr)
    return 1


__all__ = [
    "STEP_DECORATOR",
    "Target",
    "compile_main",
    "exit_code_of",
    "print_exception",
    "resolve_target",
    "run_as_main",
    "trim_traceback",
]


def caller_outside_torch() -> str:
    """``file:line`` of the innermost frame that is neither torch's nor gpuviz's."""
    import torch

    skip = (os.path.dirname(torch.__file__), str(Path(__file__).resolve().parents[2]))
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if (
            not filename.startswith(skip)
            and "lightning" not in filename
            and ("transformers" not in filename)
        ):
            return f"{os.path.basename(filename)}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    return ""
