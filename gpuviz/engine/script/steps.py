"""Where a script's steps end, and how long each took.

Step boundaries come from one of three sources:

- ``optimizer.step()`` of any ``torch.optim`` optimizer, through the global hook
  ``torch.optim.optimizer.register_optimizer_step_post_hook``: plain loops, Lightning, the
  Hugging Face Trainer and GradScaler all call it. With several optimizers (a GAN), the first
  one that steps ends the steps, so that one step stays one iteration. PyTorch calls post hooks
  inside the ``Optimizer.step#…`` range of the trace; where PyTorch's step wrapper allows
  (``Optimizer.profile_hook_step``), the boundary is moved just after that range ends, so the
  trace's ``ProfilerStep#N`` ranges nest the optimizer's range instead of cutting it.
- ``--step-fn MODULE:QUALNAME``: each return of that function (the outermost call, when it
  calls itself) ends a step. A function of ``__main__`` is decorated at compile time
  (:mod:`gpuviz.engine.script.target`); one of another module is wrapped when that module is
  imported.
- ``gpuviz.step()``, from the script itself. Once it is called, only its calls end steps.

With ``--step-fn`` given, only that function ends steps.

:mod:`gpuviz.engine.script.step_timer` times each step.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import inspect
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

SOURCE_OPTIMIZER = "optimizer.step()"
SOURCE_MANUAL = "gpuviz.step()"
SOURCE_STEP_FN = "--step-fn"


# ------------------------------------------------------------------------------ step sources


class StepSources:
    """Installs the step hooks and calls ``on_boundary(source, device)`` once per step.

    Parameters
    ----------
    on_boundary : callable
        ``on_boundary(source, device)``: a step ended, in the thread that ran it; ``device``
        is the ``torch.device`` the step ran on when known (an optimizer's parameters' device).
        It may raise (``--stop``): the exception reaches the script where its step ended.
    step_fn : tuple of (str, str), optional
        ``(module, qualname)`` of ``--step-fn``.
    on_optimizer_created : callable, optional
        Called once, when the script makes its first optimizer.
    say : callable
        Prints one ``gpuviz:`` line (stderr).
    on_step_fn_resolved : callable, optional
        Called once, when the ``--step-fn`` function is found and wrapped.
    on_step_fn_problem : callable, optional
        ``on_step_fn_problem(text)``: the ``--step-fn`` name was found but marks no step (not
        a function, a generator, no such attribute). Default: ``say`` it.
    """

    def __init__(
        self,
        on_boundary: Callable[[str, Any], None],
        step_fn: tuple[str, str] | None = None,
        on_optimizer_created: Callable[[], None] | None = None,
        say: Callable[[str], None] = print,
        on_step_fn_resolved: Callable[[], None] | None = None,
        on_step_fn_problem: Callable[[str], None] | None = None,
    ) -> None:
        self.on_boundary = on_boundary
        self.step_fn = step_fn
        self.on_optimizer_created = on_optimizer_created
        self.say = say
        self.on_step_fn_resolved = on_step_fn_resolved
        self.on_step_fn_problem = on_step_fn_problem or (
            lambda text: say(f"--step-fn {':'.join(step_fn or ())}: {text}")
        )
        self.source: str | None = SOURCE_STEP_FN if step_fn else None
        self.optimizer_created = False
        self.step_fn_wrapped = 0
        self.optimizers_seen = 0
        self._optimizer: Any = None  # weakref to the optimizer that ends steps
        self._optimizer_name = ""
        self._device: Any = None
        self._warned_second = False
        self._local = threading.local()
        self._handles: list[Any] = []
        self._undo: list[Callable[[], None]] = []
        self._finder: _WrapOnImport | None = None
        self._enabled = False

    # -- installing -------------------------------------------------------------------------
    def install(self) -> None:
        """Register the hooks (before the script runs)."""
        import torch.optim.optimizer as optim_mod

        import gpuviz

        self._enabled = True
        # Registered with --step-fn too: the first optimizer is also the sign of a training
        # script (the session stops its no-step recording there).
        self._handles.append(optim_mod.register_optimizer_step_post_hook(self._on_optimizer_post))
        self._patch_hook_step(optim_mod.Optimizer)
        previous = gpuviz._step_hook
        gpuviz._step_hook = self._on_manual
        self._undo.append(lambda: setattr(gpuviz, "_step_hook", previous))
        if self.step_fn is not None and self.step_fn[0] != "__main__":
            self._finder = _WrapOnImport(self.step_fn[0], self._wrap_in_module)
            if self.step_fn[0] in sys.modules:
                self._finder.done = True
                self._wrap_in_module(sys.modules[self.step_fn[0]])
            else:
                sys.meta_path.insert(0, self._finder)

    def pause(self) -> None:
        """Ignore step boundaries from now on. The hooks stay in place and return at once
        (removing one from inside a hook would change the dict torch iterates over)."""
        self._enabled = False

    def uninstall(self) -> None:
        """Remove the hooks (idempotent). Wrapped classes stay wrapped but pass calls through."""
        self._enabled = False
        for h in self._handles:
            with contextlib.suppress(Exception):
                h.remove()
        self._handles = []
        for undo in reversed(self._undo):
            with contextlib.suppress(Exception):
                undo()
        self._undo = []
        if self._finder is not None and self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)

    def _patch_hook_step(self, optimizer_cls: Any) -> None:
        original = optimizer_cls.__dict__.get("profile_hook_step")
        if not isinstance(original, staticmethod):
            return  # another torch: the post hook ends steps where it runs
        inner_factory = original.__func__
        sources = self

        def profile_hook_step(func: Any) -> Any:
            wrapper = inner_factory(func)
            sources._on_optimizer_class()

            @functools.wraps(wrapper)
            def after_range(*args: Any, **kwargs: Any) -> Any:
                local = sources._local
                local.depth = getattr(local, "depth", 0) + 1
                try:
                    out = wrapper(*args, **kwargs)
                except BaseException:
                    local.pending = None
                    raise
                finally:
                    local.depth -= 1
                if local.depth == 0:
                    pending = getattr(local, "pending", None)
                    if pending is not None:
                        local.pending = None
                        sources._optimizer_boundary(pending)
                return out

            return after_range

        optimizer_cls.profile_hook_step = staticmethod(profile_hook_step)
        self._undo.append(lambda: setattr(optimizer_cls, "profile_hook_step", original))

    # -- the sources --------------------------------------------------------------------------
    def _on_optimizer_class(self) -> None:
        # PyTorch wraps an optimizer class's step when its first instance is made.
        if self._enabled and not self.optimizer_created:
            self.optimizer_created = True
            if self.on_optimizer_created is not None:
                self.on_optimizer_created()

    def _on_optimizer_post(self, optimizer: Any, _args: Any, _kwargs: Any) -> None:
        if not self._enabled:
            return
        if not self.optimizer_created:
            self._on_optimizer_class()
        if getattr(self._local, "depth", 0) > 0:
            self._local.pending = optimizer  # ended just after the Optimizer.step range
            return
        self._optimizer_boundary(optimizer)

    def _optimizer_boundary(self, optimizer: Any) -> None:
        if not self._enabled or self.source in (SOURCE_MANUAL, SOURCE_STEP_FN):
            return
        current = self._optimizer() if self._optimizer is not None else None
        if current is None:
            self._optimizer = weakref.ref(optimizer)
            self.optimizers_seen += 1
            if self.optimizers_seen > 1:
                self.say(
                    f"the optimizer that ended steps is gone; steps now end at "
                    f"{type(optimizer).__name__}.step()"
                )
            self._optimizer_name = type(optimizer).__name__
            self._device = _optimizer_device(optimizer)
            self.source = SOURCE_OPTIMIZER
        elif current is not optimizer:
            if not self._warned_second:
                self._warned_second = True
                self.say(
                    f"a second optimizer ({type(optimizer).__name__}) steps; steps end at the "
                    f"first one's ({self._optimizer_name}), so that a step stays one iteration"
                )
            return
        self.on_boundary(SOURCE_OPTIMIZER, self._device)

    def _on_manual(self) -> None:
        if not self._enabled or self.source == SOURCE_STEP_FN:
            return
        if self.source != SOURCE_MANUAL:
            if self.source == SOURCE_OPTIMIZER:
                self.say("the script calls gpuviz.step(): from now on only its calls end steps")
            self.source = SOURCE_MANUAL
        self.on_boundary(SOURCE_MANUAL, None)

    def on_step_fn_return(self) -> None:
        """A ``--step-fn`` call returned (its outermost call)."""
        if self._enabled:
            self.on_boundary(SOURCE_STEP_FN, None)

    # -- --step-fn ----------------------------------------------------------------------------
    def decorator(self) -> Callable[[Any], Any]:
        """The decorator put on a ``__main__`` step function by the compiler."""

        def decorate(func: Any) -> Any:
            wrapped = self.wrap(func, f"__main__:{getattr(func, '__qualname__', func)}")
            if wrapped is not func:
                self._resolved()
            return wrapped

        return decorate

    def _resolved(self) -> None:
        self.step_fn_wrapped += 1
        if self.step_fn_wrapped == 1 and self.on_step_fn_resolved is not None:
            self.on_step_fn_resolved()

    def wrap(self, func: Any, name: str) -> Any:
        """``func`` wrapped so that each outermost return ends a step (``func`` itself, said
        through ``on_step_fn_problem``, where its returns cannot mark steps)."""
        del name
        if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
            self.on_step_fn_problem(
                "it is a generator, whose calls return at once; name the function that "
                "consumes it, or call gpuviz.step()"
            )
            return func
        if inspect.iscoroutinefunction(func):
            self.on_step_fn_problem(
                "it is a coroutine function (async def), whose calls return at once; call "
                "gpuviz.step() where a step ends"
            )
            return func
        local = threading.local()
        on_return = self.on_step_fn_return

        @functools.wraps(func)
        def step_fn(*args: Any, **kwargs: Any) -> Any:
            depth = getattr(local, "depth", 0)
            local.depth = depth + 1
            try:
                out = func(*args, **kwargs)
            finally:
                local.depth = depth
            if depth == 0:
                on_return()
            return out

        return step_fn

    def _wrap_in_module(self, module: Any) -> None:
        assert self.step_fn is not None
        mod_name, qualname = self.step_fn
        parts = [p for p in qualname.split(".") if p != "<locals>"]
        owner = module
        try:
            for p in parts[:-1]:
                owner = getattr(owner, p)
            raw = inspect.getattr_static(owner, parts[-1])
        except AttributeError:
            self.on_step_fn_problem(f"{mod_name} has no {qualname}")
            return
        name = f"{mod_name}:{qualname}"
        func = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
        if not callable(func):
            self.on_step_fn_problem(f"not a function ({type(raw).__name__})")
            return
        wrapped = self.wrap(func, name)
        if wrapped is func:
            return
        if isinstance(raw, staticmethod):
            wrapped = staticmethod(wrapped)
        elif isinstance(raw, classmethod):
            wrapped = classmethod(wrapped)
        setattr(owner, parts[-1], wrapped)
        self._resolved()


class _WrapOnImport(importlib.abc.MetaPathFinder):
    """Finds one module through the other finders and calls ``apply(module)`` once it ran."""

    def __init__(self, name: str, apply: Callable[[Any], None]) -> None:
        self.name = name
        self.apply = apply
        self.done = False

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name or self.done:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        self.done = True
        spec.loader = _ApplyingLoader(spec.loader, self.apply)
        return spec


class _ApplyingLoader(importlib.abc.Loader):
    """A loader that runs the real one, then applies the wrap."""

    def __init__(self, loader: Any, apply: Callable[[Any], None]) -> None:
        self._loader = loader
        self._apply = apply

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        self._apply(module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_code...: the real loader's
        return getattr(self._loader, name)


def _optimizer_device(optimizer: Any) -> Any:
    for group in optimizer.param_groups:
        for p in group.get("params", ()):
            return p.device
    return None


__all__ = [
    "SOURCE_MANUAL",
    "SOURCE_OPTIMIZER",
    "SOURCE_STEP_FN",
    "StepSources",
]
