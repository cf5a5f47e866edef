"""``#include`` resolution and a file's context: the headers it reads, their macros, the build's flags.

Search order for ``#include "x"``: the includer's own directory, then the ``include-dirs`` setting,
then the ``-I`` directories of the file's ``compile_commands.json`` entry. ``#include <x>`` searches
``include-dirs`` and ``-I`` only. Toolkit and system headers (CUDA's ``cuda_runtime.h``, ``cub/``,
``thrust/``, ``metal_stdlib``, the C and C++ standard library, anything found in an ``-isystem``
directory) are never read. Headers are followed transitively in the branches the build reads, each
at most once per translation unit (as include guards and ``#pragma once`` make the compiler do),
depth-first in include order, within bounds (:data:`MAX_DEPTH`, :data:`MAX_BYTES`, :data:`MAX_FILES`).

A :class:`Project` lives for one run: it reads every header once, and walks and scans it once per
set of build macros (keyed by its content digest), whatever the number of files including it; what
visiting a header and its includes does to a file's walk is kept (:class:`_Summary`) and replayed for
every later file that reaches the header in the same state.

What a file's analysis gets (:class:`FileContext`):

* ``macros``: the macros the headers define (name -> :class:`~shaderlint.project.macros.MacroDef`),
  in the order the preprocessor sees them (a header's own definitions after those of the headers it
  includes; a later header's after an earlier one's);
* ``state``: for ``#if`` decisions, what the headers leave each macro as (a body, undefined, or
  unknown when their branches disagree), computed as :mod:`shaderlint.languages.conditions` does;
* the build's ``-D`` / ``-U`` flags, target architecture and ``-std`` from ``compile_commands.json``;
* ``files``: every header read with its content digest (the lint cache key covers them).

Approximation, said plainly: the headers' macros are in force from the file's first line, not from
the ``#include`` line on (a file that redefines or undefines one keeps its own per-file logic), and
each header is walked with the build's macros only, not with what the headers before it defined.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache

from shaderlint.project.macros import MacroDef, scan_macros

MAX_DEPTH = 24  # nested includes followed from a file
MAX_BYTES = 8 << 20  # header bytes read for one file's context
MAX_FILES = 512  # headers read for one file's context
MAX_HEADER_SIZE = 1 << 20  # a larger header is not read (the per-file limit of the analysis)

#: A macro the headers leave in an unknown state (their branches disagree); a string so that a context
#: pickled to a worker process keeps it.
UNKNOWN_STATE = "\0unknown"

_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*(?:"([^"\r\n]+)"|<([^>\r\n]+)>)', re.M)

# Toolkit and system headers: known, never read (their declarations are not the project's code). Exact
# names where projects use the same prefixes for their own headers (`cuda_utils.h`, `device_utils.cuh`).
_TOOLKIT_DIRS = re.compile(
    r"(?:cub|thrust|nv|nvtx3|crt|cuda|cooperative_groups|cute|hip|hipcub|rocprim|metal|simd|vulkan|c10|ATen|torch|"
    r"pybind11|sys|bits|linux|Metal|Foundation)/")
_TOOLKIT_NAMES = frozenset(
    "cuda.h cuda_runtime.h cuda_runtime_api.h cuda_fp16.h cuda_fp16.hpp cuda_bf16.h cuda_bf16.hpp cuda_fp8.h "
    "cuda_fp8.hpp cuda_fp6.h cuda_fp4.h cuda_pipeline.h cuda_pipeline_primitives.h cuda_awbarrier.h "
    "cuda_awbarrier_primitives.h cuda_texture_types.h cuda_surface_types.h cuda_occupancy.h cuda_profiler_api.h "
    "cuda_gl_interop.h cudaTypedefs.h cuComplex.h cuda_device_runtime_api.h device_functions.h "
    "device_launch_parameters.h device_atomic_functions.h device_types.h device_double_functions.h driver_types.h "
    "driver_functions.h host_defines.h host_config.h vector_types.h vector_functions.h math_constants.h "
    "math_functions.h mma.h texture_fetch_functions.h texture_indirect_functions.h surface_functions.h "
    "surface_indirect_functions.h channel_descriptor.h builtin_types.h library_types.h cooperative_groups.h "
    "nvrtc.h nvml.h nvToolsExt.h cudnn.h nccl.h curand.h curand_kernel.h cublas_v2.h cublas.h cublasLt.h "
    "cufft.h cusparse.h cusolverDn.h metal_stdlib metal_compute metal_atomic metal_simdgroup "
    "metal_simdgroup_matrix metal_math metal_integer hip_runtime.h hip_fp16.h hip_bf16.h".split())
_STD_C = re.compile(
    r"(?:assert|complex|ctype|errno|fenv|float|inttypes|iso646|limits|locale|math|setjmp|signal|stdalign|stdarg|"
    r"stdatomic|stdbool|stddef|stdint|stdio|stdlib|stdnoreturn|string|tgmath|threads|time|uchar|wchar|wctype|"
    r"unistd|pthread|dlfcn|fcntl|malloc|memory|strings|alloca|immintrin|x86intrin|arm_neon|omp|mpi)\.h")


_STD_CXX = re.compile(r"[a-z_]+")  # <vector>, <cstdint>: the C++ standard library
_SM_HEADER = re.compile(r"sm_\d+_\w+\.h(?:pp)?")  # sm_32_intrinsics.h and the like


@lru_cache(maxsize=4096)
def is_toolkit(name: str) -> bool:
    """``name`` (as written in ``#include``) is a toolkit or system header, never read."""
    name = name.strip()
    return (name in _TOOLKIT_NAMES or _TOOLKIT_DIRS.match(name) is not None or _STD_C.fullmatch(name) is not None
            or _STD_CXX.fullmatch(name) is not None or _SM_HEADER.fullmatch(name) is not None)


@dataclass(frozen=True)
class Include:
    offset: int  # of the directive's line in the includer
    name: str
    quoted: bool  # "x" (searched next to the includer first) or <x>


@dataclass(frozen=True)
class Flags:
    """The part of one ``compile_commands.json`` entry the analysis uses."""

    include_dirs: tuple[str, ...] = ()
    system_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()  # "-D" operands in order, "NAME" or "NAME=VALUE"
    undefines: tuple[str, ...] = ()
    arch: str | None = None  # "sm_80", "gfx90a"; None: none or several (the value is not known)
    std: str | None = None
    forced_includes: tuple[str, ...] = ()  # "-include" / "-imacros" / "--pre-include" operands (not read)


@dataclass(frozen=True)
class FileContext:
    """What the analysis of one file knows beyond its text (see the module docstring)."""

    path: str
    includer: str | None = None  # a header analysed in the context of this file (None: on its own)
    files: tuple[tuple[str, str], ...] = ()  # (absolute path, sha256 of the bytes) of every header read
    unresolved: tuple[str, ...] = ()  # project includes that were not found (names as written)
    macros: Mapping[str, MacroDef] = field(default_factory=dict)
    state: tuple[tuple[str, str | None], ...] = ()  # (name, body | None | OPAQUE | UNKNOWN_STATE)
    uncertain: frozenset[str] = frozenset()  # names the headers define differently in branches not decided
    flags: Flags | None = None  # from compile_commands.json
    truncated: bool = False  # a bound (depth, bytes, files) stopped the walk
    #: a header the build reads was not: a project include (quoted or not) not found or unreadable, a
    #: forced include of the compile command, or a bound reached (it may define any macro)
    unread: bool = False

    def digest(self) -> str:
        """What the lint cache key takes of the context: the headers' digests, the flags, the includer."""
        h = hashlib.sha256()
        h.update(repr((self.includer, self.files, self.unresolved, self.flags, self.truncated, self.unread)).encode(
            "utf-8", "surrogateescape"))
        return h.hexdigest()[:32]

    @property
    def empty(self) -> bool:
        return not self.files and not self.macros and self.flags is None and self.includer is None


# ---- compile_commands.json ---------------------------------------------------------------------------

_ARCH = re.compile(r"(?:sm|compute)_(\d+[a-z]?)")


def parse_flags(args: list[str], directory: str) -> Flags:
    """The flags of one compile command (its arguments, the first being the compiler)."""
    inc: list[str] = []
    sysd: list[str] = []
    defs: list[str] = []
    undefs: list[str] = []
    archs: list[str] = []
    forced: list[str] = []
    std = None

    def path(p: str) -> str:
        return os.path.normpath(os.path.join(directory, p))

    i, n = 1, len(args)
    while i < n:
        a = args[i]
        nxt = args[i + 1] if i + 1 < n else None
        took = False
        for opt, out, conv in (("-I", inc, path), ("-isystem", sysd, path), ("-D", defs, str), ("-U", undefs, str)):
            if a == opt and nxt is not None:
                out.append(conv(nxt))
                took = True
                i += 1
                break
            if a.startswith(opt) and len(a) > len(opt) and not (opt == "-I" and a.startswith("-isystem")):
                out.append(conv(a[len(opt):].lstrip("=") if opt == "-isystem" else a[len(opt):]))
                took = True
                break
        if not took:
            if a in ("-arch", "--gpu-architecture", "--offload-arch", "-gencode", "--generate-code") and nxt is not None:
                archs.extend(_archs(a, nxt))
                i += 1
            elif a.startswith(("-arch=", "--gpu-architecture=", "--offload-arch=", "-gencode=", "--generate-code=",
                               "--cuda-gpu-arch=")):
                opt, _, val = a.partition("=")
                archs.extend(_archs(opt, val))
            elif a.startswith(("-std=", "--std=")):
                std = a.partition("=")[2]
            elif a == "-std" and nxt is not None:
                std = nxt
                i += 1
            elif a in ("-include", "-imacros", "--pre-include", "-pre-include", "--include") and nxt is not None:
                forced.append(nxt)
                i += 1
            elif a.startswith(("--pre-include=", "-include=", "-imacros=")):
                forced.append(a.partition("=")[2])
        i += 1
    uniq = list(dict.fromkeys(archs))
    return Flags(tuple(dict.fromkeys(inc)), tuple(dict.fromkeys(sysd)), tuple(defs), tuple(undefs),
                 uniq[0] if len(uniq) == 1 else None, std, tuple(forced))


def _archs(opt: str, val: str) -> list[str]:
    if opt in ("--offload-arch", "--cuda-gpu-arch") and not val.startswith("sm_"):
        return [v for v in val.split(",") if v]  # gfx90a (HIP)
    if opt in ("-gencode", "--generate-code"):
        m = re.search(r"arch=compute_(\d+[a-z]?)", val)
        return [f"sm_{m.group(1)}"] if m else []
    return [f"sm_{m.group(1)}" for m in _ARCH.finditer(val)]


class CompileDB:
    """A ``compile_commands.json``: the flags of each source it lists (by absolute path)."""

    def __init__(self, path: str, entries: dict[str, Flags]) -> None:
        self.path = path
        self.entries = entries

    @classmethod
    def load(cls, path: str) -> "CompileDB | None":
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        return cls.parse(path, data)

    @classmethod
    def parse(cls, path: str, data: bytes) -> "CompileDB | None":
        """The database in ``data`` (the bytes of the file at ``path``); None when it is not one."""
        try:
            raw = json.loads(data)
        except (ValueError, RecursionError):
            return None
        if not isinstance(raw, list):
            return None
        entries: dict[str, Flags] = {}
        for e in raw:
            if not isinstance(e, dict) or not isinstance(e.get("file"), str):
                continue
            directory = e.get("directory") if isinstance(e.get("directory"), str) else os.path.dirname(path)
            args = e.get("arguments")
            if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
                cmd = e.get("command")
                if not isinstance(cmd, str):
                    continue
                try:
                    args = shlex.split(cmd)
                except ValueError:
                    continue
            f = os.path.normpath(os.path.join(directory, e["file"]))
            entries.setdefault(f, parse_flags(args, directory))
        return cls(path, entries)

    def flags_for(self, path: str) -> Flags | None:
        return self.entries.get(os.path.normpath(os.path.abspath(path)))


# ---- the per-run project -----------------------------------------------------------------------------

@dataclass
class _Header:
    """One header as the build reads it: its live includes, what it does to the macros, its definitions."""

    path: str
    digest: str
    includes: list[Include]
    delta: dict[str, str | None]  # name -> body | None | OPAQUE | UNKNOWN_STATE
    macros: dict[str, MacroDef]
    uncertain: frozenset[str]
    #: (include dirs, system dirs) -> ([(include, the path it resolves to)], the paths that rests on)
    targets: dict = field(default_factory=dict)


class _Lexical:
    """:meth:`Source.in_comment_or_string` for a file whose comments and literals are wanted only as far
    as the offsets asked (its includes, at the top of most files): the spans are found in order, up to
    the first one starting after the offset asked, and no further (the same spans, the same answer)."""

    def __init__(self, source) -> None:
        self.source = source
        self._found = None
        self._starts: list[int] = []
        self._ends: list[int] = []

    def __call__(self, offset: int) -> bool:
        import bisect

        source = self.source
        if "lexical" in source.__dict__:  # (computed already)
            return source.in_comment_or_string(offset)
        starts, ends = self._starts, self._ends
        if self._found is None:
            from shaderlint.model.source import _LEXICAL

            self._found = _LEXICAL.finditer(source.data)
        while self._found is not False and (not starts or starts[-1] <= offset):
            m = next(self._found, None)
            if m is None:
                self._found = False
                break
            starts.append(m.start())
            ends.append(m.end())
        i = bisect.bisect_right(starts, offset) - 1
        return i >= 0 and offset < ends[i]


def _include_matches(source) -> list[re.Match]:
    """``scan_directives(source, _INCLUDE)``, the same matches (kept with the source as it keeps them),
    found from the lines that hold ``include``: a match lies within one line, so it is the match at the
    start of such a line, and the pattern is not tried at every other directive (a header's
    ``#define`` lines)."""
    known = source.directive_matches
    found = known.get(_INCLUDE)
    if found is None:
        data = source.data
        found = []
        line = -1
        i = data.find(b"include")
        while i >= 0:
            start = data.rfind(b"\n", 0, i) + 1
            if start != line:
                line = start
                m = _INCLUDE.match(data, start)
                if m is not None:
                    found.append(m)
            i = data.find(b"include", i + 7)
        known[_INCLUDE] = found
    return found


def _scan_includes(source, dead: list[tuple[int, int]], inside=None) -> list[Include]:
    """The ``#include`` lines of ``source`` outside the ``dead`` regions (sorted, disjoint). ``inside``:
    the test for an offset in a comment or literal (the source's own by default)."""
    import bisect

    from shaderlint.languages.base import _continues_line

    data = source.data
    starts = [s for s, _ in dead]
    out = []
    if inside is None:
        inside = source.in_comment_or_string
    for m in _include_matches(source):
        at = m.start()
        if inside(data.index(b"#", at)) or _continues_line(data, at):
            continue
        i = bisect.bisect_right(starts, at) - 1
        if i >= 0 and dead[i][0] <= at < dead[i][1]:
            continue
        quoted = m.group(1) is not None
        name = (m.group(1) if quoted else m.group(2)).decode("utf-8", "replace").strip()
        out.append(Include(at, name, quoted))
    return out


def _live_includes(source, predefined: tuple) -> list[Include]:
    """The ``#include`` lines of ``source`` in the branches the build reads with ``predefined``
    (:func:`_scan_includes` of its dead regions). The branches are decided only when an include
    comes at or after the first conditional group: a dead region lies within a group, so the includes
    before the first one are read whatever the conditions say."""
    from shaderlint.languages.base import _continues_line, match_at
    from shaderlint.languages.conditions import _DIRECTIVE, macro_delta
    from shaderlint.model.source import _DIRECTIVE_START

    includes = _include_matches(source)
    if not includes:
        return []
    last = includes[-1].start()
    data = source.data
    inside = _Lexical(source)
    # the walk's directives before the last include, as macro_delta reads them (scan_directives at
    # Source.directive_starts, those before ``last`` only), up to the first group
    starts = [0] if re.match(rb"[ \t]*#", data) else []
    starts.extend(m.start() + 1 for m in _DIRECTIVE_START.finditer(data, 0, last))
    for m in match_at(data, _DIRECTIVE, starts):
        if m.group(1) in (b"if", b"ifdef", b"ifndef") and not inside(m.start(1)) \
                and not _continues_line(data, m.start()):
            break
    else:
        return _scan_includes(source, [], inside)
    dead, _ = macro_delta(source, predefined)
    return _scan_includes(source, dead)


def _uncertain(path: str, data: bytes, dead: list[tuple[int, int]], source=None) -> frozenset[str]:
    """Names ``#define``d with different bodies in the live branches (which one holds is not decided).
    ``source``: the :class:`~shaderlint.model.source.Source` of ``data``, whose directive lines are
    where a definition can be (looked for there only)."""
    import bisect

    from shaderlint.languages.base import _OBJ_MACRO, match_at

    found = _OBJ_MACRO.finditer(data) if source is None else match_at(data, _OBJ_MACRO, source.directive_starts)
    starts: list[int] = []  # the dead regions, overlapping ones merged
    ends: list[int] = []
    for a, b in sorted(dead):
        if a >= b:
            continue  # (empty: holds no offset)
        if starts and a <= ends[-1]:
            ends[-1] = max(ends[-1], b)
        else:
            starts.append(a)
            ends.append(b)
    seen: dict[bytes, set[bytes]] = {}
    for m in found:
        i = bisect.bisect_right(starts, m.start()) - 1
        if i >= 0 and m.start() < ends[i]:
            continue
        seen.setdefault(m.group(1), set()).add(b" ".join(re.sub(rb"/\*.*?\*/|//.*|\\\r?\n", b" ", m.group(2)).split()))
    return frozenset(k.decode() for k, v in seen.items() if len(v) > 1)


class Project:
    """One run's view of the project: headers read and scanned once, compile databases loaded once."""

    def __init__(self, read: Callable[[str], bytes] | None = None, cache_reads: bool = True) -> None:
        self._read_fn = read
        self._cache_reads = cache_reads  # False (a language server): read again for each context
        self._data: dict[str, bytes | None] = {}
        self._headers: dict[tuple[str, tuple], _Header] = {}
        self._mentions: dict[str, frozenset[str]] = {}  # header digest -> names its directives mention
        self._dbs: dict[str, CompileDB | None] = {}
        self._db_for_dir: dict[str, CompileDB | None] = {}
        self._db_answers: dict[tuple, CompileDB | None] = {}  # (directory, config path) -> compile_db
        self._resolve_cache: dict[tuple, str | None] = {}
        self._resolve_probes: dict[tuple, list[str]] = {}
        self._vcs_probe_cache: dict[str, list[str]] = {}  # recording: the paths each answer rests on
        self._digests: dict[str, tuple[bytes, str]] = {}  # path -> (the bytes read, their digest)
        # (file path, build macros) -> (its bytes, its live #includes): a file including many headers
        # analysed in its context is walked once for its own context and them all
        self._includer_scans: dict[tuple[str, tuple], tuple[bytes, list[Include]]] = {}
        self._file_targets: dict[tuple, tuple[list[Include], list]] = {}  # (path, dirs, system) -> _resolved
        self.headers_scanned = 0  # walks of a header (each once per content and build macros)
        # (header path, include dirs, system dirs) -> [_Summary]: what walking the header and its includes
        # gives, for the build macros its walk reads (see _Walk.visit)
        self._summaries: dict[tuple, list[_Summary]] = {}
        self._walk_keys: dict[tuple, dict] = {}  # build macros -> _Walk._keys
        # Recording (shaderlint.project.run keeps a run's plan across runs): what every path consulted
        # was found to be (path -> fingerprint, see `fingerprint`), and the paths the current context
        # consulted. None: not recording (the file system is asked as it always was).
        self._fps: dict[str, tuple] | None = None
        self._deps: set[str] | None = None
        self._unsure = False  # a read failed on a file that exists: what the context saw cannot be keyed

    # -- recording --
    def record(self) -> None:
        """Record what each context consults from now on (:meth:`consulted`)."""
        if self._fps is None:
            self._fps = {}

    def consulted(self, deps: set[str] | None) -> tuple[set[str] | None, bool]:
        """Make ``deps`` the set the next look-ups add their paths to; returns the previous set and
        whether a read failed on an existing file since the last call (its context is not keyable)."""
        prev, unsure = self._deps, self._unsure
        self._deps, self._unsure = deps, False
        return prev, unsure

    def fingerprint(self, path: str) -> tuple | None:
        """What ``path`` was found to be this run: ``("k", kind)`` (:func:`path_kind`) for a path whose
        existence or kind was asked, ``("f", stat key | None, sha256)`` for a file read."""
        return self._fps.get(path) if self._fps is not None else None

    def note(self, path: str) -> None:
        """Add ``path`` (recorded already) to what the current context consulted."""
        if self._deps is not None and self._fps is not None and path in self._fps:
            self._deps.add(path)

    def _kind(self, path: str) -> str | None:
        fps = self._fps
        fp = fps.get(path)  # type: ignore[union-attr]
        if fp is None:
            fp = fps[path] = ("k", path_kind(path))  # type: ignore[index]
        if self._deps is not None:
            self._deps.add(path)
        return fp[1] if fp[0] == "k" else "file"

    def _isfile(self, path: str) -> bool:
        if self._fps is None:
            return os.path.isfile(path)
        return self._kind(path) in ("file", "big")

    def _present(self, path: str) -> bool:
        if self._fps is None:
            return os.path.exists(path)
        return self._kind(path) is not None

    def read_recorded(self, path: str, limit: int | None = None) -> bytes | None:
        """The bytes of ``path`` (None: not a regular file, or larger than ``limit``), recorded with its
        fingerprint; OSError when it cannot be read."""
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            self._kind(path)
            raise
        if not stat.S_ISREG(st.st_mode) or (limit is not None and st.st_size > limit):
            self._kind(path)
            return None
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            self._unsure = True
            raise
        digest = hashlib.sha256(data).hexdigest()
        self._digests[path] = (data, digest)
        self._fps[path] = ("f", stat_key(st), digest)  # type: ignore[index]
        if self._deps is not None:
            self._deps.add(path)
        return data

    def record_read(self, path: str, st: os.stat_result | None, data: bytes | None) -> None:
        """Record that ``path`` (stat ``st`` taken before reading it) read as ``data``; None for either:
        it could not be read, and the current context cannot be keyed."""
        if self._fps is None:
            return
        if st is None or data is None or not stat.S_ISREG(st.st_mode):
            self._unsure = True
            return
        digest = hashlib.sha256(data).hexdigest()
        self._digests[path] = (data, digest)
        self._fps[path] = ("f", stat_key(st), digest)
        if self._deps is not None:
            self._deps.add(path)

    # -- files --
    def read(self, path: str) -> bytes | None:
        if path in self._data and self._cache_reads:
            if self._deps is not None:
                self._deps.add(path)
            return self._data[path]
        data = None
        try:
            if self._read_fn is not None:
                data = self._read_fn(path)
            elif self._fps is not None:
                data = self.read_recorded(path, MAX_HEADER_SIZE)
            elif os.path.isfile(path) and os.path.getsize(path) <= MAX_HEADER_SIZE:
                with open(path, "rb") as fh:
                    data = fh.read()
        except OSError:
            data = None
        if data is not None and len(data) > MAX_HEADER_SIZE:
            data = None
        self._data[path] = data
        return data

    def forget(self, path: str) -> None:
        """Drop what is known of ``path`` (the language server, when a header changes)."""
        path = os.path.normpath(os.path.abspath(path))
        self._data.pop(path, None)
        self._resolve_cache.clear()
        self._file_targets.clear()
        self._summaries.clear()
        self._db_answers.clear()

    def _exists(self, path: str) -> bool:
        if path in self._data and self._cache_reads:
            if self._deps is not None:
                self._deps.add(path)
            return self._data[path] is not None
        if self._read_fn is not None:
            return self.read(path) is not None
        return self._isfile(path)

    # -- compile_commands.json --
    def compile_db(self, path: str, settings) -> CompileDB | None:
        """The ``compile_commands.json`` for ``path``: next to the configuration file in effect (or in its
        ``build/``), else at the root of the repository holding ``path`` (the first directory upward with
        ``.git``, ``.hg`` or ``.svn``), or its ``build/``. (Kept per directory and configuration file
        for the run, when nothing is recorded and files are read once.)"""
        key = None
        if self._fps is None and self._deps is None and self._cache_reads:
            key = (os.path.dirname(os.path.abspath(path)), settings.config_path if settings is not None else None)
            if key in self._db_answers:
                return self._db_answers[key]
        got = self._compile_db(path, settings)
        if key is not None:
            self._db_answers[key] = got
        return got

    def _compile_db(self, path: str, settings) -> CompileDB | None:
        candidates = []
        if settings is not None and settings.config_path and self._isfile(settings.config_path):
            candidates.append(settings.base_dir())
        root = self._vcs_root(os.path.dirname(os.path.abspath(path)))
        if root is not None:
            candidates.append(root)
        for d in candidates:
            for p in (os.path.join(d, "compile_commands.json"), os.path.join(d, "build", "compile_commands.json")):
                if p not in self._dbs:
                    self._dbs[p] = self._load_db(p)
                elif self._deps is not None:
                    self._deps.add(p)
                if self._dbs[p] is not None:
                    return self._dbs[p]
        return None

    def _load_db(self, p: str) -> CompileDB | None:
        if self._fps is None:
            return CompileDB.load(p) if os.path.isfile(p) else None
        try:
            data = self.read_recorded(p)
        except OSError:
            return None
        return CompileDB.parse(p, data) if data is not None else None

    def _vcs_root(self, d: str) -> str | None:
        if d in self._db_for_dir:
            if self._deps is not None:  # what the answer rests on: the markers looked for up to the root
                self._deps.update(self._vcs_probes(d))
            return self._db_for_dir[d]  # type: ignore[return-value]
        seen = []
        root = None
        cur = d
        while True:
            if cur in self._db_for_dir:
                root = self._db_for_dir[cur]  # type: ignore[assignment]
                if self._deps is not None:
                    self._deps.update(self._vcs_probes(cur))
                break
            seen.append(cur)
            if any(self._present(os.path.join(cur, v)) for v in (".git", ".hg", ".svn")):
                root = cur  # type: ignore[assignment]
                break
            parent = os.path.dirname(cur)
            if parent == cur:
                break
            cur = parent
        for s in seen:
            self._db_for_dir[s] = root  # type: ignore[assignment]
        return root  # type: ignore[return-value]

    def _vcs_probes(self, d: str) -> list[str]:
        """The markers :meth:`_vcs_root` looks for from ``d`` up to its answer (recording only)."""
        got = self._vcs_probe_cache.get(d)
        if got is not None:
            return got
        out = self._vcs_probe_cache[d] = []
        root = self._db_for_dir.get(d)
        cur = d
        while True:
            for v in (".git", ".hg", ".svn"):
                p = os.path.join(cur, v)
                out.append(p)
                self._kind(p)
            if cur == root:
                break
            parent = os.path.dirname(cur)
            if parent == cur:
                break
            cur = parent
        return out

    # -- resolution --
    def resolve(self, inc: Include, includer: str, dirs: tuple[str, ...], system: tuple[str, ...] = ()) -> str | None:
        """The absolute path ``inc`` names, or None (toolkit or system header, or not found)."""
        key = (inc.name, inc.quoted, os.path.dirname(includer) if inc.quoted else "", dirs, system)
        if key in self._resolve_cache and self._cache_reads:
            if self._deps is not None:
                for p in self._resolve_probes.get(key, ()):
                    self._exists(p)  # (recorded again for this context)
            return self._resolve_cache[key]
        if is_toolkit(inc.name) or os.path.isabs(inc.name):
            self._resolve_cache[key] = None
            return None
        found = None
        search = ((os.path.dirname(includer),) if inc.quoted else ()) + dirs
        probes = []
        for d in search:
            p = os.path.normpath(os.path.join(d, inc.name))
            probes.append(p)
            if self._exists(p):
                found = p
                break
        if found is not None and any(found.startswith(s.rstrip(os.sep) + os.sep) for s in system):
            found = None  # in an -isystem directory as well: a system header
        self._resolve_cache[key] = found
        if self._fps is not None:
            self._resolve_probes[key] = probes
        return found

    def _resolved(self, path: str, includes: list[Include], dirs: tuple[str, ...],
                  system: tuple[str, ...]) -> Iterable[tuple[Include, str | None]]:
        """Each of the file's ``includes`` (:meth:`_includer_includes`) with the path it names: kept
        while the includes are the same list (a file including many headers analysed in its
        context); resolved as they are asked for when recording (the paths consulted are those)."""
        if self._deps is not None or not self._cache_reads:
            return ((inc, self.resolve(inc, path, dirs, system)) for inc in includes)
        key = (path, dirs, system)
        got = self._file_targets.get(key)
        if got is None or got[0] is not includes:
            got = self._file_targets[key] = (includes,
                                             [(inc, self.resolve(inc, path, dirs, system)) for inc in includes])
        return got[1]

    def targets(self, h: _Header, dirs: tuple[str, ...], system: tuple[str, ...]) -> list[tuple[Include, str | None]]:
        """:meth:`resolve` of each of the header's includes (kept on the header: a header read by a
        thousand files is resolved once per include path)."""
        if not self._cache_reads:
            return [(inc, self.resolve(inc, h.path, dirs, system)) for inc in h.includes]
        key = (dirs, system)
        got = h.targets.get(key)
        if got is None:
            outer = self._deps
            self._deps = set() if outer is not None else None
            try:
                got = h.targets[key] = ([(inc, self.resolve(inc, h.path, dirs, system)) for inc in h.includes],
                                        self._deps)
            finally:
                if outer is not None:
                    outer.update(self._deps)  # type: ignore[arg-type]
                self._deps = outer
        elif self._deps is not None:
            if got[1] is None:  # resolved while nothing was recorded: ask again, recording
                return [(inc, self.resolve(inc, h.path, dirs, system)) for inc in h.includes]
            self._deps.update(got[1])
        return got[0]

    # -- headers --
    def header(self, path: str, data: bytes, predefined: tuple, table: dict | None = None) -> _Header:
        """The header at ``path`` (bytes ``data``) walked with ``predefined`` (``table``: its dict, when
        the caller has it)."""
        known = self._digests.get(path)
        if known is not None and known[0] is data:
            digest = known[1]
        else:
            digest = hashlib.sha256(data).hexdigest()
            self._digests[path] = (data, digest)
        source = None
        if digest not in self._mentions:  # (its first walk: the directives are found once, for both)
            from shaderlint.model.source import Source

            source = Source(path, data)
        predefined = self._relevant(digest, data, predefined, table, source)
        key = (digest, predefined)
        h = self._headers.get(key)
        if h is None or h.path != path:
            if h is not None:  # the same bytes at another path: the walk is the same, the positions not
                h = _Header(path, digest, h.includes, h.delta, {k: _moved(v, path) for k, v in h.macros.items()},
                            h.uncertain)
            else:
                h = self._scan_header(path, data, digest, predefined, source)
            self._headers[key] = h
        return h

    def _relevant(self, digest: str, data: bytes, predefined: tuple, table: dict | None = None,
                  source=None) -> tuple:
        """The part of ``predefined`` the header's walk can read: the names its directives mention,
        the bodies' names of those kept, and the complete-defines entry (a name it never mentions
        is never looked up, so its walk is the same without it). Headers are then walked once for
        all the files whose build macros differ only elsewhere (complete defines give each file its
        own set of unknown names). ``table``: ``dict(predefined)``, ``source``: the
        :class:`~shaderlint.model.source.Source` of ``data``, when the caller has them."""
        names = self._mentions.get(digest)
        if names is None:
            names = self._mentions[digest] = _mentioned(data, source)
        return _relevant_part(predefined, dict(predefined) if table is None else table, names)

    def _scan_header(self, path: str, data: bytes, digest: str, predefined: tuple, source=None) -> _Header:
        from shaderlint.languages.conditions import OPAQUE, UNKNOWN, macro_delta
        from shaderlint.model.source import Source

        self.headers_scanned += 1
        if source is None:
            source = Source(path, data)
        dead, delta = macro_delta(source, predefined)
        includes = _scan_includes(source, dead)
        macros = scan_macros(path, data, predefined, source, dead)  # (the same walk: done once)
        out: dict[str, str | None] = {}
        for k, v in delta.items():
            out[k] = UNKNOWN_STATE if v is UNKNOWN else v  # type: ignore[assignment]
        # a function-like macro: defined, no value an `#if` can use
        for k, d in macros.items():
            if d.params is not None and out.get(k) not in (None, UNKNOWN_STATE):
                out[k] = OPAQUE
        return _Header(path, digest, includes, out, macros, _uncertain(path, data, dead, source))

    def _includer_includes(self, path: str, data: bytes, build: tuple) -> list[Include]:
        """The live ``#include`` lines of a file or includer (``data`` at ``path``) under the build's
        macros: a source's, found for its own context, serve again for the headers analysed in it."""
        from shaderlint.model.source import Source

        key = (path, build)
        got = self._includer_scans.get(key)
        if got is not None and (got[0] is data or got[0] == data):
            return got[1]
        includes = None
        known = self._digests.get(path)
        if known is not None and (known[0] is data or known[0] == data) and known[1] in self._mentions:
            # walked as a header already (a header of the run included by its sources): the same
            # includes, when its walk read the same build macros
            h = self._headers.get((known[1], _relevant_part(build, dict(build), self._mentions[known[1]])))
            if h is not None:
                includes = h.includes
        if includes is None:
            includes = _live_includes(Source(path, data), build)
        if len(self._includer_scans) >= _MAX_INCLUDER_SCANS:
            self._includer_scans.clear()
        self._includer_scans[key] = (data, includes)
        return includes

    # -- contexts --
    def context(self, path: str, data: bytes, settings, language: str | None, includer: str | None = None,
                includer_data: bytes | None = None) -> FileContext:
        """The context of ``path`` (bytes ``data``) linted with ``settings``; for a header analysed in
        the context of the file ``includer`` (bytes ``includer_data``), the macros in force where
        ``includer`` (transitively) includes it, then its own includes.

        When the build's defines may be complete (:func:`defines_complete`), the includes are walked a
        second time with that claim: a name that no header read in the first walk and no ``#define``
        of the file (or includer) defines is undefined in the headers' ``#if`` too (``GGML_USE_HIP``:
        its branch's ``#include <hipblas/hipblas.h>`` is not read by the build), while those names
        stay unknown there (each header is walked with the build's macros, not with what the
        headers before it define); a name the first walk's headers define that the second leaves
        unsettled is unknown to the file."""
        path = os.path.normpath(os.path.abspath(path))
        flags_src = includer if includer is not None else path
        db = self.compile_db(flags_src, settings)
        flags = db.flags_for(flags_src) if db is not None else None
        dirs = tuple(getattr(settings, "include_dirs", ()) or ()) + (flags.include_dirs if flags else ())
        system = flags.system_dirs if flags else ()
        build = build_predefined(settings, language, flags)
        args = (path, data, includer, includer_data, flags, dirs, system)
        ctx, own_missing = self._context(*args, build, build)
        said = getattr(settings, "defines_complete", None)
        if not (flags is not None if said is None else said) or ctx.truncated \
                or (flags is not None and flags.forced_includes):
            return replace(ctx, unread=True) if own_missing else ctx
        from shaderlint.languages.conditions import COMPLETE, UNSET, macro_delta
        from shaderlint.model.source import Source

        known = set(dict(build))
        own = (_defined_names(data) | _defined_names(includer_data or b"")) - known
        headers = (set(ctx.macros) | {k for k, _ in ctx.state}) - known
        for _ in range(COMPLETE_PASSES):
            # (the names the headers may define only shrink from pass to pass: each pass reads a subset
            # of the branches the one before read, so a name none of them defines is undefined)
            file_pre = ((COMPLETE, "1"),) + build + tuple((n, UNSET) for n in sorted(headers))
            header_pre = file_pre + tuple((n, UNSET) for n in sorted(own - headers))
            ctx, own_missing = self._context(*args, file_pre, header_pre)
            now = (set(ctx.macros) | {k for k, _ in ctx.state}) - known
            if now == headers:
                break
            headers = now
        settled = {k for k, _ in ctx.state}
        ctx = replace(ctx, state=ctx.state + tuple((n, UNKNOWN_STATE) for n in sorted(headers - settled)))
        if own_missing and not ctx.unread:
            # an include the file's branches leave out under complete defines is not read by the build
            # either (``#if defined(GGML_USE_HIPBLAS)`` / ``#include <hipblas/hipblas.h>``)
            gone, _ = macro_delta(Source(path, data), context_predefined(build, ctx, True))
            if any(not any(a <= o < b for a, b in gone) for o in own_missing):
                ctx = replace(ctx, unread=True)
        return ctx

    def _context(self, path: str, data: bytes, includer: str | None, includer_data: bytes | None,
                 flags: Flags | None, dirs: tuple[str, ...], system: tuple[str, ...], file_pre: tuple,
                 header_pre: tuple) -> tuple[FileContext, list[int]]:
        """One walk of the includes: the file's (and includer's) branches decided with ``file_pre``,
        the headers' with ``header_pre``; and where the file's own project includes that were not
        found are (offsets)."""
        from shaderlint.languages.conditions import macro_delta
        from shaderlint.model.source import Source

        walk = _Walk(self, dirs, system, header_pre)
        if includer is not None and includer_data is not None:
            inc_path = os.path.normpath(os.path.abspath(includer))
            walk.visited.add(inc_path)
            direct = None
            walk.stop = path
            for inc, target in self._resolved(inc_path, self._includer_includes(inc_path, includer_data, file_pre),
                                              dirs, system):
                if target == path:
                    direct = inc
                    break
                if target is not None:
                    walk.visit(target, 1)
                    if walk.stopped:
                        break
            if direct is not None:  # the includer's own macros before the #include line
                before = includer_data[:direct.offset]
                src = Source(inc_path, before)
                dead, own = macro_delta(src, file_pre)
                walk.apply_delta(own)
                for k, d in scan_macros(inc_path, before, file_pre, src, dead).items():
                    walk.macros.pop(k, None)
                    walk.macros[k] = d
                walk.uncertain.update(_uncertain(inc_path, before, [], src))
            walk.stop = None
            walk.stopped = False
        walk.visited.add(path)
        own_missing: list[int] = []  # offsets of the file's own project includes not found
        for inc, target in self._resolved(path, self._includer_includes(path, data, file_pre), dirs, system):
            if target is None:
                if walk.missing(inc, header=False):
                    own_missing.append(inc.offset)
                continue
            walk.visit(target, 1)
        unread = walk.unread or walk.truncated or bool(flags is not None and flags.forced_includes)
        return FileContext(path, os.path.normpath(os.path.abspath(includer)) if includer else None,
                           tuple(walk.files), tuple(dict.fromkeys(walk.unresolved)), walk.macros,
                           tuple(walk.state.items()), frozenset(walk.uncertain), flags, walk.truncated,
                           unread), own_missing


_DEFINE_NAME = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.M)
#: The text of the directives whose names a header's walk reads (``#if`` … ``#define`` / ``#undef``).
_DIRECTIVE_TEXT = re.compile(
    rb"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef|define|undef)\b((?:[^\n\\]|\\\r?\n|\\)*)", re.M)
