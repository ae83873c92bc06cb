"""Which steps of a script are profiled: ``torch.profiler.schedule``'s rule, without torch.

Steps count from 0; step ``k`` ends at the ``k``-th step boundary (``optimizer.step()``...).
The first ``skip`` steps are left alone (start-up, autotuning, compilation). Then each window
has ``warmup`` steps (the profiler runs, its events are dropped) and ``active`` recorded steps,
the last of which saves the trace. ``repeat`` windows follow one another (0: until the script
ends). This is ``torch.profiler.schedule(skip_first=skip, wait=0, warmup=warmup,
active=active, repeat=repeat)``, and the session hands torch :meth:`Schedule.action`, so the
two never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from gpuviz.errors import BadInputError


class Phase(Enum):
    """What the profiler does during a step (``torch.profiler.ProfilerAction``'s values)."""

    NONE = "none"
    WARMUP = "warmup"
    RECORD = "record"
    RECORD_AND_SAVE = "record_and_save"


@dataclass(frozen=True)
class Schedule:
    """``--skip``, ``--warmup``, ``--active`` and ``--repeat`` (see the module docstring)."""

    skip: int = 5
    warmup: int = 2
    active: int = 5
    repeat: int = 1

    def check(self) -> None:
        """Raise :class:`BadInputError` naming the flag that is out of range."""
        for flag, value, low in (
            ("--skip", self.skip, 0),
            ("--warmup", self.warmup, 0),
            ("--active", self.active, 1),
            ("--repeat", self.repeat, 0),
        ):
            if value < low:
                raise BadInputError(f"{flag} {value}: must be {low} or more")

    @property
    def cycle(self) -> int:
        """Steps in one window (warm-up and recorded)."""
        return self.warmup + self.active

    def phase(self, step: int) -> Phase:
        """What the profiler does during ``step``."""
        if step < self.skip:
            return Phase.NONE
        window, at = divmod(step - self.skip, self.cycle)
        if self.repeat and window >= self.repeat:
            return Phase.NONE
        if at < self.warmup:
            return Phase.WARMUP
        return Phase.RECORD_AND_SAVE if at == self.cycle - 1 else Phase.RECORD

    def window(self, step: int) -> int | None:
        """The window (from 0) that ``step`` belongs to, or None outside every window."""
        if self.phase(step) is Phase.NONE:
            return None
        return (step - self.skip) // self.cycle

    def recorded_steps(self, window: int) -> range:
        """The recorded steps of ``window`` (its ``ProfilerStep#N`` ranges)."""
        first = self.skip + window * self.cycle + self.warmup
        return range(first, first + self.active)

    @property
    def last_step(self) -> int | None:
        """The step that saves the last window, or None when windows repeat forever."""
        if not self.repeat:
            return None
        return self.skip + self.repeat * self.cycle - 1

    def describe(self) -> str:
        """One phrase for messages: ``skip 5, then 1 window of 2 warm-up + 5 recorded steps``."""
        windows = (
            "windows until the script ends"
            if not self.repeat
            else (f"{self.repeat} window" + ("s" if self.repeat != 1 else ""))
        )
        return (
            f"skip {self.skip}, then {windows} of {self.warmup} warm-up + "
            f"{self.active} recorded step" + ("s" if self.active != 1 else "")
        )


__all__ = ["Phase", "Schedule"]
