"""The compiled-kernel cache on disk, so a second process compiles nothing.

Entries are keyed by a hash of the kernel's printed IR, the target (CPU name and
features) and the compiler's version. An entry is plain data, never a pickle:

    IRTK2\\n  <sha256 of the rest, 64 hex digits>\\n  <JSON header, one line>\\n  <payload>

The header records the entry's own key, its kind, the compiler version, the payload's
length and the caller's metadata (a kernel's name and signature); the payload is raw
object code, an OpenCL binary or nothing. `load` hands an entry back only when all of it
matches what is asked for; anything else is deleted (one line on stderr with DEBUG >= 1)
and the caller compiles again. Entries are written atomically (a temporary file renamed
into place). The folder is created with mode 0700 and is not used at all when another user
owns it or others may write to it: the object code in an entry is run as it is, so the
folder is as trusted as the user's own files (docs/frontend.md, "The kernel cache").

The folder is bounded by `IRTENSOR_DISK_CACHE_MB` (default 1024): a store that takes the
process's running estimate over it deletes the least recently used entries (a hit
refreshes an entry's time) down to 90% of the limit; 0 stores nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import sys
import tempfile
import threading
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from irtensor.runtime.lru import env_limit

Op = TypeVar("Op")
Compiled = TypeVar("Compiled")

MAGIC = b"IRTK2\n"
SUFFIX = ".bin"
DISK_LIMIT_MB = 1024
_CHECKSUM = 64  # hex digits of a sha256


# What a compiled kernel depends on: every module under these folders, at any depth (a
# pass moved into a sub-folder still counts), and these modules of the package root.
COMPILER_FOLDERS = ("dialects", "interp", "passes", "runtime")
COMPILER_MODULES = ("dtypes.py", "ir.py", "pipeline.py", "shapes.py")


def compiler_fingerprint(package: Path | None = None) -> str:
    """A hash of the sources that decide what a kernel compiles to, so that a
    changed lowering never meets a stale compiled kernel (no version to bump by hand)."""
    package = package or Path(__file__).resolve().parent.parent
    sources = [package / name for name in COMPILER_MODULES]
    for folder in COMPILER_FOLDERS:
        sources += sorted((package / folder).rglob("*.py"))
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.relative_to(package).as_posix().encode())
        digest.update(b"\0")
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


VERSION = f"irtensor-0.1/{compiler_fingerprint()}"


def key_of(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in (VERSION, *parts):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def cache_dir() -> Path:
    """IRTENSOR_CACHE_DIR, else the user's cache folder (XDG_CACHE_HOME or ~/.cache)."""
    if folder := os.environ.get("IRTENSOR_CACHE_DIR"):
        return Path(folder)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "irtensor"


@dataclass(frozen=True)
class Entry:
    meta: dict[str, Any]
    payload: bytes


class Discarded(ValueError):
    """An entry that is not what was asked for (the message says why)."""


# --------------------------------------------------------------------------- the folder

_USABLE: dict[Path, bool] = {}
_LOCK = threading.Lock()


def _folder(create: bool) -> Path | None:
    """The cache folder if it may be used: created 0700 when `create`; None when absent, or
    owned by another user, or writable by others (entries hold code that is run)."""
    folder = cache_dir()
    with _LOCK:
        known = _USABLE.get(folder)
        if known is False or (known and (not create or folder.is_dir())):
            return folder if known else None
        if not folder.exists():  # also when it was removed while the process ran
            if not create:
                return None
            try:
                folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            except OSError:
                return None
        problem = _unsafe(folder)
        if problem:
            warnings.warn(f"irtensor: not using the kernel cache {folder}: {problem}",
                          RuntimeWarning, stacklevel=3)
        _USABLE[folder] = not problem
        return None if problem else folder


def _unsafe(folder: Path) -> str:
    try:
        info = folder.stat()
    except OSError as e:
        return f"cannot read it ({e.strerror})"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a folder"
    if not hasattr(os, "geteuid"):  # no POSIX owners and modes (Windows): ACLs decide
        return ""
    if info.st_uid != os.geteuid():
        return "another user owns it"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (f"others may write to it (mode {stat.S_IMODE(info.st_mode):o}; "
                "chmod 700 it to use it)")
    return ""


# --------------------------------------------------------------------------- entries


