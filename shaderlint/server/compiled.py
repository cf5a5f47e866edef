"""Exact kernel figures for hover and code lens, compiled in the background.

The language server's hover and code lens show the register model's estimate
at once and the compiler's figures once they exist: ptxas for CUDA documents on
NVIDIA targets (nvcc on PATH), RADV for GLSL compute shaders on AMD targets
(Mesa and glslang installed) -- what ``shaderlint report --compiler auto``
shows. A compile costs about a second per CUDA file, so the editor never waits
on one: :meth:`CompiledFigures.lookup` answers from memory or from the content
cache (:func:`shaderlint.estimate.ptxas.cached_ptxas`: no compile) and
otherwise queues the compile on a small thread pool (one compile at a time by
default: the compiler is a subprocess, the thread only waits) and answers
"pending"; the hover shows the estimate with a note, and the next hover (or the
code lens refresh the server asks for when the compile is done) the exact
figures. A document edited again before its queued compile started is not
compiled for the old text (the job is cancelled, or skipped when it starts
for a version that is no longer the document's). Lint runs in the server never
compile (``ShaderlintServer.settings_for``): only these figures do.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

#: Compiles at a time (``SHADERLINT_LSP_COMPILE_JOBS`` overrides; 0 turns exact figures off).
DEFAULT_WORKERS = 1


@dataclass(frozen=True)
class Figures:
    """The compiler's figures for one kernel (one template instance)."""

    source: str  # "ptxas" | "radv"
    registers: int
    stack_bytes: int
    shared_bytes: int | None
    threads_per_group: int | None = None
    detail: str = ""  # e.g. "void tile<8>(float*)" or "sm_80"


@dataclass
class Lookup:
    """What :meth:`CompiledFigures.lookup` knows about a document now."""

    compiler: str  # "ptxas" | "radv"
    #: Kernel name -> the figures of its instances; None while the compile is pending.
    kernels: dict[str, list[Figures]] | None = None
    error: str | None = None
    pending: bool = False

    def for_kernel(self, name: str) -> Figures | None:
        """The instance with the most registers (what bounds occupancy), or None."""
        got = (self.kernels or {}).get(name)
        return max(got, key=lambda f: f.registers) if got else None


@dataclass(frozen=True)
class _Job:
    uri: str
    version: Any
    compiler: str
    text: str
    arch_or_family: str
    flags: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    include_dirs: tuple[str, ...] = ()
    subgroup_size: int | None = None
    #: RADV: the specialization constants the host's pipeline sets (host.index.pipeline_specialization).
    specialization: tuple[tuple[int, int], ...] | None = None
    key: tuple = field(default=(), compare=False)


def which_compiler(doc, target) -> str | None:
    """"ptxas" or "radv" when one applies to the document on ``target`` and is installed, else None
    (what ``report --compiler auto`` picks: :func:`shaderlint.report.auto_compiler`)."""
    from shaderlint.report import auto_compiler

    model = doc.result.model if getattr(doc, "result", None) is not None else None
    compiler, _ = auto_compiler(getattr(doc, "language", None), target, model)
    return None if compiler == "none" else compiler