_IDENT = re.compile(rb"[A-Za-z_]\w*")


def _mentioned(data: bytes, source=None) -> frozenset[str]:
    """The names the directives of ``data`` that a walk of its branches reads mention (``#if`` …
    ``#define`` / ``#undef``), or more. ``source``: its :class:`~shaderlint.model.source.Source`:
    the directives are then those the walk itself reads (found once for both), a name in a comment
    after ``#else`` or ``#endif`` not taken."""
    if source is None:
        text = b"\n".join(d.group(1) for d in _DIRECTIVE_TEXT.finditer(data))
    else:  # the directives the walk reads (conditions.macro_delta), found once for both
        from shaderlint.languages.base import scan_directives
        from shaderlint.languages.conditions import _DIRECTIVE

        text = b"\n".join(d.group(2) for d in scan_directives(source, _DIRECTIVE)
                          if d.group(1) not in (b"else", b"endif"))
    return frozenset(w.decode("ascii") for w in set(_IDENT.findall(text)))


def _kept(table: Mapping[str, object], names: frozenset[str], special: tuple[str, ...] | None = None) -> set[str]:
    """The names of ``table`` (predefined macros) a walk that mentions only ``names`` can read: those
    named, the complete-defines entry, and the names their bodies expand to (transitively).
    ``special``: the entries of ``table`` that are no identifier (starting with a NUL), when known."""
    if special is not None and len(names) < len(table):
        keep = {k for k in names if k in table}
        keep.update(special)
    else:
        keep = {k for k in table if k in names or k.startswith("\0")}
    todo = list(keep)
    while todo:  # names a kept body expands to
        body = table.get(todo.pop())
        if isinstance(body, str):
            for w in _IDENT.findall(body.encode("utf-8", "surrogateescape")):
                w = w.decode("ascii")
                if w in table and w not in keep:
                    keep.add(w)
                    todo.append(w)
    return keep


