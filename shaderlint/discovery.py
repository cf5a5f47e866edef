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

import operator
import os
import re
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache

from shaderlint.config import glob_match
from shaderlint.languages import EXTENSIONS

_ENTRY_NAME = operator.attrgetter("name")
_ALWAYS_SKIP = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".shaderlint_cache"}


class GitIgnore:
    """A small reader of .gitignore semantics: globs, `!` negation, trailing `/`, anchoring."""

    def __init__(self, base: str, lines: list[str]) -> None:
        self.base = base
        self._rules = _parse_rules(tuple(lines))

    @property
    def rules(self) -> list[tuple[re.Pattern[str], bool, bool]]:
        """(regex, negated, dir_only) of every valid pattern, in file order."""
        return [(r.regex, r.negated, r.dir_only) for r in self._rules.rules]

    def ignored(self, rel: str, is_dir: bool) -> bool | None:
        return self._rules.ignored(rel, is_dir)


class _Rule:
    """One pattern. ``kind``: "name" (unanchored, no wildcard: the last component is ``text``),
    "suffix" (unanchored ``*text``: the last component ends with ``text``), "path" (anchored, no
    wildcard: the whole relative path is ``text``) or "regex" (anything else); the regex is compiled
    on first use (most patterns never need it)."""

    __slots__ = ("kind", "text", "pattern", "negated", "dir_only", "_regex")

    def __init__(self, kind: str, text: str, pattern: str, negated: bool, dir_only: bool) -> None:
        self.kind = kind
        self.text = text
        self.pattern = pattern  # the anchored regex's source
        self.negated = negated
        self.dir_only = dir_only
        self._regex: re.Pattern[str] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            self._regex = re.compile(self.pattern)
        return self._regex

    def match(self, rel: str, name: str) -> bool:
        kind = self.kind
        if kind == "name":
            return name == self.text
        if kind == "suffix":
            return name.endswith(self.text)
        if kind == "path":
            return rel == self.text
        return self.regex.match(rel) is not None


class _Rules:
    """The parsed patterns of one ``.gitignore`` text (shared by every directory holding the same text,
    and by the walks of one run)."""

    def __init__(self, rules: list[_Rule]) -> None:
        self.rules = rules
        self._any: dict[bool, tuple] = {}

    def _prefilter(self, is_dir: bool) -> tuple:
        """What answers "may any rule match?" for a kind of path without trying the rules one by one
        (most paths match none): the names, suffixes and paths of the plain rules, and one alternation
        of the others' regexes (compiled here, once)."""
        got = self._any.get(is_dir)
        if got is None:
            rules = [r for r in self.rules if is_dir or not r.dir_only]
            others = [r.pattern for r in rules if r.kind == "regex"]
            rx = None
            if others:
                try:
                    rx = re.compile("(?:" + "|".join(f"(?:{p})" for p in others) + ")")
                except (re.error, RecursionError, OverflowError):
                    rx = True  # they do not combine: try each rule
            got = self._any[is_dir] = (frozenset(r.text for r in rules if r.kind == "name"),
                                       tuple(r.text for r in rules if r.kind == "suffix"),
                                       frozenset(r.text for r in rules if r.kind == "path"), rx)
        return got

    def ignored(self, rel: str, is_dir: bool, name: str | None = None) -> bool | None:
        """``name``: the last component of ``rel`` when the caller has it."""
        if not self.rules:
            return None
        names, suffixes, paths, rx = self._prefilter(is_dir)
        if name is None:
            name = rel.rpartition("/")[2]
        if not (name in names or (suffixes and name.endswith(suffixes)) or rel in paths
                or rx is True or (rx is not None and rx.match(rel) is not None)):
            return None
        for r in reversed(self.rules):  # the last rule that matches decides
            if r.dir_only and not is_dir:
                continue
            if r.match(rel, name):
                return not r.negated
        return None


_WILDCARDS = frozenset("*?[\\")