class CompiledFigures:
    """Background compiles of open documents, one result per document (its latest text)."""

    def __init__(self, current_version: Callable[[str], Any], on_ready: Callable[[str], None] | None = None,
                 workers: int | None = None) -> None:
        if workers is None:
            try:
                workers = int(os.environ.get("SHADERLINT_LSP_COMPILE_JOBS", DEFAULT_WORKERS))
            except ValueError:
                workers = DEFAULT_WORKERS
        self.workers = max(0, workers)
        self._current_version = current_version
        self._on_ready = on_ready
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._done: dict[str, tuple[tuple, Lookup]] = {}
        self._queued: dict[str, tuple[tuple, Future]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Compiles started, and queued jobs skipped because their document changed (for tests and logs).
        self.started = 0
        self.skipped = 0

    # ---- asking ----------------------------------------------------------------------------------
    def lookup(self, doc, settings, target) -> Lookup | None:
        """The exact figures for ``doc``'s current text, a pending :class:`Lookup` (a compile is queued),
        or None when no compiler applies. Never blocks on a compile."""
        if self.workers == 0:
            return None
        compiler = which_compiler(doc, target)
        if compiler is None:
            return None
        job = self._job(doc, settings, target, compiler)
        with self._lock:
            done = self._done.get(doc.uri)
            if done is not None and done[0] == job.key:
                return done[1]
        if compiler == "ptxas":  # already compiled by a lint, report or an earlier session: no wait
            from shaderlint.estimate.ptxas import cached_ptxas

            hit = cached_ptxas(job.text, job.arch_or_family, job.flags, device_only=True)
            if hit is not None:
                got = _ptxas_lookup(hit)
                with self._lock:
                    self._done[doc.uri] = (job.key, got)
                return got
        self._remember_loop()
        with self._lock:
            queued = self._queued.get(doc.uri)
            if queued is not None and queued[0] == job.key:
                return Lookup(compiler, pending=True)
            if queued is not None:
                queued[1].cancel()  # an older text: no compile for it if it has not started
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="shaderlint-compile")
            self._queued[doc.uri] = (job.key, self._pool.submit(self._run, job))
        return Lookup(compiler, pending=True)

    def forget(self, uri: str) -> None:
        """The document closed: drop its figures and any queued compile."""
        with self._lock:
            self._done.pop(uri, None)
            queued = self._queued.pop(uri, None)
        if queued is not None:
            queued[1].cancel()

    def shutdown(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def wait(self, uri: str, timeout: float | None = None) -> None:
        """Block until ``uri``'s queued compile is done (tests and benchmarks only)."""
        with self._lock:
            queued = self._queued.get(uri)
        if queued is not None:
            try:
                queued[1].result(timeout)
            except Exception:
                pass

    # ---- the work --------------------------------------------------------------------------------
    def _job(self, doc, settings, target, compiler: str) -> _Job:
        text = doc.data.decode("utf-8", errors="replace") + "\n"  # as shaderlint.estimate.measured compiles
        defines = tuple(getattr(settings, "defines", ()) or ())
        include_dirs = tuple(getattr(settings, "include_dirs", ()) or ())
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if compiler == "ptxas":
            from shaderlint.estimate.measured import ptxas_flags

            flags = tuple(ptxas_flags(doc.path, defines, include_dirs))
            return _Job(doc.uri, doc.version, compiler, text, target.ptxas_arch, flags=flags,
                        key=(compiler, digest, target.ptxas_arch, flags))
        from shaderlint.estimate.radv import subgroup_size_for

        dirs = (os.path.dirname(os.path.abspath(doc.path)), *include_dirs)
        wave = subgroup_size_for(target)
        model = doc.result.model if getattr(doc, "result", None) is not None else None
        spec = getattr(model, "pipeline_specialization", None)  # from the host code (host.index.apply)
        return _Job(doc.uri, doc.version, compiler, text, target.radv_family, defines=defines, include_dirs=dirs,
                    subgroup_size=wave, specialization=spec,
                    key=(compiler, digest, target.radv_family, wave, defines, dirs, spec))

    def _run(self, job: _Job) -> None:
        if self._current_version(job.uri) != job.version:  # edited (or closed) since: not worth a compile
            with self._lock:
                self.skipped += 1
                if self._queued.get(job.uri, (None,))[0] == job.key:
                    self._queued.pop(job.uri, None)
            return
        with self._lock:
            self.started += 1
        try:
            got = self._compile(job)
        except Exception as exc:  # never let a compile take the server down
            log.warning("exact figures for %s failed: %s", job.uri, exc)
            got = Lookup(job.compiler, kernels={}, error=f"{type(exc).__name__}: {exc}")
        with self._lock:
            if self._queued.get(job.uri, (None,))[0] == job.key:
                self._queued.pop(job.uri, None)
            if self._current_version(job.uri) is None:
                return  # closed meanwhile
            self._done[job.uri] = (job.key, got)
        self._notify(job.uri)

    @staticmethod
    def _compile(job: _Job) -> Lookup:
        if job.compiler == "ptxas":
            from shaderlint.estimate.ptxas import compile_ptxas

            return _ptxas_lookup(compile_ptxas(job.text, job.arch_or_family, list(job.flags), device_only=True,
                                               cache_dir="default"))
        from shaderlint.estimate.radv import measure_radv

        r = measure_radv(job.text, job.arch_or_family, subgroup_size=job.subgroup_size, defines=job.defines,
                         include_dirs=list(job.include_dirs), specialization=job.specialization)
        if not r.ok:
            return Lookup("radv", kernels={}, error=r.error or "RADV failed")
        wave = r.wave_size or job.subgroup_size or 64
        fig = Figures("radv", r.vgprs, -(-(r.scratch_bytes or 0) // wave), r.lds_bytes, r.threads_per_group,
                      f"{r.device or r.family}, wave{wave}")
        return Lookup("radv", kernels={r.entry_point or "main": [fig]})

    # ---- telling the server ----------------------------------------------------------------------
    def _remember_loop(self) -> None:
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            pass

    def _notify(self, uri: str) -> None:
        if self._on_ready is None:
            return
        loop = self._loop
        try:
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(self._on_ready, uri)
            else:
                self._on_ready(uri)
        except Exception as exc:
            log.warning("exact figures: could not notify the server: %s", exc)


def _ptxas_lookup(result) -> Lookup:
    kernels: dict[str, list[Figures]] = {}
    for k in result.values():
        kernels.setdefault(k.name, []).append(
            Figures("ptxas", k.registers, k.stack_bytes, k.shared_bytes, None, k.demangled))
    return Lookup("ptxas", kernels=kernels, error=None if len(result) else result.error)


def apply_exact(summary, exact: Lookup, target) -> None:
    """Put the compiler's figures for ``summary``'s kernel into it (a :class:`hover.KernelSummary`), with
    the occupancy they give; a pending or failed compile leaves the estimate and says so in a note."""
    from shaderlint.estimate.occupancy import occupancy

    name = summary.function.name
    fig = exact.for_kernel(name)
    if fig is None:
        if exact.pending:
            note = f"exact figures from {exact.compiler}: compiling in the background"
        elif exact.error:
            note = f"{exact.compiler} failed ({exact.error}): estimated"
        else:
            note = f"{exact.compiler} compiled no instance of this kernel: estimated"
        summary.notes = (note, *summary.notes)
        return
    summary.source = fig.source
    summary.registers = fig.registers
    summary.stack_bytes = fig.stack_bytes
    if fig.shared_bytes is not None:
        summary.shared_bytes = max(fig.shared_bytes, summary.shared_bytes or 0)  # (+ dynamic from the launch)
    threads = fig.threads_per_group or summary.threads
    summary.threads = threads
    try:
        if threads:
            o = occupancy(target, threads, fig.registers, summary.shared_bytes or 0)
            bound = False
        else:
            o = max((occupancy(target, t, fig.registers, summary.shared_bytes or 0)
                     for t in range(target.simd_width, target.max_threads_per_group + 1, target.simd_width)),
                    key=lambda x: x.occupancy)
            bound = True
        summary.occupancy, summary.limiter, summary.occupancy_is_bound = o.occupancy, o.limiter, bound
    except (ValueError, TypeError, AttributeError):
        pass
    count = len((exact.kernels or {}).get(name, ()))
    detail = f" ({count} instances: the one with the most registers, {fig.detail})" if count > 1 else ""
    # the estimate's assumptions no longer apply: only what the compiler said
    summary.notes = (f"{fig.source}: {fig.registers} registers, {fig.stack_bytes} bytes stack{detail}",)
