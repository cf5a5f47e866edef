"""Lint many files: cache look-ups, a process pool, deterministic order, progress.

:func:`lint_files` reads every file in this process (the bytes feed the cache
key and the text formatter's excerpts), answers what it can from the cache and
lints the rest, in-process with ``jobs == 1`` or in a pool of worker processes
(largest files first, so that the last files to finish are small). Results come
back in the order of the input. Results carry ``source`` but not ``model`` or
``parsed`` (trees are neither picklable nor worth keeping for thousands of files).

A worker that dies (a crash in a parser) breaks the pool: the files not yet
linted are retried one at a time in a fresh process, and a file that kills that
process too gets an SL001 instead of taking the run down.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TextIO

from shaderlint.cache import Cache, cache_dir_for, entry_key
from shaderlint.collector import collector_paused
from shaderlint.config import Settings
from shaderlint.diagnostics import Diagnostic, Finding
from shaderlint.model.source import Source
from shaderlint.result import FileResult
from shaderlint.suppression import Suppression


# Below this much source to lint, starting worker processes costs more than it saves
# (about 2,000 lines; a pre-commit run on a few files stays in-process).
POOL_MIN_BYTES = 64 * 1024


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass
class _Job:
    index: int
    path: str
    data: bytes
    settings: Settings
    cache_dir: str | None
    key: str | None
    host: object = None  # shaderlint.host.index.HostFacts for the file, or None
    language: str | None = None  # overrides the settings' (a header analysed in context)
    context: object = None  # shaderlint.project.includes.FileContext, or None


_Outcome = tuple[int, list[Diagnostic], list[Suppression], str | None, int]


def _lint_job(job: _Job) -> _Outcome:
    analyse = globals().get("lint_source") or __getattr__("lint_source")
    # The collector's pause (see shaderlint.collector.collector_paused) ends here, after the file's model
    # is dropped: the collection that follows frees its cycles at once instead of promoting them.
    with collector_paused():
        r = analyse(job.path, job.data, job.settings, language=job.language, host=job.host,
                    file_context=job.context)
        if job.cache_dir is not None and job.key is not None and not r.timed_out:  # a busy machine is no property of the file
            Cache(job.cache_dir).put(job.key, r.diagnostics, r.suppressions, r.language, r.unread)
        outcome = job.index, r.diagnostics, r.suppressions, r.language, r.unread
        del r
    return outcome


def __getattr__(name: str):
    # ``lint_source`` (shaderlint.engine) is imported when a file is linted first: a run answered from
    # the cache does not import the analysis (rules, front ends, estimator)
    if name == "lint_source":
        from shaderlint.engine import lint_source

        globals()["lint_source"] = lint_source
        return lint_source
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _lint_chunk(jobs: list[_Job]) -> list[_Outcome]:
    return [_lint_job(j) for j in jobs]


def _init_worker() -> None:
    # Ctrl-C is handled by the parent, which shuts the pool down.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def unreadable(path: str, error: OSError, settings: Settings | None = None) -> FileResult:
    from shaderlint.engine import _resolve
    from shaderlint.languages import language_for_path
    from shaderlint.rules.sl001_parse_error import ParseErrorRule

    src = Source(path, b"")
    r = FileResult(path, src, settings.language_for(path) if settings is not None else language_for_path(path))
    r.diagnostics = [_resolve(src, ParseErrorRule, Finding(0, 0, f"could not read file: {error.strerror or error}"))]
    return r


def _crashed(job: _Job) -> FileResult:
    from shaderlint.engine import _resolve
    from shaderlint.rules.sl001_parse_error import ParseErrorRule

    src = Source(job.path, job.data)
    r = FileResult(job.path, src, job.language or job.settings.language_for(job.path))
    r.diagnostics = [_resolve(src, ParseErrorRule, Finding(0, 0, "could not analyse this file: "
                                                                 "the analysis process crashed on it"))]
    return r


class Progress:
    """``[#####.....] 120/400 files`` on a terminal's stderr, shown only once a run has taken
    ``delay`` seconds, redrawn at most ten times a second, erased at the end."""

    def __init__(self, total: int, stream: TextIO | None = None, delay: float = 1.0,
                 enabled: bool | None = None) -> None:
        self.total = total
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            try:
                enabled = self.stream.isatty()
            except (AttributeError, ValueError):
                enabled = False
        self.enabled = enabled and total > 0
        self.start = time.monotonic()
        self.delay = delay
        self.last = 0.0
        self.shown = False

    def advance(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < self.delay or (now - self.last < 0.1 and self.done < self.total):
            return
        self.last = now
        width = 30
        filled = width * self.done // self.total
        self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} files")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def lint_files(paths: Sequence[str], settings_for: Callable[[str], Settings], jobs: int = 0,
               use_cache: bool = True, progress: Progress | None = None,
               read: Callable[[str], bytes] | None = None, host=None, plan=None) -> list[FileResult]:
    """Lint ``paths`` (files) and return one :class:`FileResult` per path, in order.

    ``jobs`` 0 means one process per core; 1 lints in this process. ``read`` replaces
    reading from disk (``--stdin-filename``). ``host``: the run's
    :class:`shaderlint.host.index.HostIndex` (its facts for a file go to the worker with the file
    and into the file's cache key). ``plan``: the run's :class:`shaderlint.project.run.RunPlan`
    (each file's context goes to the worker with it and into its cache key: every header read, by
    content; the headers it adds are in ``paths`` with their language). A result answered from the
    cache has ``file_context`` None when the plan knows that context by digest only (a plan kept from
    an earlier run): ``plan.contexts.get(path)`` computes it (what ``--fix`` does).
    """
    jobs = jobs or default_jobs()
    results: list[FileResult | None] = [None] * len(paths)
    pending: list[_Job] = []
    caches: dict[str, Cache] = {}
    # (per settings object of this run, most files sharing one: its cache, its key for entry_key)
    by_settings: dict[int, tuple[Settings, Cache, str]] = {}
    contexts = plan.contexts if plan is not None else {}
    languages = plan.languages if plan is not None else {}
    # The look-ups allocate the cached results of a whole run (diagnostics, suppressions, results),
    # none in a cycle: the collector is paused over them (as over a file's analysis) instead of
    # traversing everything the process holds now and then; it runs again before any file is linted.
    with collector_paused():
        for i, path in enumerate(paths):
            settings = settings_for(path)
            try:
                data = plan.data.pop(path, None) if plan is not None else None
                if data is None:
                    data = read(path) if read is not None else _read(path)
            except OSError as e:
                results[i] = unreadable(path, e, settings)
                if progress:
                    progress.advance()
                continue
            cache_dir = key = None
            facts = host.facts_for(path) if host is not None else None
            language = languages.get(path)
            # (a plan kept from an earlier run knows a context by its digest: computed only when linted again)
            lazy = plan is not None and path in getattr(contexts, "lazy", ())
            ctx = None if lazy else contexts.get(path)
            if use_cache and (language or settings.language_for(path)) is not None:
                known = by_settings.get(id(settings))
                if known is None or known[0] is not settings:
                    cache_dir = cache_dir_for(settings)
                    known = by_settings[id(settings)] = (settings, caches.setdefault(cache_dir, Cache(cache_dir)),
                                                         settings.key())
                cache, skey = known[1], known[2]
                cache_dir = cache.directory
                facts_digest = facts.digest() if facts is not None else ""
                digest = contexts.digest(path) if lazy else ctx.digest() if ctx is not None else None
                extra = facts_digest + (f"\0{language or ''}\0{digest}" if language is not None or digest is not None else "")
                key = entry_key(path, data, settings, extra, skey)
                hit = cache.get(key, path)
                if hit is not None:
                    diags, sups, language, unread = hit
                    results[i] = FileResult(path, Source(path, data), language, diags, suppressions=sups, unread=unread,
                                            host=facts, file_context=ctx)
                    if progress:
                        progress.advance()
                    continue
                if lazy:
                    ctx = contexts.get(path)
                    now = ctx.digest() if ctx is not None else None
                    if now != digest:  # changed since the plan was checked: key the result by what it is linted with
                        key = entry_key(path, data, settings, facts_digest + (
                            f"\0{language or ''}\0{now}" if language is not None or now is not None else ""), skey)
            elif lazy:
                ctx = contexts.get(path)
            pending.append(_Job(i, path, data, settings, cache_dir, key, facts, language, ctx))

    def finish(outcome: _Outcome) -> None:
        index, diags, sups, language, unread = outcome
        job = by_index[index]
        results[index] = FileResult(job.path, Source(job.path, job.data), language, diags, suppressions=sups,
                                    unread=unread, host=job.host, file_context=job.context)
        if progress:
            progress.advance()

    by_index = {j.index: j for j in pending}
    if jobs == 1 or len(pending) < 2 or sum(len(j.data) for j in pending) < POOL_MIN_BYTES:
        for job in pending:
            finish(_lint_job(job))
    else:
        def fail(job: _Job) -> None:
            results[job.index] = _crashed(job)
            if progress:
                progress.advance()

        _run_pool(pending, min(jobs, len(pending)), finish, fail)
    return [r for r in results if r is not None]


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def _context():
    import multiprocessing

    # fork shares the imported modules with the workers (fast start); elsewhere use the default.
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _run_pool(pending: list[_Job], workers: int, finish: Callable[[_Outcome], None],
              fail: Callable[[_Job], None]) -> None:
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    if "lint_source" not in globals():
        __getattr__("lint_source")  # (the analysis imported once, before the workers fork)
    order = sorted(pending, key=lambda j: -len(j.data))  # longest first
    size = max(1, min(8, len(order) // (workers * 16)))
    chunks = [order[i:i + size] for i in range(0, len(order), size)]
    left: list[_Job] = []
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=_context(), initializer=_init_worker)
    try:
        futures = {pool.submit(_lint_chunk, c): c for c in chunks}
        remaining = set(futures)
        while remaining:
            done, remaining = wait(remaining, return_when=FIRST_COMPLETED)
            for f in done:
                try:
                    for outcome in f.result():
                        finish(outcome)
                except BrokenProcessPool:
                    left.extend(futures[f])
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        terminate = getattr(pool, "terminate_workers", None)  # Python 3.14
        if terminate is not None:
            terminate()
        else:
            for p in list((getattr(pool, "_processes", None) or {}).values()):
                p.terminate()
        raise
    pool.shutdown(wait=True)
    # Retry what a crashed worker took down, one file per fresh process when needed.
    left.sort(key=lambda j: j.index)
    while left:
        pool = ProcessPoolExecutor(max_workers=1, mp_context=_context(), initializer=_init_worker)
        try:
            while left:
                job = left[0]
                try:
                    for outcome in pool.submit(_lint_chunk, [job]).result():
                        finish(outcome)
                except BrokenProcessPool:
                    fail(job)
                    left.pop(0)
                    break
                left.pop(0)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