def load(key: str, kind: str) -> Entry | None:
    """The entry stored under `key` if it is one of `kind` made by this compiler, else
    None (a present but wrong entry is deleted)."""
    folder = _folder(create=False)
    if folder is None:
        return None
    path = folder / f"{key}{SUFFIX}"
    try:
        data = _read_own_file(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        discard(key, f"unreadable ({e.strerror or e})")
        return None
    try:
        entry = _parse(data, key, kind)
    except Discarded as e:
        discard(key, str(e))
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # the size limit deletes the least recently used entries first
    return entry


def _read_own_file(path: Path) -> bytes:
    """The bytes of a regular file this user owns (not through a symbolic link)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError("not a regular file")
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            raise OSError("another user owns it")
        return f.read()


def _parse(data: bytes, key: str, kind: str) -> Entry:
    start = len(MAGIC) + _CHECKSUM + 1
    if not data.startswith(MAGIC):
        raise Discarded("not an entry of this format")
    body = data[start:]
    if hashlib.sha256(body).hexdigest().encode() != data[len(MAGIC):start - 1]:
        raise Discarded("checksum mismatch (truncated or damaged)")
    line, newline, payload = body.partition(b"\n")
    try:
        header = json.loads(line) if newline else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or not isinstance(header.get("meta"), dict):
        raise Discarded("unreadable header")
    for field, want in (("key", key), ("kind", kind), ("version", VERSION),
                        ("payload_bytes", len(payload))):
        if header.get(field) != want:
            raise Discarded(f"its {field} is {str(header.get(field))[:24]!r}, "
                            f"expected {str(want)[:24]!r}")
    return Entry(header["meta"], payload)


def encode(key: str, kind: str, meta: dict[str, Any], payload: bytes = b"") -> bytes:
    """The bytes of an entry (what `store` writes)."""
    header = {"key": key, "kind": kind, "version": VERSION, "payload_bytes": len(payload),
              "meta": meta}
    body = json.dumps(header, separators=(",", ":")).encode() + b"\n" + payload
    return MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n" + body


def store(key: str, kind: str, meta: dict[str, Any], payload: bytes = b"") -> None:
    """Write an entry atomically; a failure to write only loses the cache entry."""
    limit = env_limit("IRTENSOR_DISK_CACHE_MB", DISK_LIMIT_MB, 1 << 20)
    folder = _folder(create=True) if limit else None
    if folder is None:
        return
    blob = encode(key, kind, meta, payload)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")  # mode 0600
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, folder / f"{key}{SUFFIX}")
    except OSError:
        return
    _SIZE.stored(folder, len(blob), limit)


def discard(key: str, why: str) -> None:
    """Delete the entry under `key` (it is not what was asked for) and say so under DEBUG."""
    from irtensor.settings import debug_level

    with contextlib.suppress(OSError):
        (cache_dir() / f"{key}{SUFFIX}").unlink()
    if debug_level() >= 1:
        sys.stderr.write(f"*** kernel cache: discarded entry {key[:16]}: {why}; "
                         "building it again\n")


# --------------------------------------------------------------------------- the size limit


class _FolderSize:
    """A running estimate of the folder's bytes: one scan per process and folder, then
    what this process stores; a scan again (and a trim) only when it passes the limit."""

    def __init__(self) -> None:
        self.folder: Path | None = None
        self.bytes = 0
        self.lock = threading.Lock()

    def stored(self, folder: Path, size: int, limit: int) -> None:
        with self.lock:
            if folder != self.folder:
                self.folder, self.bytes = folder, sum(s for _, s, _ in _entries(folder))
            else:
                self.bytes += size
            if self.bytes > limit:
                self.bytes = trim(folder, limit * 9 // 10)


_SIZE = _FolderSize()


def _entries(folder: Path) -> list[tuple[float, int, Path]]:
    """(time last used, size, path) of each entry and leftover temporary file."""
    found = []
    try:
        with os.scandir(folder) as it:
            for item in it:
                if item.name.endswith(SUFFIX) or item.name.startswith(".tmp-"):
                    try:
                        info = item.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    found.append((info.st_mtime, info.st_size, Path(item.path)))
    except OSError:
        return []
    return found


def trim(folder: Path, target: int) -> int:
    """Delete the least recently used entries until the folder holds at most `target`
    bytes; the bytes left."""
    entries = sorted(_entries(folder))
    total = sum(size for _, size, _ in entries)
    for _, size, path in entries:
        if total <= target:
            break
        try:
            path.unlink()
        except OSError:
            continue
        total -= size
    return total


# --------------------------------------------------------------------------- by op


def remembered(by_op: weakref.WeakKeyDictionary[Op, Compiled], op: Op,
               compile_op: Callable[[Op], Compiled]) -> Compiled:
    """What `op` compiled to, remembered by the op itself (a realized program is cached
    with its ops, so a replay prints and hashes no IR); compiled on first use."""
    from irtensor.runtime import STATS

    if (known := by_op.get(op)) is not None:
        STATS.cache_hits_memory += 1
        return known
    compiled = by_op[op] = compile_op(op)
    return compiled
