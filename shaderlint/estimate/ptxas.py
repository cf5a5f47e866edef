"""Exact register, stack and shared-memory figures from NVIDIA's compiler.

For CUDA the linter can ask the real compiler instead of estimating:
``nvcc -arch=ARCH -Xptxas -v -c FILE -o /dev/null`` makes ptxas print, for each
entry function (``__global__`` kernel)::

    ptxas info    : Compiling entry function '_Z4axpyfPKfPfi' for 'sm_80'
    ptxas info    : Function properties for _Z4axpyfPKfPfi
        0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 10 registers, used 0 barriers, 380 bytes cmem[0]

and "N bytes smem" when the kernel declares static ``__shared__`` memory
(dynamic ``extern __shared__`` memory is sized at launch and never appears).
These numbers are measured, not estimated: they are what the hardware will
allocate. They are the ground truth the register estimator is calibrated
against (``bench/calibration/``).

Names: ptxas prints mangled symbols. They are demangled with ``cu++filt`` when
it is on PATH, else with binutils' ``c++filt`` (CUDA uses the Itanium C++ ABI),
else left as they are. ``PtxasKernel.name`` is the unqualified base name
(``ns::saxpy`` -> ``saxpy``, ``void tile<8>(float*)`` -> ``tile``) used to match
a kernel in the source; ``demangled`` keeps the full signature so template
instances stay distinct. The result is keyed by the mangled symbol.

Errors never raise: :func:`compile_ptxas` returns a :class:`PtxasResult` (a
dict of kernels) whose ``error`` holds the compiler's message when nvcc is
missing, times out or rejects the file; kernels that ptxas did report before a
failure are kept.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from shaderlint.estimate import contentcache

DEFAULT_TIMEOUT = 120.0

_ENTRY = re.compile(r"Compiling entry function '(?P<name>[^']+)' for '(?P<arch>[^']+)'")
_PROPERTIES = re.compile(r"Function properties for (?P<name>\S+)")
_FRAME = re.compile(
    r"(?P<stack>\d+) bytes stack frame, (?P<stores>\d+) bytes spill stores, "
    r"(?P<loads>\d+) bytes spill loads"
)
_USED = re.compile(r"Used (?P<regs>\d+) registers")
_BARRIERS = re.compile(r"used (?P<n>\d+) barriers")
_SMEM = re.compile(r"(?P<n>\d+) bytes smem")
_CMEM0 = re.compile(r"(?P<n>\d+) bytes cmem\[0\]")


@dataclass(frozen=True)
class PtxasKernel:
    """ptxas's resource report for one entry function."""

    #: Unqualified source name (``saxpy``).
    name: str
    #: Full demangled signature (``void tile<8>(float*)``), or the symbol.
    demangled: str
    #: Mangled symbol as ptxas printed it.
    mangled: str
    arch: str
    registers: int
    stack_bytes: int
    spill_store_bytes: int
    spill_load_bytes: int
    #: Static shared memory per block, bytes.
    shared_bytes: int
    barriers: int
    #: Kernel parameter constant bank, bytes (0 when not printed).
    cmem_bytes: int = 0


class PtxasResult(dict[str, PtxasKernel]):
    """Kernels keyed by mangled symbol, plus how the compile went."""

    def __init__(
        self,
        kernels: dict[str, PtxasKernel] | None = None,
        *,
        arch: str,
        error: str | None = None,
        log: str = "",
        command: Sequence[str] = (),
    ) -> None:
        super().__init__(kernels or {})
        self.arch = arch
        #: None on success, else the reason the compile failed.
        self.error = error
        #: The compiler's complete stderr/stdout.
        self.log = log
        self.command = tuple(command)
        #: True when the result came from the content cache (no compile).
        self.cached = False

    @property
    def ok(self) -> bool:
        return self.error is None

    def by_name(self, name: str) -> list[PtxasKernel]:
        """Every kernel (template instances included) whose base name is ``name``."""
        return [k for k in self.values() if k.name == name]