@lru_cache(maxsize=1024)
def _parse_rules(lines: tuple[str, ...]) -> _Rules:
    rules: list[_Rule] = []
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
        pattern = "^" + rx + "$"
        plain = not _WILDCARDS.intersection(line)
        if plain and line:
            kind, text = ("path" if anchored else "name"), line
        elif not anchored and line.startswith("*") and len(line) > 1 and not _WILDCARDS.intersection(line[1:]):
            kind, text = "suffix", line[1:]
        else:
            kind, text = "regex", ""
            try:
                re.compile(pattern)
            except re.error:  # `a[]b`, `[z-a]`: a pattern git cannot match either; skip it
                continue
        rules.append(_Rule(kind, text, pattern, neg, dir_only))
    return _Rules(rules)


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


#: Directory listings kept for the walks of one run (:func:`shared_listings`): path as walked -> (device and
#: inode, entries sorted by name, its ``.gitignore`` or None). None outside such a run.
_LISTINGS: dict[str, tuple[tuple[int, int], list[os.DirEntry], GitIgnore | None]] | None = None


@contextmanager
def shared_listings():
    """Inside: a directory the walks have listed is not read again (its ``stat``, its entries, its
    ``.gitignore``). A command-line run walks its paths twice within a moment -- for the files to lint
    (``cli.collect_files``) and for the host code that launches them (``HostIndex.build``) -- and both
    walks then see the same tree; outside, every walk reads the disk (a language server's walks are
    minutes apart). A failed read is not kept. :func:`release_listings` drops what is kept early."""
    global _LISTINGS
    outer = _LISTINGS
    if outer is None:
        _LISTINGS = {}
    try:
        yield
    finally:
        if outer is None:
            _LISTINGS = None


def release_listings() -> None:
    """Forget the listings kept so far (the walks that share them are done)."""
    if _LISTINGS is not None:
        _LISTINGS.clear()


#: Names whose content (not only presence) a walk's result depends on: ignore rules, configuration.
_WATCHED = frozenset({".gitignore", "shaderlint.toml", "pyproject.toml"})


def _stat_text(st: os.stat_result) -> str:
    return f"{st.st_mode} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino} {st.st_dev}"


def stat_text(path: str) -> str:
    """``path``'s stat data (links followed) as :class:`WalkMemo` compares them; ``-`` when it does not exist."""
    try:
        return _stat_text(os.stat(path))
    except OSError:
        return "-"


