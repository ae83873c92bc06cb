"""How long a job has left, from how far it has come: the "about N s left" of a progress bar.

An import reports the fraction of its bytes read; the time left follows from the rate so far.
A rate measured over the last moments jumps with every burst (a child's whole-file reply lands
at once, a chunk decoded in the importer stalls the reports), so :class:`TimeLeft` takes the
rate over the whole job, and then lets what it shows move only part of the way to each new
figure: down freely (a count-down), up slowly. On a steady feed it never rises; on a bursty
one it rises little (tests/trace/test_progress_estimate.py measures both).

Pure Python, no clock of its own: the caller passes the elapsed time with each sample, so
the CLI (rich), the app (Qt) and the tests share it.
"""

from __future__ import annotations

import math

__all__ = ["TimeLeft", "describe_time_left"]


class TimeLeft:
    """Seconds left of a job, fed ``(fraction done, seconds elapsed)`` samples, smoothed.

    Parameters
    ----------
    min_elapsed_s : float
        No estimate before this much time: the first moments (start-up, the first chunk)
        say little about the rate.
    min_fraction : float
        No estimate before this fraction is done.
    down, up : float
        How far (0 to 1) the figure shown moves towards a new, lower or higher, estimate with
        each sample. Between samples it counts down with the clock.

    Examples
    --------
    >>> est = TimeLeft(min_elapsed_s=0.0)
    >>> round(est.update(0.5, 10.0))
    10
    """

    def __init__(
        self,
        min_elapsed_s: float = 1.0,
        min_fraction: float = 0.01,
        down: float = 0.3,
        up: float = 0.15,
    ) -> None:
        self.min_elapsed_s = min_elapsed_s
        self.min_fraction = min_fraction
        self.down = down
        self.up = up
        self._shown: float | None = None
        self._at = 0.0  # elapsed time of the figure shown
        self._fraction = 0.0  # the fraction it was made from

    def update(self, fraction: float, elapsed_s: float) -> float | None:
        """Take a sample; the seconds left, or None while it is too early to say.

        Parameters
        ----------
        fraction : float
            Done so far, 0 to 1 (values outside are clipped; a NaN is ignored).
        elapsed_s : float
            Seconds since the job started.
        """
        if not (math.isfinite(fraction) and math.isfinite(elapsed_s)):
            return self._shown
        fraction = min(max(fraction, 0.0), 1.0)
        if fraction >= 1.0:
            self._shown, self._at = 0.0, elapsed_s
            return 0.0
        if elapsed_s < self.min_elapsed_s or fraction < self.min_fraction:
            return self._shown
        # The rate over the whole job: steadier than any recent window.
        raw = elapsed_s * (1.0 - fraction) / fraction
        if self._shown is None:
            self._shown, self._at, self._fraction = raw, elapsed_s, fraction
            return raw
        counted = max(self._shown - max(elapsed_s - self._at, 0.0), 0.0)
        if fraction <= self._fraction and counted > 0.0:
            # No news (the reports come in bursts): count down. A stall that outlasts the
            # figure shown lets it climb again below.
            return counted
        self._fraction = max(fraction, self._fraction)
        step = self.down if raw < counted else self.up
        self._shown = max(counted + step * (raw - counted), 0.0)
        self._at = max(elapsed_s, self._at)
        return self._shown

    def left(self, elapsed_s: float) -> float | None:
        """The figure shown, counted down to ``elapsed_s`` (between samples)."""
        if self._shown is None:
            return None
        return max(self._shown - max(elapsed_s - self._at, 0.0), 0.0)


def describe_time_left(seconds: float | None) -> str:
    """``"about 12 s left"``, ``"about 3 min left"``, or ``""`` when unknown.

    Rounded coarsely (to half minutes past a minute), so that the text does not flicker.
    """
    if seconds is None or not math.isfinite(seconds):
        return ""
    if seconds < 1.0:
        return "less than a second left"
    if seconds < 60.0:
        return f"about {math.ceil(seconds)} s left"
    if seconds < 600.0:
        return f"about {math.ceil(seconds / 60.0 * 2) / 2:g} min left"
    return f"about {math.ceil(seconds / 60.0)} min left"
