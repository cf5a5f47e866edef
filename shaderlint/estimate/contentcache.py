"""The on-disk content cache the compilers' figures share (ptxas, glslang's SPIR-V, RADV).

A compile is cached by what it read: the source text, the options, the
compiler's identity, and every file it included (the compiler's depfile), each
recorded with its size and modification time. An entry whose included file
changed since is a miss. Entries are JSON files under
``$SHADERLINT_CACHE_DIR/<kind>`` or ``$XDG_CACHE_HOME/shaderlint/<kind>``
(default ``~/.cache``), written atomically; a cache that cannot be written is
silently skipped (the figures are then computed again next time).
"""

from __future__ import annotations

import json
import os
from pathlib import Path


def cache_directory(kind: str, cache_dir: str | None = "default") -> str | None:
    """The directory for ``kind``'s entries; ``cache_dir`` overrides it (None: no disk cache)."""
    if cache_dir != "default":
        return cache_dir
    env = os.environ.get("SHADERLINT_CACHE_DIR")
    if env:
        return os.path.join(os.path.abspath(env), kind)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "shaderlint", kind)


def stamp(path: str) -> str:
    """``path:size:mtime_ns`` (the path alone when it cannot be read)."""
    try:
        st = os.stat(path)
    except OSError:
        return path
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def fresh(deps) -> bool:
    """True when every ``[path, stamp]`` of a cache entry still has its recorded stamp."""
    return all(stamp(path) == recorded for path, recorded in deps)


def depfile_paths(depfile: Path, bases: list[Path], exclude: tuple[str, ...]) -> list[str] | None:
    """Absolute paths of the files a compile read (a make-style depfile's prerequisites), or None
    when the depfile is missing or names a file that cannot be found again (then do not cache).
    ``exclude``: a directory prefix (the temporary build directory) and a path (the source) left out."""
    try:
        text = depfile.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    _, _, rest = text.partition(": ")
    names, cur, escaped = [], "", False
    for ch in rest.replace("\\\n", " "):
        if escaped:
            cur += ch
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch.isspace():
            if cur:
                names.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        names.append(cur)
    out = []
    for name in names:
        candidates = [Path(name)] if os.path.isabs(name) else [b / name for b in bases]
        found = next((c.resolve() for c in candidates if c.is_file()), None)
        if found is None:
            return None
        if not str(found).startswith(exclude[0]) and str(found) != exclude[1]:
            out.append(str(found))
    return list(dict.fromkeys(out))


def read_json(directory: str | None, key: str) -> dict | None:
    if not directory:
        return None
    try:
        with open(os.path.join(directory, key + ".json"), encoding="utf-8") as fh:
            entry = json.load(fh)
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) else None


def write_json(directory: str | None, key: str, entry: dict) -> None:
    if not directory:
        return
    from shaderlint.cache import replace_file

    try:
        os.makedirs(directory, exist_ok=True)
        replace_file(os.path.join(directory, key + ".json"), json.dumps(entry).encode("utf-8"))
    except OSError:
        pass
