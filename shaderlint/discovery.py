"""Find the shader files under the paths given on the command line.

Directories are walked iteratively (symlink loops cannot recurse forever),
files are kept by extension, and ``.gitignore`` files plus ``exclude`` globs
prune the walk. A path named explicitly on the command line is always linted.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator

from shaderlint.languages import EXTENSIONS

_ALWAYS_SKIP = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".shaderlint_cache"}


class GitIgnore:
    """A small reader of .gitignore semantics: globs, `!` negation, trailing `/`, anchoring."""

    def __init__(self, base: str, lines: list[str]) -> None:
        self.base = base
        self.rules: list[tuple[re.Pattern[str], bool, bool]] = []  # (regex, negated, dir_only)
        for raw in lines:
            line = raw.rstrip("\n").rstrip()
            if not line or line.startswith("#"):
                continue
            neg = line.startswith("!")
            if neg:
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            anchored = "/" in line
            line = line.lstrip("/")
            rx = _glob_to_regex(line)
            if not anchored:
                rx = r"(?:.*/)?" + rx
            self.rules.append((re.compile("^" + rx + "$"), neg, dir_only))

    def ignored(self, rel: str, is_dir: bool) -> bool | None:
        verdict = None
        for rx, neg, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            if rx.match(rel):
                verdict = not neg
        return verdict


def _glob_to_regex(glob: str) -> str:
    out = ""
    i = 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out += r"(?:.*/)?"
            i += 3
            continue
        if glob.startswith("**", i):
            out += ".*"
            i += 2
            continue
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[":
            j = glob.find("]", i)
            if j < 0:
                out += re.escape(c)
            else:
                out += "[" + glob[i + 1:j].replace("!", "^", 1) + "]"
                i = j
        else:
            out += re.escape(c)
        i += 1
    return out


def _load_gitignore(d: str) -> GitIgnore | None:
    p = os.path.join(d, ".gitignore")
    try:
        with open(p, encoding="utf-8", errors="replace") as fh:
            return GitIgnore(d, fh.readlines())
    except OSError:
        return None


def is_shader(path: str) -> bool:
    return os.path.splitext(path)[1].lower() in EXTENSIONS


def _excluded(path: str, exclude: tuple[str, ...]) -> bool:
    p = path.replace(os.sep, "/")
    name = os.path.basename(p)
    return any(fnmatch.fnmatch(p, g) or fnmatch.fnmatch(name, g) or fnmatch.fnmatch(p, "*/" + g.strip("/"))
               or fnmatch.fnmatch(p, "*/" + g.strip("/") + "/*") for g in exclude)


def discover(paths: list[str], exclude: tuple[str, ...] = (), errors: list[tuple[str, str]] | None = None) -> Iterator[str]:
    """Yield shader files; unreadable directories are recorded in ``errors`` (path, reason)."""
    seen: set[tuple[int, int]] = set()
    for top in paths:
        if os.path.isfile(top) or not os.path.exists(top):
            if not os.path.exists(top) and errors is not None:
                errors.append((top, "no such file or directory"))
                continue
            yield top
            continue
        stack: list[tuple[str, list[GitIgnore]]] = [(top, [])]
        while stack:
            d, ignores = stack.pop()
            try:
                st = os.stat(d)
            except OSError as e:
                if errors is not None:
                    errors.append((d, e.strerror or str(e)))
                continue
            key = (st.st_dev, st.st_ino)
            if key in seen:
                continue  # symlink loop or repeated path
            seen.add(key)
            gi = _load_gitignore(d)
            here = ignores + ([gi] if gi else [])
            try:
                entries = sorted(os.scandir(d), key=lambda e: e.name)
            except OSError as e:
                if errors is not None:
                    errors.append((d, e.strerror or str(e)))
                continue
            subdirs = []
            for e in entries:
                path = e.path
                try:
                    is_dir = e.is_dir()
                except OSError:
                    continue
                if is_dir and e.name in _ALWAYS_SKIP:
                    continue
                if _git_ignored(path, is_dir, here) or _excluded(path, exclude):
                    continue
                if is_dir:
                    subdirs.append((path, here))
                elif is_shader(e.name):
                    try:
                        if not e.is_file():
                            continue
                    except OSError:
                        continue
                    yield path
            stack.extend(reversed(subdirs))


def _git_ignored(path: str, is_dir: bool, ignores: list[GitIgnore]) -> bool:
    verdict = False
    for gi in ignores:
        rel = os.path.relpath(path, gi.base).replace(os.sep, "/")
        v = gi.ignored(rel, is_dir)
        if v is not None:
            verdict = v
    return verdict
