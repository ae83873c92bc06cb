"""A command's printed output, kept beside a trace's cache entry: printed again, not recomputed.

``gpuviz summary`` on a trace whose cache entry exists still mapped its columns, checked their
CRCs and ran every analysis again (0.2 s of a 0.44 s process at 300k kernels, issue 25), for
figures that depend only on the trace's files, the command's options and gpuviz's code. So the
command keeps what it printed in the entry's folder (``memo-<command>-<hash>.json``), and a
later run with the same inputs prints it back without loading the trace.

A memo is used only where all of these hold, else the command computes and writes a new one:

- the cache is on, and the TRACE's files have the key of the entry the memo sits in (the same
  key the trace cache goes by: real path, size, mtime, ctime and inode of every file, the
  cache's format and gpuviz's version); a changed file makes another entry, and replacing the
  entry deletes its folder, memos with it;
- the variant matches: the command, its options that change what it prints, and the TRACE's
  files as the caller names them (reports name them);
- gpuviz's code is the same: a hash of the size and mtime of every ``.py`` file of the package
  (so a changed analysis in a source checkout, which keeps the version number, computes
  again), the Python version and numpy's and msgspec's;
- the memo's own CRC-32 matches (a damaged memo is computed again and overwritten).

It does not read the entry's columns: the printed figures were computed from a trace that was
whole then (freshly imported, or read with every CRC checked), and its files have not changed.
A memo is written only when the entry exists and the files kept their key while the command
ran; a trace imported without parts (``--max-memory``) is never cached, so never memoized.
``GPUVIZ_NO_CACHE=1`` or ``--no-cache`` turns memos off with the cache.
"""

from __future__ import annotations

import os
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from gpuviz.trace.cache import TraceCache, cache_enabled
from gpuviz.trace.cache_key import MANIFEST, CacheKey
from gpuviz.trace.errors import TraceFormatError
from gpuviz.trace.files import trace_files

MEMO_PREFIX = "memo-"


class Output(msgspec.Struct, frozen=True):
    """What a command printed: its standard output and its lines on standard error."""

    stdout: str
    stderr: list[str] = []


class _Stored(msgspec.Struct, frozen=True):
    key: CacheKey
    variant: str
    code: str
    output: Output


@dataclass(frozen=True)
class OutputMemo:
    """The memo of one command's output for one TRACE, options and code.

    Attributes
    ----------
    path : str
        The TRACE as the caller gave it.
    files : list of str
        Its files (``trace_files``).
    cache : TraceCache
    key : CacheKey
        The key of the files when the command started.
    variant : str
        The command and its options (JSON).
    code : str
        :func:`code_fingerprint`.
    """

    path: str
    files: list[str]
    cache: TraceCache
    key: CacheKey
    variant: str
    code: str

    @property
    def file(self) -> Path:
        """Where the memo is (in the entry's folder)."""
        import hashlib  # here, not at the top: ``--no-cache`` needs none of this (issue 25)

        digest = hashlib.sha256(f"{self.variant}\n{self.code}".encode()).hexdigest()[:16]
        command = msgspec.json.decode(self.variant)["command"]
        return self.cache.entry_path(self.key) / f"{MEMO_PREFIX}{command}-{digest}.json"

    def get(self) -> Output | None:
        """The output kept for these inputs, or None (none, another key or code, damaged)."""
        try:
            data = self.file.read_bytes()
        except OSError:
            return None
        if data[8:9] != b"\n" or data[:8] != f"{zlib.crc32(data[9:]):08x}".encode():
            return None
        try:
            stored = msgspec.json.decode(data[9:], type=_Stored)
        except (msgspec.MsgspecError, UnicodeError):
            return None
        if (stored.key, stored.variant, stored.code) != (self.key, self.variant, self.code):
            return None
        try:
            os.utime(self.file.parent / MANIFEST)  # the entry was used: the LRU cap goes by it
        except OSError:
            pass
        return stored.output

    def put(self, output: Output) -> bool:
        """Keep ``output``, if the entry exists and the files kept their key; never raises."""
        folder = self.file.parent
        try:
            if (
                not (folder / MANIFEST).is_file()
                or self.cache.key(self.path, self.files) != self.key
            ):
                return False
            body = msgspec.json.encode(_Stored(self.key, self.variant, self.code, output))
        except (OSError, msgspec.MsgspecError, UnicodeError, TypeError, ValueError):
            return False  # e.g. a file name that JSON cannot hold (a lone surrogate)
        import uuid

        temp = folder / f".{MEMO_PREFIX}{uuid.uuid4().hex}"
        try:
            temp.write_bytes(f"{zlib.crc32(body):08x}\n".encode() + body)
            os.replace(temp, self.file)  # whole or not at all, for a reader at the same time
        except OSError:
            try:
                temp.unlink()
            except OSError:
                pass
            return False
        return True


def output_memo(
    command: str, path: str | os.PathLike[str], options: dict[str, Any]
) -> OutputMemo | None:
    """The memo of ``command`` on TRACE ``path`` with ``options``; None where the cache is off.

    Parameters
    ----------
    command : str
        The command (``"summary"``).
    path : str or PathLike
        The TRACE, as the caller gave it.
    options : dict
        Every option that changes what the command prints (JSON values).
    """
    if not cache_enabled():
        return None
    cache = TraceCache.default()
    if cache is None:
        return None
    try:
        files = [str(f) for f in trace_files(path)]
        key = cache.key(path, files)
        variant = msgspec.json.encode(
            {"command": command, "options": options, "files": files}, order="sorted"
        ).decode()
    except (OSError, TraceFormatError, msgspec.MsgspecError, UnicodeError, TypeError):
        return None
    return OutputMemo(str(path), files, cache, key, variant, code_fingerprint())


def code_fingerprint() -> str:
    """A hash of what gpuviz's output depends on besides its inputs: the size and mtime of every
    ``.py`` file of the package, Python's and msgspec's versions, and numpy's files that name
    its version (found, not imported: a kept output is printed without numpy); ~1 ms."""
    import hashlib
    import importlib.util

    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(f"{sys.version}|{msgspec.__version__}".encode())
    spec = importlib.util.find_spec("numpy")
    if spec is not None and spec.origin:
        for name in ("__init__.py", "version.py"):
            try:
                st = os.stat(os.path.join(os.path.dirname(spec.origin), name))
            except OSError:
                continue
            h.update(f"numpy/{name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                p = os.path.join(folder, name)
                st = os.stat(p)
                h.update(f"{os.path.relpath(p, root)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]
