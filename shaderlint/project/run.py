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

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from shaderlint.discovery import display_path
from shaderlint.project.includes import FileContext, Project

HEADER_EXTENSIONS = (".h", ".hpp", ".hh", ".hxx", ".inl", ".cuh")
#: Headers linted in context only when one of these includes them (the languages whose headers are CUDA).
_INCLUDER_LANGUAGES = ("cuda",)


@dataclass
class RunPlan:
    files: list[str]  # the files to lint: the run's, then the headers added, in path order
    contexts: dict[str, FileContext] = field(default_factory=dict)  # by path as in ``files``
    languages: dict[str, str] = field(default_factory=dict)  # language of the headers added (their extension has none)
    data: dict[str, bytes] = field(default_factory=dict)  # the bytes read (each file once)
    project: Project | None = None


def _is_header(path: str) -> bool:
    return os.path.splitext(path)[1].lower() in HEADER_EXTENSIONS


def plan_run(files: Sequence[str], settings_for: Callable[[str], object], accept_header: Callable[[str], bool] | None,
             read: Callable[[str], bytes] | None = None, project: Project | None = None) -> RunPlan:
    """The plan for linting ``files`` (see the module docstring). ``accept_header(path)``: whether a
    header found through the includes may be added (None: add none). Files that cannot be read are
    left to the caller (they get no context here)."""
    project = project or Project()
    plan = RunPlan(list(files), project=project)

    def get(path: str) -> bytes | None:
        if path in plan.data:
            return plan.data[path]
        try:
            if read is not None:
                data = read(path)
            else:
                from shaderlint import runner  # the runner's reader: one way files are read in a run

                data = runner._read(path)
        except OSError:
            return None
        plan.data[path] = data
        return data

    includer_of: dict[str, str] = {}  # header (absolute) -> the first includer in path order
    by_abs: dict[str, str] = {os.path.normpath(os.path.abspath(f)): f for f in files}
    sources = [f for f in files if not _is_header(f)]
    headers = [f for f in files if _is_header(f)]
    for f in sorted(sources):
        settings = settings_for(f)
        language = settings.language_for(f)
        data = get(f)
        if language is None or data is None:
            continue
        ctx = _context(project, f, data, settings, language)
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
        data = get(f)
        if language is None or data is None:
            continue
        inc = includer_of.get(os.path.normpath(os.path.abspath(f)))
        ctx = _context(project, f, data, settings, language, inc, get(inc) if inc is not None else None)
        if f in plan.languages and not _defines_kernels(data, ctx):
            del plan.languages[f]  # host-side C or C++, or device helpers only: no kernel to report on
            plan.data.pop(f, None)
            continue
        if ctx is not None:
            plan.contexts[f] = ctx
        if f in plan.languages:
            kept.append(f)
    plan.files.extend(kept)
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
    return None if ctx.empty else ctx


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


__all__ = ["HEADER_EXTENSIONS", "RunPlan", "plan_run", "under_roots"]
