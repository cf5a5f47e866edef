"""Find the shader files under the paths given on the command line.

Directories are walked iteratively (symlink loops cannot recurse forever),
files are kept by extension, and ``.gitignore`` files plus ``exclude`` globs
prune the walk. A path named explicitly on the command line is always linted.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator

from shaderlint.config import glob_match
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
            try:
                self.rules.append((re.compile("^" + rx + "$"), neg, dir_only))
            except re.error:  # `a[]b`, `[z-a]`: a pattern git cannot match either; skip it
                continue

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
                body = glob[i + 1:j]
                neg = body[:1] in ("!", "^")
                body = body[1:] if neg else body
                # The set's characters are literal to git: escape what a Python set would read otherwise.
                out += "[" + ("^" if neg else "") + body.replace("\\", "\\\\").replace("[", "\\[") + "]"
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


def _ancestor_gitignores(top: str) -> list[GitIgnore]:
    """``.gitignore`` files above ``top`` up to its repository root (and the repository's
    ``.git/info/exclude``), outermost first; none outside a Git work tree."""
    d = os.path.dirname(os.path.abspath(top))
    chain: list[str] = []
    root = None
    probe = os.path.abspath(top)
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            root = probe
            break
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if root is None:
        return []
    out: list[GitIgnore] = []
    try:
        with open(os.path.join(root, ".git", "info", "exclude"), encoding="utf-8", errors="replace") as fh:
            out.append(GitIgnore(root, fh.readlines()))
    except OSError:
        pass
    if os.path.abspath(top) == root:
        return out
    while True:
        chain.append(d)
        if d == root:
            break
        d = os.path.dirname(d)
    for a in reversed(chain):
        gi = _load_gitignore(a)
        if gi:
            out.append(gi)
    return out


def is_shader(path: str) -> bool:
    return os.path.splitext(path)[1].lower() in EXTENSIONS


def _excluded(path: str, exclude: tuple[str, ...]) -> bool:
    return any(glob_match(path, g) for g in exclude)


def discover(paths: list[str], exclude: tuple[str, ...] = (), errors: list[tuple[str, str]] | None = None,
             is_excluded: Callable[[str], bool] | None = None) -> Iterator[str]:
    """Yield shader files; unreadable directories are recorded in ``errors`` (path, reason).

    ``exclude`` globs are matched against paths relative to the current directory;
    ``is_excluded(path)`` (for example each path's closest configuration) is asked as
    well. Both prune directories and files found by walking; a file named in
    ``paths`` is always yielded. Each file is yielded once.
    """
    seen: set[tuple[int, int]] = set()
    yielded: set[str] = set()

    def once(path: str) -> bool:
        key = os.path.normcase(os.path.abspath(path))
        if key in yielded:
            return False
        yielded.add(key)
        return True

    for top in paths:
        if os.path.isfile(top) or not os.path.exists(top):
            if not os.path.exists(top):
                if errors is not None:
                    errors.append((top, "no such file or directory"))
                continue
            if once(top):
                yield top
            continue
        stack: list[tuple[str, list[GitIgnore]]] = [(top, _ancestor_gitignores(top))]
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
                if _git_ignored(path, is_dir, here) or _excluded(path, exclude) \
                        or (is_excluded is not None and is_excluded(path)):
                    continue
                if is_dir:
                    subdirs.append((path, here))
                elif is_shader(e.name):
                    try:
                        if not e.is_file():
                            continue
                    except OSError:
                        continue
                    if once(path):
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