def _relevant_part(predefined: tuple, table: Mapping[str, object], names: frozenset[str]) -> tuple:
    """``predefined`` (``table`` is its dict) restricted to what a walk mentioning ``names`` reads, in
    its order (:meth:`Project._relevant`)."""
    keep = _kept(table, names)
    return predefined if len(keep) == len(table) else tuple((k, v) for k, v in predefined if k in keep)


def _defined_names(data: bytes) -> set[str]:
    """Every name a ``#define`` line of ``data`` defines, in any branch (a cheap over-approximation)."""
    return {m.group(1).decode("ascii") for m in _DEFINE_NAME.finditer(data)} if b"define" in data else set()


#: Walks of a file's includes under complete defines, at most (:meth:`Project.context`): each decides
#: the branches on names the headers of the walk before defined nowhere (llama.cpp's
#: ``GGML_COMMON_DECL_MUSA``, defined by ``common.cuh`` under ``GGML_USE_MUSA``).
COMPLETE_PASSES = 3

RACY_NS = 2_000_000_000  # a file modified this recently when read is checked by content next time


def path_kind(path: str) -> str | None:
    """None (no such path), "dir", "file", "big" (a regular file larger than
    :data:`MAX_HEADER_SIZE`, never read as a header) or "other"."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if stat.S_ISREG(st.st_mode):
        return "big" if st.st_size > MAX_HEADER_SIZE else "file"
    return "other"


def stat_key(st: os.stat_result) -> list[int] | None:
    """Device, inode, size, modification and change times (ns): equal keys mean unchanged bytes, except
    for a file modified within :data:`RACY_NS` of when it was read (a write in the same clock tick keeps
    the times): None then, and the file is compared by content."""
    now = time.time_ns()
    if max(st.st_mtime_ns, st.st_ctime_ns) >= now - RACY_NS:
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _moved(d: MacroDef, path: str) -> MacroDef:
    return MacroDef(d.name, d.params, d.body, path, d.line, d.column)


@dataclass(eq=False)
class _Summary:
    """What visiting one header (and, depth-first, its includes) does to a walk that neither stops
    before a header nor reaches a bound on the way. The walk reads the rest of its state only by asking
    whether a path it would visit is visited already, so the result is the same whatever file includes
    the header, for the same include directories, the same build macros the headers it reads mention
    (``key``: those of the build, in its order; ``names``: every name their directives mention) and
    the same answer to which of the paths it asks about (``asked``) are visited already (``before``).
    Replayed by :meth:`_Walk.visit` instead of walking the headers again."""

    names: frozenset[str]
    key: tuple
    asked: frozenset[str]  # every path the walk below the header (and the header) asked to visit
    before: frozenset[str]  # those visited already when it began
    files: tuple[tuple[str, str], ...]  # appended to the walk's, in order
    visited: frozenset[str]
    state: dict  # name -> value, in the order of the first change (assigned in this order)
    pops: frozenset[str]  # macros removed (by an #undef the walk ended with)
    sets: dict  # macros (re)defined last, in the order of their last definition
    uncertain: frozenset[str]
    unresolved: tuple[str, ...]
    unread: bool
    depth: int  # the deepest include below the header (0: none)
    bytes: int
    deps: frozenset[str] | None  # the paths consulted (recording), None when not recorded


#: Files whose live #include lines are kept (Project._includer_includes): a run's sources are planned
#: first, then the headers analysed in their context (in path order, not grouped by includer)
_MAX_INCLUDER_SCANS = 8192

#: Summaries kept per header and include directories (each for other build macros)
_MAX_SUMMARIES = 8


class _Walk:
    """One depth-first walk over a file's includes, accumulating the headers' macros.

    A header visited again by a later file (or a later walk of the same file) whose own includes read
    the same build macros is not walked again: :class:`_Summary` replays what it did, when the walk
    is in the state the summary was taken in (the same of the paths it asks about visited already,
    not the header to stop before, no bound reached on the way), which gives the same files, macros
    and state in the same order."""

    def __init__(self, project: Project, dirs: tuple[str, ...], system: tuple[str, ...], build: tuple) -> None:
        self.project = project
        self.dirs = dirs
        self.system = system
        self.build = build
        self.visited: set[str] = set()
        self.files: list[tuple[str, str]] = []
        self.unresolved: list[str] = []
        self.macros: dict[str, MacroDef] = {}
        self.state: dict[str, str | None] = {}
        self.uncertain: set[str] = set()
        self.bytes = 0
        self.truncated = False
        self.unread = False  # a project header found nowhere or unreadable (FileContext.unread)
        self.stop: str | None = None  # a header to stop before (the one analysed in an includer's context)
        self.stopped = False
        # summaries (not for a project that reads files again)
        self.table = dict(build)
        self.memo = project._cache_reads and len(self.table) == len(build)
        self._pos = {k: i for i, k in enumerate(self.table)}
        self._special = tuple(k for k in self.table if k.startswith("\0"))
        # names -> the build macros they keep (shared by the walks with the same build macros)
        self._keys: dict[frozenset, tuple] = project._walk_keys.setdefault(build, {}) if self.memo else {}
        self._log: list = []  # what the visits did, in order: _Header, _Summary, or (name | None, unread)
        self._asked: list = []  # the paths asked to visit: a path, or a summary's ``asked``
        self._cuts = 0  # bounds reached
        self._deepest = 0

    def _key(self, names: frozenset[str]) -> tuple:
        """The build macros a walk mentioning ``names`` reads, in the build's order."""
        got = self._keys.get(names)
        if got is None:
            pos, table = self._pos, self.table
            got = self._keys[names] = tuple((k, table[k]) for k in sorted(_kept(table, names, self._special),
                                                                          key=pos.__getitem__))
        return got

    def apply_delta(self, delta: Mapping[str, object]) -> None:
        from shaderlint.languages.conditions import UNKNOWN

        for k, v in delta.items():
            self.state[k] = UNKNOWN_STATE if v is UNKNOWN else v  # type: ignore[assignment]
            if v is None:
                self.macros.pop(k, None)

    def visit(self, path: str, depth: int) -> None:
        if self.stopped:
            return
        memo = self.memo
        if memo:
            self._asked.append(path)
        if path in self.visited:
            return
        if path == self.stop:
            self.stopped = True
            return
        known = False  # a summary for this state is kept already (not replayed: a bound)
        if memo:
            for s in self.project._summaries.get((path, self.dirs, self.system), ()):
                if s.key == self._key(s.names) and s.asked.intersection(self.visited) == s.before \
                        and (self.stop is None or self.stop not in s.asked):
                    if self._replay(s, depth):
                        return
                    known = known or s.deps is not None or self.project._deps is None
        if depth > MAX_DEPTH or len(self.files) >= MAX_FILES:
            self.truncated = True
            self._cuts += 1
            return
        if depth > self._deepest:
            self._deepest = depth
        data = self.project.read(path)
        if data is None:
            self.unread = True
            self._log.append((None, True))
            return
        if self.bytes + len(data) > MAX_BYTES:
            self.truncated = True
            self._cuts += 1
            return
        memo = memo and not known
        self.visited.add(path)
        start, log_start, asked, cuts, bytes0 = len(self.files), len(self._log), len(self._asked) - 1, self._cuts, \
            self.bytes
        deepest, self._deepest = self._deepest, depth
        outer = self.project._deps
        if memo and outer is not None:
            self.project._deps = set()
        try:
            self.bytes += len(data)
            h = self.project.header(path, data, self.build, self.table)
            self.files.append((path, h.digest))
            for inc, target in self.project.targets(h, self.dirs, self.system):
                if target is None:
                    self.missing(inc)
                    continue
                self.visit(target, depth + 1)
                if self.stopped:
                    return
            self.apply_delta(h.delta)
            for k, d in h.macros.items():
                self.macros.pop(k, None)  # the later definition comes later in the order
                self.macros[k] = d
            self.uncertain.update(h.uncertain)
            self._log.append(h)
            if memo and self._cuts == cuts:
                self._summarize(path, start, log_start, asked, depth, self.bytes - bytes0,
                                frozenset(self.project._deps) if outer is not None else None)
        finally:
            self._deepest = max(deepest, self._deepest)
            if memo and outer is not None:
                outer.update(self.project._deps)
                self.project._deps = outer

    def _summarize(self, path: str, start: int, log_start: int, asked_start: int, depth: int, nbytes: int,
                   deps: frozenset[str] | None) -> None:
        """Keep what visiting ``path`` did (its files from ``start``, its log from ``log_start``, the
        paths it asked about from ``asked_start``)."""
        asked: set[str] = set()
        for a in self._asked[asked_start:]:
            if isinstance(a, str):
                asked.add(a)
            else:
                asked |= a
        fasked = frozenset(asked)
        state: dict = {}
        pops: set[str] = set()
        sets: dict = {}
        uncertain: set[str] = set()
        unresolved: list[str] = []
        unread = False
        names: set[str] = set()
        mentions = self.project._mentions
        for u in self._log[log_start:]:
            if isinstance(u, _Header):
                names |= mentions[u.digest]
                for k, v in u.delta.items():
                    state[k] = v
                    if v is None:
                        sets.pop(k, None)
                        pops.add(k)
                for k, d in u.macros.items():
                    sets.pop(k, None)
                    sets[k] = d
                    pops.discard(k)
                uncertain |= u.uncertain
            elif isinstance(u, _Summary):
                names |= u.names
                for k, v in u.state.items():
                    state[k] = v
                for k in u.pops:
                    sets.pop(k, None)
                    pops.add(k)
                for k, d in u.sets.items():
                    sets.pop(k, None)
                    sets[k] = d
                    pops.discard(k)
                uncertain |= u.uncertain
                unresolved.extend(u.unresolved)
                unread = unread or u.unread
            else:
                name, flag = u
                if name is not None:
                    unresolved.append(name)
                unread = unread or flag
        fnames = frozenset(names)
        files = tuple(self.files[start:])
        read = frozenset(p for p, _ in files)
        visited = self.visited  # (those visited when the header's visit began, and those it read)
        before = frozenset(p for p in fasked if p in visited and p not in read)
        s = _Summary(fnames, self._key(fnames), fasked, before, files, read, state, frozenset(pops), sets,
                     frozenset(uncertain), tuple(unresolved), unread, self._deepest - depth, nbytes, deps)
        kept = self.project._summaries.setdefault((path, self.dirs, self.system), [])
        kept[:] = [k for k in kept if k.key != s.key or k.names != s.names or k.asked != s.asked
                   or k.before != s.before][-(_MAX_SUMMARIES - 1):]
        kept.append(s)

    def _replay(self, s: _Summary, depth: int) -> bool:
        """Do what ``s`` says visiting its header does, when the walk is in a state where that holds
        (else False: the header is walked)."""
        if depth + s.depth > MAX_DEPTH or len(self.files) + len(s.files) >= MAX_FILES \
                or self.bytes + s.bytes > MAX_BYTES:
            return False
        deps = self.project._deps
        if deps is not None:
            if s.deps is None:
                return False
            deps.update(s.deps)
        self.files.extend(s.files)
        self.visited.update(s.visited)
        self._asked.append(s.asked)
        self.bytes += s.bytes
        self._deepest = max(self._deepest, depth + s.depth)
        self.state.update(s.state)  # (a name set already keeps its place, a new one comes in order)
        macros = self.macros
        for k in s.pops & macros.keys():
            del macros[k]
        for k in macros.keys() & s.sets.keys():
            del macros[k]  # (then defined again, last, in the order of their last definitions)
        macros.update(s.sets)
        self.uncertain.update(s.uncertain)
        self.unresolved.extend(s.unresolved)
        self.unread = self.unread or s.unread
        self._log.append(s)
        return True

    def missing(self, inc: Include, header: bool = True) -> bool:
        """``inc`` (of a header; else of the file itself) was not found: whether it is a project
        header, whose macros are unknown (``unread``, for a header's include). ``<name.h>`` with no
        directory is a system header (``<intrin.h>``, ``<endian.h>``, ``<cxxabi.h>``, ``<ciso646>``):
        like the toolkit's, its macros are the platform's (conditions.may_be_predefined)."""
        if is_toolkit(inc.name):
            return False
        if not inc.quoted and "/" not in inc.name:
            return False
        self.unread = self.unread or header
        if inc.quoted:
            self.unresolved.append(inc.name)
        self._log.append((inc.name if inc.quoted else None, header))
        return True


