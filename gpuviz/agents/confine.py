"""The folders an agents' server may read, and the check every path it is given goes through.

A path is taken relative to the first root under which it exists (else to the first root),
then resolved, symbolic links and ``..`` included, *before* it is compared with the roots: a
link inside a root that points out of it is refused like a path outside. A folder (one trace
per rank) is checked file by file, since each of its trace files could be such a link (other
entries, which are never read, are not looked at). Every refusal
is a :class:`PathRefused` with one sentence that names the path and what is wrong.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from gpuviz.display import terminal_safe
from gpuviz.errors import BadInputError


def folder_files(folder: Path) -> list[Path]:
    """The files a folder is read as: its trace files, one per rank (none: an empty list)."""
    from gpuviz.trace.errors import TraceFormatError
    from gpuviz.trace.kineto import trace_files

    try:
        return trace_files(folder)
    except TraceFormatError:
        return []


class PathRefused(BadInputError):
    """A path the server will not read: outside its roots, a link leading out, or missing."""


def folder_inside(root: Path, name: str) -> Path:
    """The folder ``root/name`` (made if missing) where the server writes, resolved, links and
    all, and checked to lie under ``root``: a ``name`` that is a link out (or a file) is refused
    rather than written through.

    Raises
    ------
    PathRefused
        It resolves outside ``root``, or is not a folder.
    """
    base = root.resolve()
    real = (base / name).resolve()
    shown = terminal_safe(name, one_line=True)
    if not real.is_relative_to(base):
        raise PathRefused(
            f"{shown} in {base} is a symbolic link that leads outside it ({real}); remove the "
            "link or make it a folder there, nothing was written."
        )
    try:
        real.mkdir(exist_ok=True)
    except OSError as exc:
        why = terminal_safe(exc.strerror or str(exc), one_line=True)
        raise PathRefused(f"{shown} in {base}: cannot be used as a folder ({why}).") from None
    if not real.is_dir():
        raise PathRefused(f"{shown} in {base}: not a folder.")
    return real


class Roots:
    """The folders a server serves.

    Parameters
    ----------
    roots : sequence of str or Path
        Existing folders (resolved here); at least one.

    Raises
    ------
    BadInputError
        A root that does not exist or is not a folder.
    """

    def __init__(self, roots: Sequence[str | os.PathLike[str]]) -> None:
        if not roots:
            raise BadInputError("no root folder to serve")
        resolved = []
        for r in roots:
            p = Path(r).expanduser()
            if not p.is_dir():
                raise BadInputError(f"--root {r}: not a folder")
            resolved.append(p.resolve())
        self.paths: list[Path] = resolved

    def __str__(self) -> str:
        return ", ".join(str(p) for p in self.paths)

    def contains(self, path: Path) -> bool:
        """Whether a resolved ``path`` lies in or under one of the roots."""
        return any(path == r or path.is_relative_to(r) for r in self.paths)

    def _candidate(self, text: str) -> Path:
        p = Path(text).expanduser()
        if p.is_absolute():
            return p
        for r in self.paths:
            if (r / p).exists() or (r / p).is_symlink():
                return r / p
        return self.paths[0] / p

    def resolve(self, text: str, what: str = "path") -> Path:
        """The resolved path of ``text``, checked (see the module docstring).

        Parameters
        ----------
        text : str
            As the agent gave it: absolute, or relative to a root.
        what : str
            What the path names, for the message (``path``, ``script``).

        Raises
        ------
        PathRefused
            Empty, outside the roots (itself or through a link), or missing.
        """
        shown = terminal_safe(text, one_line=True)
        if len(shown) > 200:
            shown = shown[:199] + "…"
        if not text.strip():
            raise PathRefused(f"the {what} is empty: name a file under {self}.")
        try:
            candidate = self._candidate(text)
            lexical = Path(os.path.abspath(candidate))
            real = candidate.resolve()
            real.exists()
        except (OSError, ValueError, RuntimeError) as exc:  # a NUL byte, a name too long, a loop
            why = terminal_safe(getattr(exc, "strerror", None) or str(exc), one_line=True)
            raise PathRefused(f"{shown}: not a usable {what} ({why}).") from None
        if not self.contains(real):
            if self.contains(lexical):
                raise PathRefused(
                    f"{shown}: a symbolic link that leads outside the folders this server may "
                    f"read ({self}); it was not opened."
                )
            raise PathRefused(
                f"{shown}: outside the folders this server may read ({self}); name a file "
                "under one of them."
            )
        if not real.exists():
            raise PathRefused(f"{shown}: no such file or folder under {self}.")
        if real.is_dir():
            self.check_all(folder_files(real), shown)
        return real

    def check_all(self, paths: Iterable[Path], shown: str) -> None:
        """Refuse when any of ``paths`` (the files a folder is read as) resolves outside."""
        for child in paths:
            if not self.contains(child.resolve()):
                name = terminal_safe(child.name, one_line=True)
                raise PathRefused(
                    f"{shown}: its entry {name} is a symbolic link that leads outside the "
                    f"folders this server may read ({self}); nothing was opened."
                )
