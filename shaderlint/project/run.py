"""A run's translation units: every linted file's context, and the headers analysed in context.

:func:`plan_run` gives each file of a run its :class:`~shaderlint.project.includes.FileContext` and
adds the headers the run's CUDA sources include that discovery does not take by their extension
(``.h``, ``.hpp``, ``.hh``, ``.hxx``, ``.inl``), so they are linted as CUDA. A header (``.cuh``
included) is analysed in the context of *one* includer: the first CUDA source, in path order, whose
includes (followed transitively) read it. It gets the macros in force where that source includes it
and that source's compile command; its findings are reported once, in the header. Only headers under
the paths being linted (and not excluded) and defining a kernel (``__global__``, or a macro the headers
before it define with ``__global__`` in its body: CUTLASS's ``CUTLASS_GLOBAL``, a kernel-generating
macro) are added; a header no CUDA source of the run includes is not read (a ``.cuh`` is still linted on
its own, as before). Device helpers in headers matter to the kernels that call them, not as lint
targets of their own: every rule reports about a kernel, and header-only C++ (CUTLASS's iterators) is
where the front end reads least.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from shaderlint.discovery import display_path
from shaderlint.project.includes import FileContext, Project, path_kind, stat_key

HEADER_EXTENSIONS = (".h", ".hpp", ".hh", ".hxx", ".inl", ".cuh")
#: Headers linted in context only when one of these includes them (the languages whose headers are CUDA).
_INCLUDER_LANGUAGES = ("cuda",)


class Contexts(dict):
    """A plan's contexts by path (a dict), some of them known only by digest until asked for: a plan
    kept from an earlier run (:class:`PlanStore`) gives each file's context digest, and the context
    itself is computed only for a file that is linted again (:meth:`get`)."""

    def __init__(self) -> None:
        super().__init__()
        self.lazy: dict[str, tuple[str, tuple]] = {}  # path -> (digest, (settings, language, includer))
        self.project: Project | None = None

    def digest(self, path: str) -> str | None:
        """The digest of the context of ``path`` (None: it has none), without computing a lazy one."""
        got = self.lazy.get(path)
        if got is not None:
            return got[0]
        ctx = dict.get(self, path)
        return ctx.digest() if ctx is not None else None

    def ready(self, path: str) -> FileContext | None:
        """The context of ``path`` when it is computed already (never computes one)."""
        return dict.get(self, path)

    def get(self, path, default=None):  # type: ignore[override]
        if path in self.lazy:
            digest, (settings, language, includer) = self.lazy.pop(path)
            project = self.project or Project()
            try:
                from shaderlint import runner

                data = runner._read(path)
                inc = runner._read(includer) if includer is not None else None
            except OSError:
                return default
            ctx = _context(project, path, data, settings, language, includer, inc)
            if ctx is not None:
                self[path] = ctx
        return dict.get(self, path, default)

    def __getitem__(self, path):
        got = self.get(path)
        if got is None:
            raise KeyError(path)
        return got

    def __contains__(self, path) -> bool:
        return path in self.lazy or dict.__contains__(self, path)

    def __len__(self) -> int:
        return dict.__len__(self) + len(self.lazy)

    def __iter__(self):
        yield from list(dict.keys(self)) + list(self.lazy)

    def keys(self):  # type: ignore[override]
        return list(iter(self))

    def items(self):  # type: ignore[override]
        return [(k, self[k]) for k in list(iter(self))]

    def values(self):  # type: ignore[override]
        return [self[k] for k in list(iter(self))]


@dataclass
class RunPlan:
    files: list[str]  # the files to lint: the run's, then the headers added, in path order
    contexts: Contexts = field(default_factory=Contexts)  # by path as in ``files``
    languages: dict[str, str] = field(default_factory=dict)  # language of the headers added (their extension has none)
    data: dict[str, bytes] = field(default_factory=dict)  # the bytes read (each file once)
    project: Project | None = None
    reused: int = 0  # contexts taken from the plan kept by an earlier run (known by digest)


def _is_header(path: str) -> bool:
    return os.path.splitext(path)[1].lower() in HEADER_EXTENSIONS


def plan_run(files: Sequence[str], settings_for: Callable[[str], object], accept_header: Callable[[str], bool] | None,
             read: Callable[[str], bytes] | None = None, project: Project | None = None,
             cache_dir: str | None = None) -> RunPlan:
    """The plan for linting ``files`` (see the module docstring). ``accept_header(path)``: whether a
    header found through the includes may be added (None: add none). Files that cannot be read are
    left to the caller (they get no context here). ``cache_dir``: the lint cache directory, where the
    plan is kept for the next run (:class:`PlanStore`; not with ``read``). The cyclic garbage collector is
    paused meanwhile (:func:`shaderlint.collector.collector_paused`: the contexts live until the run
    ends)."""
    from shaderlint.collector import collector_paused

    with collector_paused():
        return _plan_run(files, settings_for, accept_header, read, project, cache_dir)


def _plan_run(files: Sequence[str], settings_for: Callable[[str], object], accept_header: Callable[[str], bool] | None,
              read: Callable[[str], bytes] | None, project: Project | None, cache_dir: str | None) -> RunPlan:
    project = project or Project()
    plan = RunPlan(list(files), project=project)
    plan.contexts.project = project
    store = PlanStore.load(cache_dir) if cache_dir is not None and read is None else None
    if store is not None:
        project.record()
    skeys: dict[int, tuple[object, str]] = {}

    def skey(settings) -> str:
        got = skeys.get(id(settings))
        if got is None or got[0] is not settings:
            got = skeys[id(settings)] = (settings, repr((settings.key(), settings.config_path)))
        return got[1]

    def get(path: str) -> bytes | None:
        if path in plan.data:
            if store is not None:
                project.note(path)  # (recorded when first read; consulted again by this context)
            return plan.data[path]
        try:
            if read is not None:
                data = read(path)
            else:
                from shaderlint import runner  # the runner's reader: one way files are read in a run

                st = os.stat(path) if store is not None else None
                data = runner._read(path)
                if store is not None:
                    project.record_read(path, st, data)
        except OSError:
            if store is not None:
                project.record_read(path, None, None)
            return None
        plan.data[path] = data
        return data

    def begin() -> None:
        if store is not None:
            project.consulted(set())

    def end() -> set[str] | None:
        """The paths consulted since :func:`begin`; None when the result cannot be kept."""
        if store is None:
            return None
        deps, unsure = project.consulted(None)
        return None if unsure else deps

    includer_of: dict[str, str] = {}  # header (absolute) -> the first includer in path order
    by_abs: dict[str, str] = {os.path.normpath(os.path.abspath(f)): f for f in files}
    sources = [f for f in files if not _is_header(f)]
    headers = [f for f in files if _is_header(f)]
    for f in sorted(sources):
        settings = settings_for(f)
        language = settings.language_for(f)
        kept_entry = store.source(f, skey(settings)) if store is not None and language is not None else None
        if kept_entry is not None:
            digest, read_headers = kept_entry
            plan.reused += 1
            if digest is not None:
                plan.contexts.lazy[f] = (digest, (settings, language, None))
                if language in _INCLUDER_LANGUAGES:
                    for h in read_headers:
                        includer_of.setdefault(h, f)
            continue
        begin()
        data = get(f)
        if language is None or data is None:
            end()
            continue
        ctx = _context(project, f, data, settings, language)
        deps = end()
        if store is not None and deps is not None:
            store.put_source(f, skey(settings), ctx.digest() if ctx is not None else None,
                             [h for h, _ in ctx.files] if ctx is not None else [], deps, project)
        if ctx is None:
            continue
        plan.contexts[f] = ctx
        if language in _INCLUDER_LANGUAGES:
            for h, _ in ctx.files:
                includer_of.setdefault(h, f)
    added: list[str] = []
    if accept_header is not None:
        for h in sorted(includer_of):
            if h in by_abs or not _is_header(h):
                continue
            shown = display_path(h)
            settings = settings_for(shown)
            if settings.language_for(shown) not in (None, "cuda") or not accept_header(shown):
                continue
            plan.languages[shown] = "cuda"
            by_abs[h] = shown
            added.append(shown)
    kept: list[str] = []
    for f in headers + added:
        settings = settings_for(f)
        language = plan.languages.get(f) or settings.language_for(f)
        inc = includer_of.get(os.path.normpath(os.path.abspath(f)))
        kept_entry = store.header(f, skey(settings), language, inc, f in plan.languages) \
            if store is not None and language is not None else None
        if kept_entry is not None:
            digest, kernel = kept_entry
            plan.reused += 1
            if f in plan.languages and not kernel:
                del plan.languages[f]
                continue
            if digest is not None:
                plan.contexts.lazy[f] = (digest, (settings, language, inc))
            if f in plan.languages:
                kept.append(f)
            continue
        begin()
        data = get(f)
        if language is None or data is None:
            end()
            continue
        ctx = _context(project, f, data, settings, language, inc, get(inc) if inc is not None else None)
        kernel = _defines_kernels(data, ctx) if f in plan.languages else None
        deps = end()
        if store is not None and deps is not None:
            store.put_header(f, skey(settings), language, inc, ctx.digest() if ctx is not None else None, kernel,
                             deps, project)
        if f in plan.languages and not kernel:
            del plan.languages[f]  # host-side C or C++, or device helpers only: no kernel to report on
            plan.data.pop(f, None)
            continue
        if ctx is not None:
            plan.contexts[f] = ctx
        if f in plan.languages:
            kept.append(f)
    plan.files.extend(kept)
    if store is not None:
        store.save(project)
    return plan


_DIRECTIVE_LINES = re.compile(rb"^[ \t]*#(?:[^\n\\]|\\\r?\n|\\)*", re.M)
_KERNEL_WORD = b"__global__"


def _defines_kernels(data: bytes, ctx: FileContext | None) -> bool:
    """A header defines a CUDA kernel: ``__global__`` in its code (not in a comment, a string or a
    directive), or a macro with ``__global__`` in its body used in its code — one the header defines
    itself (a kernel-generating macro it invokes) or one the headers before it define (CUTLASS's
    ``CUTLASS_GLOBAL``)."""
    names = {m.group(1) for m in _KERNEL_MACRO.finditer(data)} if _KERNEL_WORD in data else set()
    if ctx is not None:
        names |= {name.encode() for name, d in ctx.macros.items() if "__global__" in d.body}
    words = [_KERNEL_WORD, *names]
    if not any(w in data for w in words):
        return False
    from shaderlint.model.source import Source

    source = Source("", data)
    directives = [(m.start(), m.end()) for m in _DIRECTIVE_LINES.finditer(data)]
    pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(w) for w in words) + rb")\b")
    return any(not source.in_comment_or_string(m.start()) and not any(a <= m.start() < b for a, b in directives)
               for m in pattern.finditer(data))


#: ``#define NAME...`` whose body (continuation lines too) holds ``__global__``: group 1 is the name.
_KERNEL_MACRO = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?:[^\n\\]|\\\r?\n|\\)*?__global__", re.M)


def _context(project: Project, path: str, data: bytes, settings, language: str, includer: str | None = None,
             includer_data: bytes | None = None) -> FileContext | None:
    try:
        ctx = project.context(path, data, settings, language, includer, includer_data)
    except (RecursionError, ValueError, OSError):  # never fail a run over the context: lint the file alone
        return None
    # (kept when empty under ``defines-complete``: it says the file includes no header left unread)
    return None if ctx.empty and not getattr(settings, "defines_complete", None) else ctx


# ---- the plan kept across runs ---------------------------------------------------------------------

PLAN_FORMAT = 1  # bump when the layout of a kept plan changes
MAX_ENTRIES = 50_000  # files a kept plan holds (beyond: only the last run's)


def _fp_json(fp: tuple) -> list:
    return [fp[0], fp[1]] if fp[0] == "k" else ["f", fp[1], fp[2]]


class PlanStore:
    """The plan of the last run, kept in the lint cache directory (one file per working directory), so
    that a run that changes nothing does not read and walk every header again.

    Each file's entry holds what planning it gave (its context's digest, the headers its includes
    read; for a header, whether it defines a kernel) and what that rests on: its settings' key and
    every path the planning consulted, with what each was found to be (:meth:`Project.fingerprint`):
    the kind of a path whose existence was asked (an ``#include`` searched along the include
    directories, a compile database or repository marker looked for), or for a file read its
    device, inode, size, modification and change times and the sha256 of its bytes. An entry is
    reused when its settings are the same and every such path still is what it was: the same kind;
    for a file, the same stat key, or else the same bytes (read and hashed again: a ``touch``, a
    checkout that rewrites a file unchanged; a file read within :data:`RACY_NS` of its modification
    has no stat key and is always compared by content). Anything else: the file is planned again.
    The whole store is dropped when shaderlint's sources (the lint cache's code stamp) change. The
    context itself is computed again only for a file that is linted again (:class:`Contexts`)."""

    def __init__(self, path: str, stamp: str) -> None:
        self.path = path
        self.stamp = stamp
        self.paths: list[str] = []  # the dependency table: path, fingerprint (as JSON)
        self.fps: list[list] = []
        self.settings: list[str] = []
        self.sources: dict[str, list] = {}  # path -> [settings index, digest, header indexes, dependency indexes]
        self.headers: dict[str, list] = {}  # path -> [settings index, language, includer, digest, kernel, deps]
        self._valid: list[bool] = []
        self._bad: set[int] = set()  # the paths no longer what they were
        self._refreshed: dict[int, list] = {}  # stat keys renewed after a check by content
        self._used: set[tuple[str, str]] = set()
        self._new_sources: dict[str, tuple] = {}
        self._new_headers: dict[str, tuple] = {}
        self._skeys: dict[str, int] = {}

    @classmethod
    def load(cls, cache_dir: str) -> "PlanStore":
        from shaderlint import __version__
        from shaderlint.cache import FORMAT, code_stamp

        cwd = os.getcwd()
        name = hashlib.sha256(cwd.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        store = cls(os.path.join(cache_dir, f"v{FORMAT}", f"plan-{name}.json"),
                    f"{PLAN_FORMAT}:{FORMAT}:{__version__}:{code_stamp()}")
        store.cache_dir = cache_dir
        try:
            with open(store.path, "rb") as fh:
                o = json.loads(fh.read())
            if o["stamp"] == store.stamp and o["cwd"] == cwd and len(o["paths"]) == len(o["fps"]):
                store.paths, store.fps, store.settings = o["paths"], o["fps"], o["settings"]
                store.sources, store.headers = o["sources"], o["headers"]
        except (OSError, ValueError, KeyError, TypeError):
            pass
        store._valid = [store._ok(i) for i in range(len(store.paths))]  # (a stat each: cheaper than asking per entry)
        store._bad = {i for i, v in enumerate(store._valid) if not v}
        return store

    # -- look-ups --
    def _ok(self, i: int) -> bool:
        try:
            return self._check(i)
        except (OSError, ValueError, TypeError, IndexError):
            return False

    def _check(self, i: int) -> bool:
        path, fp = self.paths[i], self.fps[i]
        if fp[0] == "k":
            return path_kind(path) == fp[1]
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return False
        if fp[1] is not None and [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns] == fp[1]:
            return True
        with open(path, "rb") as fh:
            data = fh.read()
        if hashlib.sha256(data).hexdigest() != fp[2]:
            return False
        self._refreshed[i] = ["f", stat_key(st), fp[2]]
        return True

    def _settings_ok(self, i: object, skey: str) -> bool:
        return isinstance(i, int) and 0 <= i < len(self.settings) and self.settings[i] == skey

    def source(self, path: str, skey: str) -> tuple[str | None, list[str]] | None:
        """(context digest, absolute paths of the headers read) kept for the source ``path``, or None."""
        e = self.sources.get(path)
        try:
            if e is None or not self._settings_ok(e[0], skey) or not self._bad.isdisjoint(e[3]):
                return None
            headers = [self.paths[i] for i in e[2]]
        except (TypeError, IndexError):
            return None
        self._used.add(("s", path))
        return e[1], headers

    def header(self, path: str, skey: str, language: str, includer: str | None,
               added: bool) -> tuple[str | None, bool | None] | None:
        """(context digest, defines a kernel) kept for the header ``path`` analysed with ``includer``,
        or None. ``added``: found through the includes (whether it defines a kernel is needed)."""
        e = self.headers.get(path)
        try:
            if e is None or not self._settings_ok(e[0], skey) or e[1] != language or e[2] != includer \
                    or (added and e[4] is None) or not self._bad.isdisjoint(e[5]):
                return None
        except (TypeError, IndexError):
            return None
        self._used.add(("h", path))
        return e[3], e[4]

    # -- new entries --
    def put_source(self, path: str, skey: str, digest: str | None, headers: list[str], deps: set[str],
                   project: Project) -> None:
        self._new_sources[path] = (skey, digest, headers, deps)

    def put_header(self, path: str, skey: str, language: str, includer: str | None, digest: str | None,
                   kernel: bool | None, deps: set[str], project: Project) -> None:
        self._new_headers[path] = (skey, language, includer, digest, kernel, deps)

    def save(self, project: Project) -> None:
        """Write the plan (this run's entries, and the earlier ones still consistent with them) when
        anything changed. Never fails the run."""
        if not self._new_sources and not self._new_headers and not self._refreshed:
            return
        paths: list[str] = []
        fps: list[list] = []
        index: dict[str, int] = {}
        settings: list[str] = []
        sindex: dict[str, int] = {}

        def put(p: str, fp: list) -> int | None:
            i = index.get(p)
            if i is None:
                i = index[p] = len(paths)
                paths.append(p)
                fps.append(fp)
                return i
            return i if fps[i] == fp else None

        def setting(k: str) -> int:
            i = sindex.get(k)
            if i is None:
                i = sindex[k] = len(settings)
                settings.append(k)
            return i

        def new_deps(deps) -> list[int] | None:
            out = []
            for p in sorted(deps):
                fp = project.fingerprint(p)
                i = put(p, _fp_json(fp)) if fp is not None else None
                if i is None:
                    return None
                out.append(i)
            return out

        def old_deps(idx: list[int]) -> list[int] | None:
            out = []
            for i in idx:
                if not self._valid[i]:
                    return None
                j = put(self.paths[i], self._refreshed.get(i, self.fps[i]))
                if j is None:  # recorded differently this run: the entry is stale
                    return None
                out.append(j)
            return out

        sources: dict[str, list] = {}
        headers: dict[str, list] = {}
        for f, (skey, digest, hdrs, deps) in self._new_sources.items():
            d = new_deps(deps)
            h = [index.get(p) for p in hdrs]
            if d is not None and None not in h:
                sources[f] = [setting(skey), digest, h, d]
        for f, (skey, language, inc, digest, kernel, deps) in self._new_headers.items():
            d = new_deps(deps)
            if d is not None:
                headers[f] = [setting(skey), language, inc, digest, kernel, d]
        keep_all = len(self.sources) + len(self.headers) <= MAX_ENTRIES
        try:
            for kind, old, new, di in (("s", self.sources, sources, 3), ("h", self.headers, headers, 5)):
                for f, e in old.items():
                    if f in new or not (keep_all or (kind, f) in self._used):
                        continue
                    d = old_deps(e[di])
                    if d is None:
                        continue
                    e = list(e)
                    e[0] = setting(self.settings[e[0]])
                    e[di] = d
                    if kind == "s":
                        e[2] = [index[self.paths[i]] for i in e[2] if self.paths[i] in index]
                    new[f] = e
        except (TypeError, IndexError, KeyError):
            pass
        payload = json.dumps({"stamp": self.stamp, "cwd": os.getcwd(), "paths": paths, "fps": fps,
                              "settings": settings, "sources": sources, "headers": headers},
                             ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogateescape")
        from shaderlint.cache import Cache, replace_file

        cache = Cache(self.cache_dir)
        try:
            cache._prepare()
            replace_file(self.path, payload)
        except OSError:
            pass


def under_roots(roots: Sequence[str]) -> Callable[[str], bool]:
    """``accept_header`` for the paths given on the command line: a header under one of the directories
    (or one of the files itself)."""
    absroots = [os.path.normpath(os.path.abspath(r)) for r in roots]

    def accept(path: str) -> bool:
        p = os.path.normpath(os.path.abspath(path))
        parts = set(p.split(os.sep))
        if parts & {".git", "node_modules", ".shaderlint_cache", "__pycache__"}:
            return False
        return any(p == r or p.startswith(r.rstrip(os.sep) + os.sep) for r in absroots)

    return accept


__all__ = ["HEADER_EXTENSIONS", "Contexts", "PlanStore", "RunPlan", "plan_run", "under_roots"]