def build_predefined(settings, language: str | None, flags: Flags | None) -> tuple:
    """The macros the build defines before a file: ``__CUDA_ARCH__`` from the configured target (else
    the single architecture of the compile command), the compile command's ``-D`` and ``-U`` in order,
    then the ``defines`` setting (the user's word wins)."""
    from shaderlint.languages.conditions import OPAQUE, parse_define, predefined

    target = getattr(settings, "target", None)
    defines = tuple(getattr(settings, "defines", ()) or ())
    if flags is None:
        return predefined(language or "", target, defines)
    if target is None and flags.arch is not None and flags.arch.startswith("sm_"):
        target = flags.arch
    out = dict(predefined(language or "", target, ()))
    if language == "cuda" and target is not None and out.get("__CUDA_ARCH__") == OPAQUE and flags.arch:
        m = re.fullmatch(r"sm_(\d+)(\d)[a-z]?", flags.arch)
        if m:  # an architecture shaderlint has no target profile for: its value is still known
            out["__CUDA_ARCH__"] = str(int(m.group(1)) * 100 + int(m.group(2)) * 10)
    for d in flags.defines:
        got = parse_define(d)
        if got is not None:
            out[got[0]] = got[1]
    for u in flags.undefines:
        out[u.strip()] = None
    for d in defines:
        got = parse_define(d)
        if got is not None:
            out[got[0]] = got[1]
    return tuple(out.items())


