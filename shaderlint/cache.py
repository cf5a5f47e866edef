"""Content-hash cache of lint results.

An entry is keyed by the file's bytes, its absolute path, ``Settings.key()``,
the shaderlint version and a stamp of the installed shaderlint sources (so
editing a rule in a development checkout invalidates old entries). It holds the
file's diagnostics and inline suppressions as JSON (never pickle: a cache
directory may be shared). Entries are written to a temporary file and moved
into place with :func:`os.replace`, so concurrent runs never read half an entry;
an unreadable or corrupt entry is a miss.

Location: ``$SHADERLINT_CACHE_DIR``, else ``.shaderlint_cache/`` next to the
configuration file in effect, else in the current directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from typing import Any

from shaderlint import __version__
from shaderlint.config import Settings
from shaderlint.diagnostics import (Applicability, Diagnostic, Edit, Fix, Impact, RelatedLocation, Severity)
from shaderlint.suppression import Suppression

CACHE_DIR_NAME = ".shaderlint_cache"
ENV_VAR = "SHADERLINT_CACHE_DIR"
FORMAT = 1  # bump when the entry layout changes


def cache_dir_for(settings: Settings) -> str:
    env = os.environ.get(ENV_VAR)
    if env:
        return os.path.abspath(env)
    base = os.path.dirname(os.path.abspath(settings.config_path)) if settings.config_path else os.getcwd()
    return os.path.join(base, CACHE_DIR_NAME)


@lru_cache(maxsize=1)
def code_stamp() -> str:
    """A hash over the installed shaderlint modules' names, sizes and modification times."""
    root = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256(__version__.encode())
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                p = os.path.join(dirpath, name)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                h.update(f"{os.path.relpath(p, root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def entry_key(path: str, data: bytes, settings: Settings, host: str = "", settings_key: str | None = None) -> str:
    """``host``: the digest of the host facts that apply to the file (shaderlint.host.index).
    ``settings_key``: ``settings.key()`` when the caller has it (a run asks once per settings)."""
    h = hashlib.sha256()
    for part in (str(FORMAT), __version__, code_stamp(), os.path.abspath(path),
                 settings.key() if settings_key is None else settings_key, host):
        h.update(part.encode("utf-8", "surrogateescape"))
        h.update(b"\0")
    h.update(data)
    return h.hexdigest()


# ---- serialization ---------------------------------------------------------------------------------
def diagnostic_to_json(d: Diagnostic) -> dict[str, Any]:
    """Every field except ``path`` (an entry is re-attached to the path it is looked up for)."""
    return {
        "code": d.code, "name": d.name, "severity": d.severity.value, "message": d.message,
        "start": d.start, "end": d.end, "line": d.line, "column": d.column,
        "end_line": d.end_line, "end_column": d.end_column, "kernel": d.kernel,
        "related": [[r.line, r.column, r.message, r.start, r.end] + ([r.path] if r.path != d.path else [])
                    for r in d.related],  # a location in another file (host code) keeps its path
        "fix": None if d.fix is None else {
            "title": d.fix.title, "applicability": d.fix.applicability.value,
            "edits": [[e.start, e.end, e.text] for e in d.fix.edits],
        },
        "impact": None if d.impact is None else {
            "target": d.impact.target, "registers": d.impact.registers, "stack_bytes": d.impact.stack_bytes,
            "occupancy_before": d.impact.occupancy_before, "occupancy_after": d.impact.occupancy_after,
        },
        "fingerprint": d.fingerprint,
        "fix_ranges": [list(r) for r in d.fix_ranges],
        "extra": d.extra,
    }


def diagnostic_from_json(path: str, o: dict[str, Any]) -> Diagnostic:
    fix = o["fix"]
    return Diagnostic(
        path=path, code=o["code"], name=o["name"], severity=Severity(o["severity"]), message=o["message"],
        start=o["start"], end=o["end"], line=o["line"], column=o["column"],
        end_line=o["end_line"], end_column=o["end_column"], kernel=o["kernel"],
        related=tuple(RelatedLocation(r[5] if len(r) > 5 else path, r[0], r[1], r[2], r[3], r[4])
                      for r in o["related"]),
        fix=None if fix is None else Fix(fix["title"], Applicability(fix["applicability"]),
                                         tuple(Edit(e[0], e[1], e[2]) for e in fix["edits"])),
        impact=None if o["impact"] is None else Impact(**o["impact"]),
        fingerprint=o["fingerprint"],
        fix_ranges=tuple(tuple(r) for r in o["fix_ranges"]),  # type: ignore[misc]
        extra=o["extra"],
    )


def suppression_to_json(s: Suppression) -> list[Any]:
    return [s.start, s.end, s.file_level, list(s.codes), s.line, sorted(s.used)]


def suppression_from_json(o: list[Any]) -> Suppression:
    return Suppression(o[0], o[1], o[2], tuple(o[3]), o[4], set(o[5]))


def cacheable(diagnostics: list[Diagnostic]) -> bool:
    """Results that depend on timing (the per-file time budget) are not cached."""
    for d in diagnostics:
        if d.code == "SL001" and d.message.startswith("analysis stopped"):
            return False
        try:
            json.dumps(d.extra)
        except (TypeError, ValueError):
            return False
    return True



def replace_file(target: str, payload: bytes) -> None:
    """Write ``payload`` to ``target`` through a temporary file in its directory and ``os.replace``:
    a reader sees the old file or the new one, never a part (raises OSError)."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise

def drop_other_versions(folder: str, prefix: str, keep: str) -> None:
    """Remove the files ``prefix*`` in ``folder`` other than ``keep``: what other shaderlint versions
    (other code stamps) wrote (raises OSError)."""
    for old in os.listdir(folder):
        if old.startswith(prefix) and os.path.join(folder, old) != keep:
            os.unlink(os.path.join(folder, old))


class RunsFile:
    """Records of the latest runs, one JSON file per shaderlint version in a cache folder
    (``<folder>/<prefix><code stamp>.json``: ``{"format": F, "runs": {run: record}}``): the walk of
    the command line (:class:`shaderlint.discovery.WalkMemo`) and the host index
    (:class:`shaderlint.host.index.RunSummary`) keep theirs here. At most ``max_runs`` runs, the
    latest kept; the file is replaced atomically and other versions' files are removed; any I/O or
    format problem reads as no runs and skips a write."""

    def __init__(self, folder: str, prefix: str, fmt: int, max_runs: int) -> None:
        self.folder, self.prefix, self.format, self.max_runs = folder, prefix, fmt, max_runs
        self.file = os.path.join(folder, f"{prefix}{code_stamp()}.json")

    def runs(self) -> dict:
        try:
            with open(self.file, "rb") as fh:
                got = json.loads(fh.read())
            if isinstance(got, dict) and got.get("format") == self.format and isinstance(got.get("runs"), dict):
                return got["runs"]
        except (OSError, ValueError, RecursionError):
            pass
        return {}

    def put(self, run: str, record: dict) -> None:
        """Keep ``record`` as ``run``'s (the folder must exist)."""
        runs = self.runs()
        runs.pop(run, None)
        runs[run] = record
        while len(runs) > self.max_runs:
            del runs[next(iter(runs))]
        try:
            drop_other_versions(self.folder, self.prefix, self.file)
            payload = json.dumps({"format": self.format, "runs": runs}, separators=(",", ":"))
            replace_file(self.file, payload.encode("utf-8"))
        except (OSError, ValueError):
            pass


class Cache:
    """One cache directory. All methods swallow I/O errors: a cache never fails a run."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.root = os.path.join(directory, f"v{FORMAT}")
        self._prepared = False

    def _entry(self, key: str) -> str:
        return os.path.join(self.root, key[:2], key[2:] + ".json")

    def get(self, key: str, path: str) -> tuple[list[Diagnostic], list[Suppression], str | None, int] | None:
        """``(diagnostics, suppressions, language, unread regions)`` for ``path``, or None on a miss."""
        try:
            with open(self._entry(key), "rb") as fh:
                o = json.loads(fh.read())
            return ([diagnostic_from_json(path, d) for d in o["diagnostics"]],
                    [suppression_from_json(s) for s in o["suppressions"]], o["language"], int(o.get("unread", 0)))
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None

    def put(self, key: str, diagnostics: list[Diagnostic], suppressions: list[Suppression],
            language: str | None, unread: int = 0) -> bool:
        if not cacheable(diagnostics):
            return False
        payload = json.dumps({
            "language": language,
            "diagnostics": [diagnostic_to_json(d) for d in diagnostics],
            "suppressions": [suppression_to_json(s) for s in suppressions],
            "unread": unread,
        }, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        target = self._entry(key)
        try:
            self._prepare()
            os.makedirs(os.path.dirname(target), exist_ok=True)
            replace_file(target, payload)
            return True
        except OSError:
            return False

    def _prepare(self) -> None:
        """Mark the directory as a cache (CACHEDIR.TAG) that Git should ignore."""
        if self._prepared:
            return
        os.makedirs(self.root, exist_ok=True)
        for name, text in (("CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n"
                                            "# This file is a cache directory tag created by shaderlint.\n"),
                           (".gitignore", "# Automatically created by shaderlint.\n*\n")):
            p = os.path.join(self.directory, name)
            if not os.path.exists(p):
                try:
                    with open(p, "x", encoding="utf-8") as fh:
                        fh.write(text)
                except OSError:
                    pass
        self._prepared = True