class WalkMemo:
    """What the command line's walk found (the files to lint, the host index's files), kept in the
    lint cache directory (``<cache>/walks-<stamp>.json``, stamped with shaderlint's code) for the next
    run of the same shape (current directory, paths, options, ``--config``): taken when the stat data
    of everything it was found from are unchanged (:func:`discover`'s ``record``: every directory
    listed -- adding, removing or renaming an entry changes a directory's modification time --, each
    symbolic link's target, each ``.gitignore`` and configuration file of a directory listed; and,
    recorded by the caller (:func:`record_above`), in each directory above the paths up to the root,
    its ``.gitignore`` and configuration files, whether it has a ``.git``, and ``.git/info/exclude``). As the host index's scan store, only stat data
    recorded at least :data:`RACY_NS` after the last change of what they describe are kept (a change
    within one tick of the file system's clock leaves the same times). At most :data:`MAX_RUNS` runs,
    the latest kept; any I/O or format problem is a miss."""

    FORMAT = 1
    MAX_RUNS = 8
    RACY_NS = 3_000_000_000

    def __init__(self, directory: str, run: str) -> None:
        import hashlib

        from shaderlint.cache import RunsFile

        self.folder = directory
        self.store = RunsFile(directory, "walks-", self.FORMAT, self.MAX_RUNS)
        self.file = self.store.file
        self.run = hashlib.blake2b(run.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()

    def _runs(self) -> dict:
        return self.store.runs()

    def load(self) -> tuple[list[str], list[str]] | None:
        """(files, side files) as recorded, when everything recorded is unchanged."""
        rec = self._runs().get(self.run)
        try:
            if not isinstance(rec, dict):
                return None
            for path, text in rec["record"]:
                if type(path) is not str or \
                        (("e" if os.path.exists(path) else "-") if text == "e" else stat_text(path)) != text:
                    return None
            files, side = rec["files"], rec["side"]
            if not all(type(p) is str for p in files) or not all(type(p) is str for p in side):
                return None
            return files, side
        except (TypeError, ValueError, KeyError, OSError):
            return None

    def save(self, record: list[tuple[str, str]], files: list[str], side: list[str], since: int) -> None:
        """``since``: ``time.time_ns()`` before the walk."""
        oldest = since - self.RACY_NS
        seen: dict[str, str] = {}
        for path, text in record:
            if text == "?" or seen.get(path, text) != text:
                return
            if text not in ("-", "e"):
                _mode, _size, mtime, ctime, _ino, _dev = text.split()
                if max(int(mtime), int(ctime)) > oldest:
                    return  # (changed too recently: a later change in the same tick would not show)
            seen[path] = text
        try:
            from shaderlint.cache import Cache

            Cache(self.folder)._prepare()  # (marked as a cache that Git ignores)
        except OSError:
            return
        self.store.put(self.run, {"record": sorted(seen.items()), "files": files, "side": side})


def record_above(paths: list[str], record: list[tuple[str, str]]) -> None:
    """What a walk of ``paths`` (and the configuration found for them) depends on above them: in each
    directory from a path's own up to the root, its ``.gitignore`` and configuration files, whether it
    has a ``.git`` and that one's ``info/exclude``."""
    done: set[str] = set()
    for top in paths:
        d = os.path.abspath(clean(top))
        while d not in done:
            done.add(d)
            for name in _WATCHED:
                p = os.path.join(d, name)
                record.append((p, stat_text(p)))
            p = os.path.join(d, ".git")
            record.append((p, "e" if os.path.exists(p) else "-"))  # (whether: git works in there all the time)
            p = os.path.join(p, "info", "exclude")
            record.append((p, stat_text(p)))
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent


def discover(paths: list[str], exclude: tuple[str, ...] = (), errors: list[tuple[str, str]] | None = None,
             is_excluded: Callable[[str], bool] | None = None,
             language_for: Callable[[str], str | None] | None = None,
             force_exclude: bool = False,
             side: tuple[Callable[[str, str | None], bool], list[str]] | None = None,
             record: list[tuple[str, str]] | None = None) -> Iterator[str]:
    """Yield shader files; missing or special named paths and unreadable directories are recorded
    in ``errors`` (path, reason).

    ``exclude`` globs are matched against paths relative to the current directory;
    ``is_excluded(path)`` (for example each path's closest configuration) is asked as
    well. Both prune directories and files found by walking; a file named in
    ``paths`` is yielded whatever its extension (the caller warns about one it cannot
    lint) unless ``force_exclude`` applies the exclusions to it too. ``language_for``
    decides which walked files are shaders (default: the built-in extensions). Each
    file is yielded once.

    ``side``: ``(accept, out)``: the same walk also appends to ``out`` the files a walk with
    ``language_for=accept`` would yield, in its order (a second kind of file found in one walk
    instead of two: the host code :class:`shaderlint.host.index.HostIndex` reads); ``accept(path,
    language)`` is given what ``language_for`` said of the file. Not with ``force_exclude``.

    ``record``: gets ``(path, stat_text(path))`` for what the walk's result depends on besides the
    callbacks (:class:`WalkMemo`): every directory listed, every entry that is a symbolic link (its
    target), and each ``.gitignore`` and configuration file in a directory listed; ``(path, "?")``
    when the walk cannot say (a listing kept from an earlier walk, an error).
    """
    language_for = language_for or _default_language
    seen: set[tuple[int, int]] = set()
    yielded: set[str] = set()
    accept, out = side if side is not None else (None, None)
    side_yielded: set[str] = set()
    if side is not None and force_exclude:
        raise ValueError("discover: side with force_exclude")

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
        if record is not None:
            record.append((top, stat_text(top)))
        if stat.S_ISREG(mode):
            if out is not None:
                key = os.path.normcase(os.path.abspath(top))
                if key not in side_yielded:
                    side_yielded.add(key)
                    out.append(top)
            if once(top):
                yield top
            continue
        if not stat.S_ISDIR(mode):
            if errors is not None:
                errors.append((top, f"not a file or directory: it is {special_kind(mode)}; not linted"))
            continue
        stack: list[tuple[str, list[GitIgnore]]] = [(top, _ancestor_gitignores(top))]
        listings = _LISTINGS

        def unreadable(d: str, e: OSError) -> None:
            if errors is not None:
                errors.append((d, e.strerror or str(e)))
            if record is not None:
                record.append((d, "?"))  # (a walk that met an error is not kept)

        while stack:
            d, ignores = stack.pop()
            kept = listings.get(d) if listings is not None else None
            if kept is not None:
                key, entries, gi = kept
                if key in seen:
                    continue
                seen.add(key)
                if record is not None:
                    record.append((d, "?"))  # (listed by another walk: its stat data are not known here)
            else:
                try:
                    st = os.stat(d)
                except OSError as e:
                    unreadable(d, e)
                    continue
                if record is not None:
                    record.append((d, _stat_text(st)))
                key = (st.st_dev, st.st_ino)
                if key in seen:
                    continue  # symlink loop or repeated path
                seen.add(key)
                try:
                    with os.scandir(d) as it:
                        entries = sorted(it, key=_ENTRY_NAME)
                except OSError as e:
                    unreadable(d, e)
                    continue
                if record is not None:
                    for e in entries:
                        if e.name in _WATCHED or e.is_symlink():
                            p = os.path.join(d, e.name)
                            record.append((p, stat_text(p)))
                # (a directory without a .gitignore entry has none to read: no failed open per directory)
                gi = _load_gitignore(d) if any(e.name == ".gitignore" for e in entries) else None
                if listings is not None:
                    listings[d] = (key, entries, gi)
            here = ignores + ([gi] if gi else [])
            prefix = "" if d in (".", "." + os.sep) else d if d.endswith(os.sep) else d + os.sep  # d/name, d's own prefix
            # What the per-entry checks share, worked out once per directory: each ignore file's
            # path from its base to here (a name in d is at ``rel + name`` from it) and the key
            # ``once`` gives a name in d (an entry's name is one plain component).
            rels = [(g, _rel_prefix(prefix, d, g.base)) for g in here]
            dir_key = os.path.join(os.path.normcase(os.path.abspath(d)), "")
            subdirs = []
            for e in entries:
                name = e.name
                path = prefix + name
                try:
                    is_dir = e.is_dir()
                except OSError:
                    continue
                if is_dir and name in _ALWAYS_SKIP:
                    continue
                ours = also = False
                if not is_dir:
                    lang = language_for(path)
                    ours = lang is not None
                    also = accept is not None and bool(accept(path, lang))
                    if not ours and not also:
                        continue  # (first: most files are not ours, and the ignore rules cost more)
                if (rels and _ignored_in(rels, name, is_dir)) or (exclude and _excluded(path, exclude)) \
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
                    k = dir_key + os.path.normcase(name)
                    if also and k not in side_yielded:
                        side_yielded.add(k)
                        out.append(path)  # type: ignore[union-attr]
                    if ours and k not in yielded:
                        yielded.add(k)
                        yield path
            stack.extend(reversed(subdirs))


def _rel_prefix(prefix: str, d: str, base: str) -> str:
    """The path from ``base`` to the entries of directory ``d`` (walked as ``prefix + name``), with
    ``/`` separators and a trailing ``/`` (``""`` in ``base`` itself): ``rel + name`` is what
    :func:`_git_ignored` computes for ``prefix + name``, without computing it per entry."""
    if prefix.startswith(base) and prefix[len(base):len(base) + 1] == os.sep and base:
        rel = prefix[len(base) + 1:]
    else:
        rel = os.path.relpath(d, base)
        rel = "" if rel == os.curdir else rel + os.sep
    return rel.replace(os.sep, "/")


def _ignored_in(rels: list[tuple[GitIgnore, str]], name: str, is_dir: bool) -> bool:
    """:func:`_git_ignored` for the entry ``name`` of a directory, with :func:`_rel_prefix` per ignore file."""
    verdict = False
    for gi, rel in rels:
        v = gi._rules.ignored(rel + name, is_dir, name)
        if v is not None:
            verdict = v
    return verdict


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