def defines_complete(settings, context: FileContext | None) -> bool:
    """Whether the build's defines are complete for the file (:data:`shaderlint.languages.conditions.COMPLETE`):
    the ``defines-complete`` setting, by default true when the flags come from a compile command
    (``compile_commands.json`` lists every ``-D`` of the compile) — and in either case only when the
    context read every project header the file includes (a header not read may define anything)."""
    if context is None or context.unread:
        return False
    said = getattr(settings, "defines_complete", None)
    return context.flags is not None if said is None else bool(said)


def context_predefined(build: tuple, context: FileContext | None, complete: bool = False) -> tuple:
    """The build's macros with the headers' on top (``#if`` decisions): a name a header leaves
    unknown is unknown. ``complete`` (:func:`defines_complete`): every other name is undefined."""
    if context is None or (not context.state and not complete):
        return build
    from shaderlint.languages.conditions import COMPLETE

    out = {COMPLETE: "1"} if complete else {}
    out.update(build)
    for k, v in context.state:
        if v == UNKNOWN_STATE and not complete:
            out.pop(k, None)
        else:
            out[k] = v  # (complete: UNKNOWN_STATE is conditions.UNSET, unknown)
    return tuple(out.items())


def included_headers(contexts: Iterable[FileContext]) -> list[str]:
    """Every header the contexts read, in first-seen order."""
    out: dict[str, None] = {}
    for c in contexts:
        for p, _ in c.files:
            out.setdefault(p, None)
    return list(out)


__all__ = ["CompileDB", "FileContext", "Flags", "Include", "Project", "build_predefined", "context_predefined",
           "defines_complete",
           "is_toolkit", "parse_flags"]
