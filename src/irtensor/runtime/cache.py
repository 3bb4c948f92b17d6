"""The compiled-kernel cache: in memory, and on disk so a second process compiles nothing.

Entries are keyed by a hash of the kernel's printed IR, the target (CPU name
and features) and the compiler's version. A disk entry is written atomically
(a temporary file renamed into place) and carries a checksum of its payload;
an entry that is truncated or corrupt is ignored and rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

Op = TypeVar("Op")
Compiled = TypeVar("Compiled")

MAGIC = b"IRTK1\n"


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


def load(key: str) -> bytes | None:
    """The payload stored under `key`, or None if absent or damaged."""
    path = cache_dir() / f"{key}.bin"
    try:
        data = path.read_bytes()
    except OSError:
        return None
    header = len(MAGIC) + 64
    if len(data) < header or not data.startswith(MAGIC):
        return None
    checksum, payload = data[len(MAGIC):header], data[header:]
    if hashlib.sha256(payload).hexdigest().encode() != checksum:
        return None
    return payload


def store(key: str, payload: bytes) -> None:
    """Write an entry atomically; a failure to write only loses the cache entry."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        blob = MAGIC + hashlib.sha256(payload).hexdigest().encode() + payload
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, folder / f"{key}.bin")
    except OSError:
        return


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
