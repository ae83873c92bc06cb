"""Errors and warnings raised while reading traces."""

from __future__ import annotations

from gpuviz.errors import BadInputError


class TraceFormatError(BadInputError, ValueError):
    """A file that cannot be read as a trace.

    Parameters
    ----------
    path : str
        The file (or folder) at fault.
    where : str
        The place in it: ``"byte 1234"``, ``"event 17"``, or ``""`` when it is the whole file.
    what : str
        What is wrong, in words a user understands.
    """

    def __init__(self, path: str, where: str, what: str) -> None:
        self.path = str(path)
        self.where = where
        self.what = what
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """One line: ``path: where: what``."""
        parts = [self.path]
        if self.where:
            parts.append(self.where)
        parts.append(self.what)
        return ": ".join(parts)


class ImportWarnings:
    """Events skipped on import: a count, and the first few messages to show.

    A plain class, not a dataclass: this module is on the path of a kept output
    (:mod:`gpuviz.trace.cache_memo`), where :mod:`dataclasses` (and the :mod:`inspect` it
    imports) is a tenth of the process.

    Attributes
    ----------
    count : int
        How many events were skipped.
    samples : list of str
        The first ``limit`` messages.
    limit : int
        How many messages are kept.
    """

    __slots__ = ("count", "limit", "samples")

    def __init__(self, count: int = 0, samples: list[str] | None = None, limit: int = 20) -> None:
        self.count = count
        self.samples = [] if samples is None else samples
        self.limit = limit

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ImportWarnings):
            return NotImplemented
        return (self.count, self.samples, self.limit) == (other.count, other.samples, other.limit)

    __hash__ = None  # type: ignore[assignment]  # mutable: unhashable, as the dataclass was

    def __repr__(self) -> str:
        return f"ImportWarnings(count={self.count}, samples={self.samples!r}, limit={self.limit})"

    def add(self, message: str, n: int = 1) -> None:
        """Count ``n`` skipped events, keeping the message while there is room."""
        self.count += n
        if len(self.samples) < self.limit:
            self.samples.append(message)

    def extend(self, other: ImportWarnings) -> None:
        """Add another file's warnings to these."""
        self.count += other.count
        room = self.limit - len(self.samples)
        self.samples.extend(other.samples[: max(room, 0)])


class ImportCancelledError(Exception):
    """The caller cancelled an import (its ``cancelled()`` returned True).

    Not a :class:`BadInputError`: the file may be fine. Carries the file being read.

    Parameters
    ----------
    path : str
        The file that was being read.
    """

    def __init__(self, path: str = "") -> None:
        self.path = str(path)
        super().__init__(f"{self.path}: import cancelled" if self.path else "import cancelled")