def nvcc_path() -> str | None:
    """Location of nvcc, or None."""
    return shutil.which("nvcc")


def ptxas_available() -> bool:
    """True when nvcc (and so ptxas) is on PATH."""
    return nvcc_path() is not None


def nvcc_version() -> str | None:
    """``nvcc --version``'s last line with nvcc's path (what a cached result depends on), or None."""
    nvcc = nvcc_path()
    if nvcc is None:
        return None
    try:
        proc = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    return f"{nvcc}: {lines[-1] if lines else proc.returncode}"


# --------------------------------------------------------------------------
# Demangling


def demangle(symbols: Iterable[str]) -> dict[str, str]:
    """Map each symbol to its demangled form (itself when it cannot be)."""
    names = list(dict.fromkeys(symbols))
    result = {s: s for s in names}
    mangled = [s for s in names if s.startswith("_Z")]
    if not mangled:
        return result
    tool = shutil.which("cu++filt") or shutil.which("c++filt")
    if tool is None:
        return result
    try:
        proc = subprocess.run(
            [tool],
            input="\n".join(mangled) + "\n",
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return result
    lines = proc.stdout.splitlines()
    if proc.returncode == 0 and len(lines) == len(mangled):
        for symbol, text in zip(mangled, lines):
            result[symbol] = text.strip() or symbol
    return result


def _match_back(text: str, end: int, open_ch: str, close_ch: str) -> int:
    """Index of the bracket opening the one that closes at ``end``."""
    depth = 0
    for i in range(end, -1, -1):
        if text[i] == close_ch:
            depth += 1
        elif text[i] == open_ch:
            depth -= 1
            if depth == 0:
                return i
    return -1


def base_name(demangled: str) -> str:
    """Unqualified function name of a demangled signature.

    ``void ns::tile<8, float>(float*, int)`` -> ``tile``;
    ``(anonymous namespace)::k(int)`` -> ``k``; a plain ``cfun`` stays.
    """
    text = demangled.strip()
    if text.endswith(")"):
        start = _match_back(text, len(text) - 1, "(", ")")
        if start > 0:
            text = text[:start].rstrip()
    if text.endswith(">"):
        start = _match_back(text, len(text) - 1, "<", ">")
        if start > 0:
            text = text[:start].rstrip()
    # Cut at the last top-level "::" or space (return type, qualifiers).
    depth = 0
    cut = 0
    for i, ch in enumerate(text):
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        elif depth == 0 and ch == " ":
            cut = i + 1
        elif depth == 0 and text.startswith("::", i):
            cut = i + 2
    return text[cut:] or demangled


# --------------------------------------------------------------------------
# Parsing


def parse_ptxas_log(log: str, demangled: dict[str, str] | None = None) -> dict[str, PtxasKernel]:
    """Kernels described by ``-Xptxas -v`` output, keyed by mangled symbol.

    Only entry functions are returned; device functions' "Function properties"
    blocks are skipped. ``demangled`` maps symbols to signatures (default:
    demangle the symbols found).
    """
    records: dict[str, dict[str, int | str]] = {}
    current: str | None = None  # entry whose "Used" line is next
    frame_for: str | None = None  # function whose frame line is next
    for line in log.splitlines():
        entry = _ENTRY.search(line)
        if entry:
            current = entry["name"]
            records[current] = {
                "arch": entry["arch"],
                "registers": 0,
                "stack": 0,
                "stores": 0,
                "loads": 0,
                "smem": 0,
                "barriers": 0,
                "cmem": 0,
            }
            continue
        props = _PROPERTIES.search(line)
        if props:
            frame_for = props["name"]
            continue
        frame = _FRAME.search(line)
        if frame:
            if frame_for in records:
                rec = records[frame_for]
                rec["stack"] = int(frame["stack"])
                rec["stores"] = int(frame["stores"])
                rec["loads"] = int(frame["loads"])
            frame_for = None
            continue
        used = _USED.search(line)
        if used and current in records:
            rec = records[current]
            rec["registers"] = int(used["regs"])
            if m := _BARRIERS.search(line):
                rec["barriers"] = int(m["n"])
            if m := _SMEM.search(line):
                rec["smem"] = int(m["n"])
            if m := _CMEM0.search(line):
                rec["cmem"] = int(m["n"])
            current = None
    names = demangled if demangled is not None else demangle(records)
    kernels: dict[str, PtxasKernel] = {}
    for symbol, rec in records.items():
        full = names.get(symbol, symbol)
        kernels[symbol] = PtxasKernel(
            name=base_name(full),
            demangled=full,
            mangled=symbol,
            arch=str(rec["arch"]),
            registers=int(rec["registers"]),
            stack_bytes=int(rec["stack"]),
            spill_store_bytes=int(rec["stores"]),
            spill_load_bytes=int(rec["loads"]),
            shared_bytes=int(rec["smem"]),
            barriers=int(rec["barriers"]),
            cmem_bytes=int(rec["cmem"]),
        )
    return kernels


# --------------------------------------------------------------------------
# Running the compiler


def _looks_like_path(value: str | os.PathLike[str]) -> bool:
    if isinstance(value, os.PathLike):
        return True
    if "\n" in value or len(value) >= 4096:
        return False
    return os.path.isfile(value) or value.endswith((".cu", ".cuh"))


def compile_ptxas(
    path_or_source: str | os.PathLike[str],
    arch: str = "sm_80",
    extra_flags: Sequence[str] = (),
    timeout: float = DEFAULT_TIMEOUT,
    *,
    device_only: bool = False,
    cache_dir: str | None = None,
) -> PtxasResult:
    """Compile one CUDA file (or source text) and return ptxas's per-kernel report.

    A ``Path``, a string naming an existing file or a one-line string ending
    in ``.cu``/``.cuh`` is a file, compiled in place (its directory is on the
    include path); any other string is CUDA source, written to a temporary
    ``.cu`` file. ``device_only`` compiles with ``-cubin`` instead of ``-c``: the
    same ptxas report without the host compilation (about a third of the time;
    host-only code is then not checked). Never raises for compiler
    problems: see ``PtxasResult.error``.

    ``cache_dir``: ``"default"`` caches the result by content
    (:mod:`shaderlint.estimate.contentcache`, kind ``ptxas``): the source text,
    the arch, the flags, ``device_only``, nvcc's version, and every header the
    compile read (nvcc's ``-MD`` depfile) with its size and modification time.
    A compile that stopped before its headers were all read (a missing header,
    a timeout) is not cached. None (the default) compiles every time.
    """
    nvcc = nvcc_path()
    if nvcc is None:
        return PtxasResult(arch=arch, error="nvcc not found on PATH")
    named: Path | None = None
    if _looks_like_path(path_or_source):
        named = Path(path_or_source).resolve()
        try:
            text = named.read_bytes()
        except OSError:
            return PtxasResult(arch=arch, error=f"no such file: {named}")
    else:
        text = str(path_or_source).encode("utf-8")
    directory = contentcache.cache_directory("ptxas", cache_dir) if cache_dir is not None else None
    key = None
    if directory is not None:
        key = _cache_key(nvcc, text, arch, extra_flags, device_only, named)
        hit = _cache_get(directory, key)
        if hit is not None:
            return hit
    with tempfile.TemporaryDirectory(prefix="shaderlint-ptxas-") as tmp:
        if named is not None:
            source = named
        else:
            source = Path(tmp) / "kernel.cu"
            source.write_bytes(text)
        depfile = Path(tmp) / "kernel.d"
        command = [
            nvcc,
            f"-arch={arch}",
            "-Xptxas",
            "-v",
            "-I",
            str(source.parent),
            *extra_flags,
            *(("-MD", "-MF", str(depfile)) if key is not None else ()),
            "-cubin" if device_only else "-c",
            str(source),
            "-o",
            os.devnull,
        ]
        try:
            proc = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=tmp,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            log = _text(exc.stderr) + _text(exc.stdout)
            return PtxasResult(
                parse_ptxas_log(log),
                arch=arch,
                error=f"nvcc timed out after {timeout:g} s",
                log=log,
                command=command,
            )
        except OSError as exc:
            return PtxasResult(arch=arch, error=f"could not run nvcc: {exc}", command=command)
        deps = None
        if key is not None:
            bases = [Path(tmp), source.parent, *map(Path, _include_dirs(extra_flags))]
            deps = contentcache.depfile_paths(depfile, bases, exclude=(tmp, str(source)))
    log = proc.stderr + proc.stdout
    error = None
    if proc.returncode != 0:
        error = _first_error(log) or f"nvcc exited with status {proc.returncode}"
    result = PtxasResult(parse_ptxas_log(log), arch=arch, error=error, log=log, command=command)
    if key is not None and deps is not None:
        _cache_put(directory, key, result, deps)
    return result


def cached_ptxas(source: str, arch: str = "sm_80", extra_flags: Sequence[str] = (), *,
                 device_only: bool = False) -> PtxasResult | None:
    """The content cache's result for compiling the CUDA source text ``source`` as
    ``compile_ptxas(source, arch, extra_flags, device_only=..., cache_dir="default")`` would, or None
    when it is not cached (or nvcc is missing): never compiles, so an editor can ask it at once."""
    nvcc = nvcc_path()
    if nvcc is None:
        return None
    directory = contentcache.cache_directory("ptxas", "default")
    if directory is None:
        return None
    return _cache_get(directory, _cache_key(nvcc, source.encode("utf-8"), arch, extra_flags, device_only, None))


def _cache_key(nvcc: str, text: bytes, arch: str, flags: Sequence[str], device_only: bool,
               named: Path | None) -> str:
    ident = json.dumps([CACHE_FORMAT, _identity(nvcc), arch, list(flags), device_only, str(named) if named else None])
    return hashlib.sha256(ident.encode() + b"\0" + text).hexdigest()


def _include_dirs(flags: Sequence[str]) -> list[str]:
    out = []
    for i, flag in enumerate(flags):
        if flag == "-I" and i + 1 < len(flags):
            out.append(flags[i + 1])
        elif flag.startswith("-I") and len(flag) > 2:
            out.append(flag[2:])
    return out


@functools.lru_cache(maxsize=8)
def _identity(nvcc: str) -> str:
    """What a cached result depends on about the compiler: nvcc's version (read once per process)."""
    return nvcc_version() or nvcc


# --------------------------------------------------------------------------
# Content cache

#: Bump when the cached entry's layout changes.
CACHE_FORMAT = 1
_MEMORY: dict[str, dict] = {}


def _cache_get(directory: str, key: str) -> PtxasResult | None:
    entry = _MEMORY.get(key) or contentcache.read_json(os.path.join(directory, key[:2]), key)
    if entry is None:
        return None
    try:
        if not contentcache.fresh(entry["deps"]):
            return None
        kernels = {k["mangled"]: PtxasKernel(**k) for k in entry["kernels"]}
        result = PtxasResult(kernels, arch=entry["arch"], error=entry["error"], log=entry["log"],
                             command=entry["command"])
    except (KeyError, TypeError, ValueError):
        return None
    _MEMORY[key] = entry
    result.cached = True
    return result


def _cache_put(directory: str, key: str, result: PtxasResult, deps: list[str]) -> None:
    entry = {
        "kernels": [asdict(k) for k in result.values()],
        "arch": result.arch,
        "error": result.error,
        "log": result.log,
        "command": list(result.command),
        "deps": [[p, contentcache.stamp(p)] for p in deps],
    }
    _MEMORY[key] = entry
    contentcache.write_json(os.path.join(directory, key[:2]), key, entry)


def _text(value: str | bytes | None) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _first_error(log: str) -> str | None:
    for line in log.splitlines():
        if "error" in line.lower():
            return line.strip()
    return None
