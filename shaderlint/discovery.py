"""Find the shader files under the paths given on the command line.

Directories are walked iteratively (symlink loops cannot recurse forever),
files are kept by language (the extension, or the configuration's
``extension`` mapping through ``language_for``), and ``.gitignore`` files plus
``exclude`` globs prune the walk. A path named explicitly on the command line
is linted unless ``force_exclude`` is set (what pre-commit needs: it names
every staged file). Paths are yielded without a leading ``./``.

A named path that does not exist, or is neither a regular file nor a directory
(a FIFO, a device, a socket), is reported in ``errors`` and never opened: a
FIFO would block the run, ``/dev/zero`` would never end.
"""

from __future__ import annotations

import os
import re
import stat
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
        # One alternation per kind of path answers "does any rule match?" in one C call: most paths
        # match none, and then the rules need not be tried one by one.
        self._any = {is_dir: _alternation([rx for rx, _, dir_only in self.rules if is_dir or not dir_only])
                     for is_dir in (False, True)}

    def ignored(self, rel: str, is_dir: bool) -> bool | None:
        pre = self._any[is_dir]
        if pre is not None and pre.match(rel) is None:
            return None
        for rx, neg, dir_only in reversed(self.rules):  # the last rule that matches decides
            if dir_only and not is_dir:
                continue
            if rx.match(rel):
                return not neg
        return None


def _alternation(patterns: list[re.Pattern[str]]) -> re.Pattern[str] | None:
    """``^(?:p1|p2|…)$`` of anchored patterns; None (try each rule) when there are none or they do not
    combine."""
    if not patterns:
        return None
    try:
        return re.compile("(?:" + "|".join(f"(?:{p.pattern})" for p in patterns) + ")")
    except (re.error, RecursionError, OverflowError):
        return None


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


def _default_language(path: str) -> str | None:
    return EXTENSIONS.get(os.path.splitext(path)[1].lower())


def clean(path: str) -> str:
    """``path`` without leading ``./`` (``./x.comp`` -> ``x.comp``; ``.`` stays ``.``)."""
    while path.startswith("./") or path.startswith("." + os.sep):
        path = path[2:].lstrip("/" + os.sep) or "."
    return path


def display_path(path: str) -> str:
    """``path`` as discovery writes paths: relative to the current directory when under it, else as
    given (also when no relative path exists, another drive on Windows)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


def _join(d: str, name: str) -> str:
    return name if d in (".", "." + os.sep) else os.path.join(d, name)


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def special_kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def force_excluded(path: str, exclude: tuple[str, ...] = (),
                   is_excluded: Callable[[str], bool] | None = None) -> bool:
    """Whether a path named on the command line is excluded all the same (``--force-exclude``): by an
    ``exclude`` glob, a ``.gitignore`` (of its directory or any above it in its repository, for it or
    any of its parent directories), or a directory that is never walked (``.git``, ``node_modules``)."""
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute)
    parts = rel.replace(os.sep, "/").split("/")
    if any(p in _ALWAYS_SKIP for p in parts[:-1] if p != ".."):
        return True
    if _excluded(path, exclude) or (is_excluded is not None and is_excluded(path)):
        return True
    ignores = _ancestor_gitignores(absolute)
    if not ignores:
        return False
    root = min((os.path.abspath(gi.base) for gi in ignores), key=len)
    probe, is_dir = absolute, os.path.isdir(absolute)
    while probe.startswith(root + os.sep):
        # A .gitignore applies to the paths below its own directory only.
        here = [gi for gi in ignores if probe.startswith(os.path.join(os.path.abspath(gi.base), ""))]
        if _git_ignored(probe, is_dir, here):
            return True
        probe, is_dir = os.path.dirname(probe), True
    return False


def _excluded(path: str, exclude: tuple[str, ...]) -> bool:
    return any(glob_match(path, g) for g in exclude)


def discover(paths: list[str], exclude: tuple[str, ...] = (), errors: list[tuple[str, str]] | None = None,
             is_excluded: Callable[[str], bool] | None = None,
             language_for: Callable[[str], str | None] | None = None,
             force_exclude: bool = False) -> Iterator[str]:
    """Yield shader files; missing or special named paths and unreadable directories are recorded
    in ``errors`` (path, reason).

    ``exclude`` globs are matched against paths relative to the current directory;
    ``is_excluded(path)`` (for example each path's closest configuration) is asked as
    well. Both prune directories and files found by walking; a file named in
    ``paths`` is yielded whatever its extension (the caller warns about one it cannot
    lint) unless ``force_exclude`` applies the exclusions to it too. ``language_for``
    decides which walked files are shaders (default: the built-in extensions). Each
    file is yielded once.
    """
    language_for = language_for or _default_language
    seen: set[tuple[int, int]] = set()
    yielded: set[str] = set()

    def once(path: str) -> bool:
        key = os.path.normcase(os.path.abspath(path))
        if key in yielded:
            return False
        yielded.add(key)
        return True

    for top in paths:
        top = clean(top)
        try:
            mode = os.stat(top).st_mode  # follows links: /dev/zero linked as y.metal is a device
        except FileNotFoundError:
            if errors is not None:
                errors.append((top, "no such file or directory"))
            continue
        except OSError as e:
            if errors is not None:
                errors.append((top, e.strerror or str(e)))
            continue
        if force_exclude and force_excluded(top, exclude, is_excluded):
            continue
        if stat.S_ISREG(mode):
            if once(top):
                yield top
            continue
        if not stat.S_ISDIR(mode):
            if errors is not None:
                errors.append((top, f"not a file or directory: it is {special_kind(mode)}; not linted"))
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
                path = _join(d, e.name)
                try:
                    is_dir = e.is_dir()
                except OSError:
                    continue
                if is_dir and e.name in _ALWAYS_SKIP:
                    continue
                if not is_dir and language_for(path) is None:
                    continue  # (first: most files are not ours, and the ignore rules cost more)
                if _git_ignored(path, is_dir, here) or _excluded(path, exclude) \
                        or (is_excluded is not None and is_excluded(path)):
                    continue
                if is_dir:
                    subdirs.append((path, here))
                else:
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
        base = gi.base
        if path.startswith(base) and path[len(base):len(base) + 1] == os.sep and base:
            rel = path[len(base) + 1:]  # (the walk builds paths from the base: no relpath needed)
        else:
            rel = os.path.relpath(path, base)
        rel = rel.replace(os.sep, "/")
        v = gi.ignored(rel, is_dir)
        if v is not None:
            verdict = v
    return verdict
