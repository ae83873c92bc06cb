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

A memo is three parts: its CRC-32 (8 hex digits, and a newline) over the rest; a header, one
line of JSON (the key's bytes, the variant, the code and the lines on standard error); and
the standard output as it was printed. This path uses the standard library alone: msgspec
and dataclasses (with the ``typing_extensions`` and ``inspect`` they import) were a third of a
process that prints a kept output.

It does not read the entry's columns: the printed figures were computed from a trace that was
whole then (freshly imported, or read with every CRC checked), and its files have not changed.
A memo is written only when the entry exists and the files kept their key while the command
ran; a trace imported without parts (``--max-memory``) is never cached, so never memoized.
``GPUVIZ_NO_CACHE=1`` or ``--no-cache`` turns memos off with the cache.
"""

from __future__ import annotations

import json
import os
import sys
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from gpuviz.trace.cache import TraceCache, cache_enabled
from gpuviz.trace.cache_key import MANIFEST, CacheKey, key_bytes
from gpuviz.trace.errors import TraceFormatError
from gpuviz.trace.files import trace_files

MEMO_PREFIX = "memo-"
_TEXT = "surrogatepass"
"""How the output's text is stored: every str, a file name's lone surrogates included, round
trips."""


class Output(NamedTuple):
    """What a command printed: its standard output and its lines on standard error."""

    stdout: str
    stderr: Sequence[str] = ()


class OutputMemo(NamedTuple):
    """The memo of one command's output for one TRACE, options and code.

    Attributes
    ----------
    command : str
        The command (``"summary"``).
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

    command: str
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
        return self.cache.entry_path(self.key) / f"{MEMO_PREFIX}{self.command}-{digest}.json"

    def _header(self, stderr: Sequence[str]) -> dict[str, Any]:
        key = key_bytes(self.key).decode("ascii")
        return {"key": key, "variant": self.variant, "code": self.code, "stderr": list(stderr)}

    def get(self) -> Output | None:
        """The output kept for these inputs, or None (none, another key or code, damaged)."""
        file = self.file
        try:
            data = file.read_bytes()
        except OSError:
            return None
        if data[8:9] != b"\n" or data[:8] != f"{zlib.crc32(memoryview(data)[9:]):08x}".encode():
            return None
        header_end = data.find(b"\n", 9)
        try:
            header = json.loads(data[9:header_end]) if header_end > 0 else None
            stdout = data[header_end + 1 :].decode("utf-8", _TEXT)
        except (ValueError, UnicodeError):
            return None
        if not isinstance(header, dict) or not isinstance(header.get("stderr"), list):
            return None
        if header != self._header(header["stderr"]):
            return None
        try:
            os.utime(file.parent / MANIFEST)  # the entry was used: the LRU cap goes by it
        except OSError:
            pass
        return Output(stdout, [str(line) for line in header["stderr"]])

    def put(self, output: Output) -> bool:
        """Keep ``output``, if the entry exists and the files kept their key; never raises."""
        file = self.file
        try:
            if not self.cache.holds(self.key) or self.cache.key(self.path, self.files) != self.key:
                return False
            header = json.dumps(self._header(output.stderr), ensure_ascii=True)
            body = header.encode("ascii") + b"\n" + output.stdout.encode("utf-8", _TEXT)
        except (OSError, UnicodeError, TypeError, ValueError):
            return False
        import uuid

        temp = file.parent / f".{MEMO_PREFIX}{uuid.uuid4().hex}"
        try:
            temp.write_bytes(f"{zlib.crc32(body):08x}\n".encode() + body)
            os.replace(temp, file)  # whole or not at all, for a reader at the same time
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
        variant = json.dumps(
            {"command": command, "options": options, "files": files},
            sort_keys=True,
            ensure_ascii=True,
            separators=(",", ":"),
        )
    except (OSError, TraceFormatError, UnicodeError, TypeError, ValueError):
        return None
    return OutputMemo(command, str(path), files, cache, key, variant, code_fingerprint())


def code_fingerprint() -> str:
    """A hash of what gpuviz's output depends on besides its inputs: the size and mtime of every
    ``.py`` file of the package, Python's version, and the files of numpy and msgspec that name
    their versions (found, not imported: a kept output is printed without either); ~2 ms."""
    import hashlib
    import importlib.util

    h = hashlib.sha256(sys.version.encode())
    for package, names in (
        ("numpy", ("__init__.py", "version.py")),
        ("msgspec", ("__init__.py", "_version.py")),
    ):
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.origin:
            continue
        for name in names:
            try:
                st = os.stat(os.path.join(os.path.dirname(spec.origin), name))
            except OSError:
                continue
            h.update(f"{package}/{name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    _hash_sources(h, root, len(root) + 1)
    return h.hexdigest()[:16]


def _hash_sources(h: Any, folder: str, strip: int) -> None:
    """Add the name, size and mtime of every ``.py`` file under ``folder`` to ``h``, in name
    order (``os.scandir``: its entries' stat, without ``os.walk``'s and ``relpath``'s layers,
    took the hash from 7-11 ms to about 2 ms on the 2-core VM)."""
    with os.scandir(folder) as it:
        entries = sorted(it, key=lambda e: e.name)
    for e in entries:
        if e.name.endswith(".py") and e.is_file():
            st = e.stat()
            h.update(f"{e.path[strip:]}:{st.st_size}:{st.st_mtime_ns}\n".encode())
        elif e.name != "__pycache__" and e.is_dir(follow_symlinks=False):
            _hash_sources(h, e.path, strip)
