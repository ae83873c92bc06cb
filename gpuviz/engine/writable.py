"""Whether a run's outputs can be written, asked before the run starts (torch-free).

A trace is written at the end of a profiled window, often minutes into a run: an ``--out`` in
a read-only place used to let a whole script run and then fail, and the failure was reported
as a missing file (Kineto logs its own error and returns, and the next step found nothing).
``gpuviz run`` and ``gpuviz profile`` call :func:`check_out_folder` and
:func:`open_event_writer` first, so that such a place is refused as bad input (exit 2, one
line) before any of the user's code runs.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from gpuviz.engine.events import EventWriter
from gpuviz.errors import BadInputError


def reason(exc: OSError) -> str:
    """An ``OSError`` as people read it: ``Read-only file system``, not ``[Errno 30] …: 'x'``."""
    return exc.strerror or str(exc)


def probe_folder(folder: Path) -> None:
    """Create ``folder`` (and its parents) and a temporary file in it, then remove the file.

    Raises
    ------
    OSError
        What stops writing there (``EROFS``, ``EACCES``, ``ENOSPC``, a file in the way…).
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a file where a folder should be: mkdir's word for it misleads
        raise NotADirectoryError(errno.ENOTDIR, "a file is in the way of the folder") from None
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".gpuviz-check-")
    os.close(fd)
    os.unlink(tmp)


def check_out_folder(path: Path, is_folder: bool, flag: str = "--out") -> None:
    """Refuse an output that cannot be written: ``path`` is a trace file, or (``is_folder``)
    the folder that receives the ranks' files.

    Raises
    ------
    BadInputError
        One line naming ``flag``, the path and the cause.
    """
    if not is_folder:
        check_file_place(path, flag, "a trace file (.json or .json.gz)")
        return
    try:
        probe_folder(path)
    except OSError as exc:
        raise BadInputError(f"{flag} {path}: cannot write there: {reason(exc)}") from None


def check_file_place(path: Path, flag: str, what: str) -> None:
    """Refuse a file output whose name is a folder, or whose folder cannot be written.

    Raises
    ------
    BadInputError
        One line naming ``flag``, the path and the cause; ``what`` says what to name instead
        of a folder.
    """
    if path.is_dir():
        raise BadInputError(f"{flag} {path}: is a folder; name {what}")
    folder = path.parent
    try:
        probe_folder(folder)
    except OSError as exc:
        raise BadInputError(f"{flag} {path}: cannot write in {folder}: {reason(exc)}") from None


def open_event_writer(path: str, flag: str = "--events") -> EventWriter:
    """The :class:`~gpuviz.engine.events.EventWriter` of ``path``, or one line of bad input.

    Raises
    ------
    BadInputError
        ``path`` is a folder, or its place cannot be written.
    """
    check_file_place(Path(path), flag, "a file (E.jsonl)")
    try:
        return EventWriter(path)
    except OSError as exc:  # the folder takes files, but not this one (a read-only file)
        raise BadInputError(f"{flag} {path}: cannot write it: {reason(exc)}") from None


__all__ = [
    "check_file_place",
    "check_out_folder",
    "open_event_writer",
    "probe_folder",
    "reason",
]
