"""Kernel coverage: does ``shaderlint report`` list every kernel nvcc compiles? (issue 16's Done-when)

    python bench/kernel_coverage.py                       # 150 CUDA files of the corpus, stratified by package
    python bench/kernel_coverage.py --sample 0            # every compilable .cu file (slow: ~1 h of 2 cores)
    python bench/kernel_coverage.py --packages vllm,mmcv --jobs 2 --out /tmp/missing.tsv
    python bench/kernel_coverage.py --root /path/to/checkout   # measure another tree's shaderlint
    python bench/kernel_coverage.py --extra               # also the pinned extra projects (EXTRA below)

For ``.cu`` files of the real-code corpus (``$SHADERLINT_REALCODE_CACHE``/src/<package>/,
see bench/realcode.py) the script

1. resolves each file's ``#include``s inside its package (relative to the includer, then
   by the include's spelling anywhere in the package, the candidate nearest the includer)
   and so finds the translation unit's project headers and the ``-I`` directories nvcc
   needs; files that include torch/ATen/c10/pybind11/Python headers (not installed) are
   "not compiled" and left out before sampling;
2. compiles a sample with ``nvcc -arch=sm_90 -std=c++17 -Xptxas -v -cubin -o /dev/null``
   plus those ``-I`` and the package's row of ``PACKAGE_FLAGS`` (``-cubin``: the device
   compilation only, the same ptxas listing as ``-c`` in a third of the time: the host
   compiler is not run); a file nvcc rejects is "not compiled" (first error kept);
3. takes the kernels ptxas lists (``Compiling entry function '<mangled>'``), each reduced
   to its unqualified name (:func:`base_name` reads the Itanium mangling; template
   instances of one kernel are one kernel); kernels of the toolkit's own headers (CUB,
   Thrust, ``cuda::``, cooperative groups) are counted apart and not scored;
4. runs ``shaderlint report --format json`` of the tree being measured on each package
   directory (empty ``--config``) and matches by unqualified name: a ptxas kernel of file F
   is listed when a row of F, or of a project header F includes, has that name;
5. classifies each kernel the report misses: ``macro-generated`` (its ``__global__`` is in a
   ``#define`` body, or no literal definition exists and a ``#define`` of the translation
   unit holds ``__global__``), ``header-not-read`` (defined in an included header
   shaderlint did not read: no row and not a file shaderlint's discovery lints),
   ``header-read`` (defined in a header shaderlint read, yet no row), ``other`` (defined in
   the file itself, or no definition found).

Figures are per translation unit (a kernel of a header compiled by three sampled files
counts three times) and also as distinct (definition, name) pairs.

nvcc results are cached under ``$XDG_CACHE_HOME/shaderlint-bench/kernel-coverage/`` (default
``~/.cache``), keyed by nvcc's version, the flags and the content of the file and of every
project header it includes: a re-run compiles nothing that did not change. The report is
not cached (it is what is measured; ~1 min for the corpus).

``EXTRA`` pins sdists from PyPI with headers and macro-generated kernels beyond the corpus;
``--extra`` downloads them (pip, hash-checked) to ``$XDG_CACHE_HOME/shaderlint-bench/extra``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "realcode"))

NVCC_FLAGS = ("-arch=sm_90", "-std=c++17", "-Xptxas", "-v", "-cubin", "-o", "/dev/null")
TIMEOUT = 180  # seconds (wall) per nvcc run; longer is "not compiled (timeout)", cached with its limit

#: Extra nvcc flags per package (name as in packages.tsv), on top of the resolved -I directories:
#: what the package's build passes and the sources cannot do without.
PACKAGE_FLAGS: dict[str, tuple[str, ...]] = {
    "llama-cpp-python": ("-DGGML_USE_CUDA", "-DGGML_CUDA_USE_GRAPHS", "--extended-lambda"),  # as ggml-cuda's CMake
    "ctransformers": ("-DGGML_USE_CUBLAS",),
    "xgboost": ("-DXGBOOST_USE_CUDA=1", "--expt-extended-lambda", "--expt-relaxed-constexpr"),
    "lightgbm": ("-DUSE_CUDA",),
    "dlib": ("-DDLIB_USE_CUDA",),
}

#: Headers that are not installed: a translation unit reaching one is not compiled.
MISSING_HEADERS = re.compile(r"^(torch|ATen|c10|caffe2|THC|pybind11|Python\.h|cuda_runtime_api_dummy)(/|\.h|$)")

#: Namespaces of the toolkit's headers: their kernels are not the project's.
TOOLKIT_NAMESPACES = ("cub", "thrust", "cuda", "cooperative_groups", "nvcuda")

#: Pinned projects beyond the corpus with headers and macro-generated kernels, in packages.tsv's
#: format (name, version, sha256 of the sdist, paths pruned, note). ``--extra`` fetches them
#: (bench/realcode/fetch.py: pip, hash-checked) into ``<cache root>/extra/src/`` and adds them.
EXTRA = """\
candle-nn	0.4.2	55db19049207d958a8d2409cce678e7d527b99b1a935d3c36f6d910760fd1766	-	candle-kernels: kernels made by macros (UNARY_OP, BINARY_OP, CAST_OP ...) from .cuh headers
mistralrs	0.3.1	6fee2c0774650359a6d3cfd1074027928d1caf2b080fb065aebd130aa36d5ee6	-	paged attention, GPTQ, HQQ kernels (no torch: candle), extern "C" kernels and macro-made instances
"""

SOURCE_EXTS = (".cu",)

#: Headers of the CUDA libraries the toolkit here lacks (cuBLAS, cuRAND, cuFFT, cuSOLVER,
#: cuSPARSE, NCCL), from NVIDIA's wheels on PyPI: (name, version, sha256 of the wheel). ``--fetch-libs``
#: downloads them (pip, hash-checked) and keeps only their ``nvidia/*/include`` under the cache;
#: nvcc then gets it as ``-isystem``. Only their headers are used (-cubin: nothing is linked).
CUDA_LIB_WHEELS: tuple[tuple[str, str, str], ...] = (
    ("nvidia-cublas", "13.10.0.20", "dcc6d63884c53d07e267ce7e6feac17b2538cebaafec5db865736c3e28e4dc84"),
    ("nvidia-curand", "10.4.4.72", "25c3457ae7a224fdd484dab90b0fc5dc0e842fab5db3012afa4a5bd2af4eb7e5"),
    ("nvidia-cufft", "12.4.0.43", "0e8385013596b112d29c9ce8c63dc575b308d77636c7169104e18714f03961a8"),
    ("nvidia-cusolver", "12.4.1.2", "b3b8e02fd2f2df869369af075dc3a179d43f6f7b85e94632a7dce556697be044"),
    ("nvidia-cusparse", "12.9.4.2", "072667e58c851a318738f5527a12eb225cbf058803f2ea451c722d8cf8edddec"),
    ("nvidia-nccl-cu13", "2.32.3", "1459723080ac889d73a26edfa3e04383a7928ab31ac8f0ec43b3ea9548b04ff3"),
)


# ---- mangled names ------------------------------------------------------------------------------
def base_name(mangled: str) -> tuple[tuple[str, ...], str]:
    """(qualifiers, unqualified name) of a kernel's symbol: ``_ZN4vllm11silu_kernelIfEEvPT_`` ->
    (("vllm",), "silu_kernel"). An unmangled (``extern "C"``) name is returned as it is.

    Enough of the Itanium ABI for kernels: ``__global__`` functions are never members, so the
    name is an unscoped or nested name of namespaces (source names, ``St``, substitutions,
    ABI tags) whose last source name, before its template arguments or the end of the nested
    name, is the function's. Anything else gives (``()``, the symbol)."""
    if not mangled.startswith("_Z"):
        return (), mangled
    s, i = mangled, 2
    parts: list[str] = []

    def source_name(j: int) -> tuple[str, int] | None:
        k = j
        while k < len(s) and s[k].isdigit():
            k += 1
        if k == j:
            return None
        n = int(s[j:k])
        if n <= 0 or k + n > len(s):
            return None
        return s[k:k + n], k + n

    if s.startswith("L", i):  # internal linkage
        i += 1
    if s.startswith("N", i):
        i += 1
        while i < len(s) and s[i] in "rVKRO":  # cv- and ref-qualifiers of the nested name
            i += 1
        while i < len(s):
            c = s[i]
            if c.isdigit():
                got = source_name(i)
                if got is None:
                    return (), mangled
                parts.append(got[0])
                i = got[1]
            elif s.startswith("St", i):
                parts.append("std")
                i += 2
            elif c == "S":  # substitution of an earlier prefix: S_, S0_, SA_ ...
                j = s.find("_", i)
                if j < 0:
                    return (), mangled
                i = j + 1
            elif c == "B":  # ABI tag of the previous name
                got = source_name(i + 1)
                if got is None:
                    return (), mangled
                i = got[1]
            elif c == "L":  # internal linkage inside the nested name
                i += 1
            elif c in "IE":
                break
            else:
                return (), mangled
        if not parts:
            return (), mangled
        return tuple(parts[:-1]), parts[-1]
    if s.startswith("St", i):
        got = source_name(i + 2)
        return (("std",), got[0]) if got else ((), mangled)
    got = source_name(i)
    return ((), got[0]) if got else ((), mangled)


def report_base(kernel: str) -> str:
    """The unqualified name of a report row's kernel: ``ns::k<float, 4>`` -> ``k``."""
    name = kernel.split("<", 1)[0].strip()
    return name.rsplit("::", 1)[-1]


_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")


def parse_ptxas(text: str) -> list[str]:
    """The entry functions (kernels) of ``-Xptxas -v`` output, in order, each once."""
    seen: dict[str, None] = {}
    for m in _ENTRY.finditer(text):
        seen.setdefault(m.group(1), None)
    return list(seen)


def demangle_all(names: list[str]) -> dict[str, str]:
    """Readable names for display: cu++filt, else c++filt, else the symbols themselves."""
    import shutil

    for tool in ("cu++filt", "c++filt"):
        exe = shutil.which(tool)
        if exe and names:
            try:
                out = subprocess.run([exe], input="\n".join(names) + "\n", capture_output=True, text=True,
                                     timeout=60).stdout.splitlines()
            except (OSError, subprocess.SubprocessError):
                continue
            if len(out) == len(names):
                return dict(zip(names, out))
    return {n: n for n in names}


# ---- sources: comments, #define bodies, kernel definitions ----------------------------------------
_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def blank_comments(text: str) -> str:
    """Comments replaced by spaces (newlines and line continuations kept): same length, same lines."""
    def sub(m: re.Match) -> str:
        t = m.group(0)
        if t.startswith(("//", "/*")):
            return re.sub(r"[^\n]", " ", t)
        return t
    return _COMMENT_OR_STRING.sub(sub, text)


_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(?:[^\n\\]|\\\r?\n|\\)*", re.M)
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)


def define_spans(clean: str) -> list[tuple[int, int, str]]:
    """(start, end, macro name) of every ``#define`` of a :func:`blank_comments` text."""
    return [(m.start(), m.end(), m.group(1)) for m in _DEFINE.finditer(clean)]


def find_kernel_definitions(clean: str, name: str) -> list[tuple[int, bool]]:
    """(offset, inside a #define) of each definition of ``__global__`` function ``name`` in a
    :func:`blank_comments` text: the name, optional template arguments, a parameter list
    followed by ``{``, and ``__global__`` earlier in the same declaration."""
    out = []
    defines = None
    text, clean = clean, clean.replace("\\\n", " \n")  # continuations as blanks; offsets kept
    for m in re.finditer(r"\b" + re.escape(name) + r"\s*(?:<[^;{}()]*>\s*)?\(", clean):
        # the parameter list, balanced
        depth, j = 0, m.end() - 1
        while j < len(clean):
            c = clean[j]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    break
            elif c in ";{}":
                break
            j += 1
        if j >= len(clean) or clean[j] != ")":
            continue
        rest = clean[j + 1:j + 200].lstrip()
        rest = re.sub(r"^(?:const\b|noexcept\b|__attribute__\s*\(\([^)]*\)\))\s*", "", rest)
        if not rest.startswith("{"):
            continue
        k = max(clean.rfind(";", 0, m.start()), clean.rfind("}", 0, m.start()), clean.rfind("{", 0, m.start()))
        line_start = clean.rfind("\n", 0, m.start()) + 1
        head = clean[k + 1:m.start()]
        if not re.search(r"\b__global__\b", head):
            continue
        if defines is None:
            defines = define_spans(text)
        in_define = any(a <= m.start() < b for a, b, _ in defines) or clean[line_start:m.start()].lstrip().startswith("#")
        out.append((m.start(), in_define))
    return out


def kernel_macros(clean: str) -> list[str]:
    """Names of the macros whose body holds ``__global__``."""
    return [n for a, b, n in define_spans(clean) if re.search(r"\b__global__\b", clean[a:b])]


# ---- include resolution inside a package ---------------------------------------------------------
def system_include_dirs(nvcc: str = "nvcc") -> list[str]:
    """The toolkit's and the host compiler's include directories (where ``<...>`` looks first)."""
    import glob

    out = []
    try:  # nvcc's own include directories, as its dry run prints them
        dry = subprocess.run([nvcc, "--dryrun", "-x", "cu", "-c", os.devnull, "-o", os.devnull],
                             capture_output=True, text=True, timeout=60)
        for m in re.finditer(r'^#\$ (?:SYSTEM_)?INCLUDES=(.*)$', dry.stdout + dry.stderr, re.M):
            for tok in shlex.split(m.group(1)):
                tok = tok[2:] if tok.startswith("-I") else tok
                if tok and not tok.startswith("-"):
                    out.append(os.path.normpath(tok))
    except (OSError, subprocess.SubprocessError, ValueError):
        pass
    out += sorted(glob.glob("/usr/include/c++/*")) + sorted(glob.glob("/usr/include/*-linux-gnu/c++/*"))
    out += sorted(glob.glob("/usr/lib/gcc/*/*/include")) + sorted(glob.glob("/usr/include/*-linux-gnu"))
    out += ["/usr/local/include", "/usr/include"]
    return [d for d in out if os.path.isdir(d)]


class PackageTree:
    """The files of one package, for resolving ``#include`` spellings to paths and -I dirs.
    ``system``: directories searched first for ``<...>`` and last for ``"..."`` (a header
    found there is the toolkit's or the C++ library's, not the project's)."""

    def __init__(self, root: str, system: list[str] | tuple[str, ...] = ()) -> None:
        self.root = root
        self.system = tuple(system)
        self._sys: dict[str, bool] = {}
        self.by_base: dict[str, list[str]] = defaultdict(list)
        for d, dirs, files in os.walk(root):
            dirs.sort()
            for f in sorted(files):
                self.by_base[f].append(os.path.join(d, f))
        self._text: dict[str, str] = {}
        self._includes: dict[str, list[tuple[bool, str]]] = {}

    def text(self, path: str) -> str:
        if path not in self._text:
            try:
                with open(path, "rb") as fh:
                    self._text[path] = blank_comments(fh.read().decode("utf-8", "replace"))
            except OSError:
                self._text[path] = ""
        return self._text[path]

    def includes(self, path: str) -> list[tuple[bool, str]]:
        """(angled, spelling) of each #include of a file."""
        if path not in self._includes:
            self._includes[path] = [(m.group(1) == "<", m.group(2).strip()) for m in _INCLUDE.finditer(self.text(path))]
        return self._includes[path]

    def is_system(self, spelling: str) -> bool:
        if spelling not in self._sys:
            self._sys[spelling] = any(os.path.isfile(os.path.join(d, spelling)) for d in self.system)
        return self._sys[spelling]

    def resolve(self, includer: str, spelling: str, angled: bool) -> tuple[str, str] | None:
        """(path, -I directory or "" when relative to the includer) of an include in the package."""
        if not angled:
            p = os.path.normpath(os.path.join(os.path.dirname(includer), spelling))
            if os.path.isfile(p):
                return p, ""
        elif self.is_system(spelling):
            return None
        parts = spelling.replace("\\", "/").split("/")
        if ".." in parts:
            return None
        suffix = "/" + "/".join(parts)
        cands = [c for c in self.by_base.get(parts[-1], ()) if c.replace(os.sep, "/").endswith(suffix)]
        if not cands:
            return None
        here = os.path.dirname(includer)
        best = max(cands, key=lambda c: (len(os.path.commonpath([here, c])), -len(c)))
        return best, best[:-len(suffix)] or "/"


@dataclass
class Unit:
    """A translation unit: a .cu file, the project headers it reaches, the -I it needs."""
    package: str
    path: str
    headers: list[str] = field(default_factory=list)
    include_dirs: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # includes of MISSING_HEADERS


def scan_unit(tree: PackageTree, package: str, path: str, max_files: int = 2000) -> Unit:
    """The unit of ``path``: project headers reached (every ``#include``, live or not: conditions are
    not evaluated) and the -I directories they need. A directory that would shadow a toolkit or
    system header the unit includes (``vendors/cuda.h`` against ``<cuda.h>``) is not added."""
    unit = Unit(package, path)
    seen = {path}
    todo = [path]
    dirs: dict[str, None] = {}
    system: set[str] = set()
    while todo and len(seen) < max_files:
        cur = todo.pop(0)
        for angled, spelling in tree.includes(cur):
            if MISSING_HEADERS.match(spelling):
                if spelling not in unit.missing:
                    unit.missing.append(spelling)
                continue
            got = tree.resolve(cur, spelling, angled)
            if got is None or got[0] == cur:  # <musa.h> inside vendors/musa.h is the SDK's, not itself
                if tree.is_system(spelling):
                    system.add(spelling)
                continue
            hp, idir = got
            if idir and idir != os.path.dirname(path):
                dirs.setdefault(idir, None)
            if hp not in seen:
                seen.add(hp)
                unit.headers.append(hp)
                todo.append(hp)
    unit.include_dirs = [d for d in dirs if not any(os.path.isfile(os.path.join(d, s)) for s in system)]
    return unit


# ---- nvcc with a content cache ---------------------------------------------------------------------
def cache_root() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "shaderlint-bench")


def lib_include_dir() -> str:
    return os.path.join(cache_root(), "cuda-libs", "include")


def fetch_libs() -> str:
    """Download CUDA_LIB_WHEELS (hash-checked) and extract their headers; the include directory."""
    import zipfile

    dest = lib_include_dir()
    wheels = os.path.join(cache_root(), "cuda-libs", "wheels")
    os.makedirs(wheels, exist_ok=True)
    os.makedirs(dest, exist_ok=True)
    for name, version, sha in CUDA_LIB_WHEELS:
        stem = name.replace("-", "_") + "-" + version + "-"
        have = [f for f in os.listdir(wheels) if f.startswith(stem) and f.endswith(".whl")]
        if not have:
            with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as req:
                req.write(f"{name}=={version}" + (f" --hash=sha256:{sha}" if sha else "") + "\n")
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-d", wheels,
                   "-r", req.name] + (["--require-hashes"] if sha else [])
            subprocess.run(cmd, check=True)
            os.unlink(req.name)
            have = [f for f in os.listdir(wheels) if f.startswith(stem) and f.endswith(".whl")]
        whl = os.path.join(wheels, have[0])
        with open(whl, "rb") as fh:
            got = hashlib.sha256(fh.read()).hexdigest()
        if sha and got != sha:
            raise SystemExit(f"{whl}: sha256 {got}, expected {sha}")
        with zipfile.ZipFile(whl) as z:
            for info in z.infolist():
                parts = info.filename.split("/")
                if len(parts) >= 4 and parts[0] == "nvidia" and parts[2] == "include" and not info.is_dir():
                    out = os.path.join(dest, *parts[3:])
                    os.makedirs(os.path.dirname(out), exist_ok=True)
                    with z.open(info) as src, open(out, "wb") as fh:
                        fh.write(src.read())
        print(f"{name} {version}: headers in {dest} (wheel sha256 {got})", file=sys.stderr)
    return dest


def nvcc_version(nvcc: str) -> str:
    try:
        return subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def nvcc_command(nvcc: str, unit: Unit, libs: str | None = None) -> list[str]:
    flags = [nvcc, *NVCC_FLAGS]
    if libs:
        flags += ["-isystem", libs]
    for d in unit.include_dirs:
        flags.append("-I" + d)
    flags.extend(PACKAGE_FLAGS.get(unit.package, ()))
    flags.append(unit.path)
    return flags


def unit_key(cmd: list[str], unit: Unit, version: str) -> str:
    """The cache key: nvcc's version, the command, the library headers' pins, the unit's files."""
    h = hashlib.sha256(version.encode() + b"\0" + "\0".join(cmd).encode() + b"\0" + repr(CUDA_LIB_WHEELS).encode())
    for p in [unit.path, *sorted(unit.headers)]:
        try:
            with open(p, "rb") as fh:
                h.update(p.encode() + b"\0" + hashlib.sha256(fh.read()).digest())
        except OSError:
            h.update(p.encode() + b"\0-")
    return h.hexdigest()[:32]


def compile_unit(nvcc: str, unit: Unit, version: str, cache: str | None, timeout: int = TIMEOUT,
                 libs: str | None = None) -> dict:
    """{"ok", "entries", "error", "seconds", "cached", "command"} for one unit, from the cache if there."""
    cmd = nvcc_command(nvcc, unit, libs)
    key = unit_key(cmd, unit, version)
    path = os.path.join(cache, key + ".json") if cache else None
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        if not doc.get("timed_out") or doc.get("timeout", 0) >= timeout:  # a timeout holds for shorter limits
            doc["cached"] = True
            return doc
    out, code, cpu = run_measured(cmd, os.path.dirname(unit.path), timeout)
    ok = code == 0
    error = "" if ok else (f"timeout after {timeout} s" if code is None else first_error(out))
    doc = {"ok": ok, "entries": parse_ptxas(out) if ok else [], "error": error,
           "errors": [] if ok else [ln.strip()[:300] for ln in out.splitlines() if "error" in ln.lower()][:10],
           "seconds": round(cpu, 2), "command": [os.path.basename(cmd[0]), *cmd[1:]],
           "timed_out": code is None, "timeout": timeout}
    if path:
        os.makedirs(cache, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(doc, fh)
        os.replace(tmp, path)
    doc["cached"] = False
    return doc


def run_measured(cmd: list[str], cwd: str, timeout: float) -> tuple[str, int | None, float]:
    """(stdout and stderr, exit code or None on timeout, CPU seconds of the process and the children it
    waited for): ``os.wait4``'s own figure, right with several compilations running at once."""
    import signal
    import threading

    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    timed_out = []

    def kill() -> None:
        timed_out.append(True)
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # nvcc's own process group (start_new_session)
        except OSError:
            pass

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        out = proc.stdout.read().decode("utf-8", "replace")
        _, status, ru = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
        proc.stdout.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return out, (None if timed_out else proc.returncode), ru.ru_utime + ru.ru_stime


def first_error(out: str) -> str:
    for line in out.splitlines():
        if "error" in line.lower():
            return line.strip()[:300]
    lines = [ln for ln in out.splitlines() if ln.strip()]
    return (lines[-1].strip() if lines else "nvcc failed")[:300]


# ---- shaderlint report -----------------------------------------------------------------------------
def context_config(package: str, include_dirs: list[str]) -> str:
    """``--context-config``: the package's -D flags and -I directories as shaderlint configuration
    (``defines``; ``include-dirs``, the key issue 16 names, for a tree that reads headers)."""
    defines = [f[2:] for f in PACKAGE_FLAGS.get(package, ()) if f.startswith("-D")]
    return f"defines = {json.dumps(defines)}\ninclude-dirs = {json.dumps(include_dirs)}\n"


def run_report(cmd: list[str], env: dict, pkg_dir: str, config_text: str = "") -> tuple[list[dict], float]:
    """Rows of ``shaderlint report --format json --target sm_90`` on a package directory (the
    configuration ``config_text``, empty by default, so that no pyproject.toml of the sdist
    changes anything), and its CPU seconds."""
    with tempfile.TemporaryDirectory(prefix="kcov-") as tmp:
        config = os.path.join(tmp, "shaderlint.toml")
        with open(config, "w", encoding="utf-8") as fh:
            fh.write(config_text)
        out = os.path.join(tmp, "report.json")
        before = os.times()
        proc = subprocess.run([*cmd, "report", "--format", "json", "--target", "sm_90", "--config", config,
                               "-o", out, pkg_dir],
                              capture_output=True, text=True, env=env)
        after = os.times()
        cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
        if not os.path.exists(out):
            raise SystemExit(f"shaderlint report failed on {pkg_dir} (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
        with open(out, encoding="utf-8") as fh:
            return json.load(fh), cpu


def linted_files(python: str, env: dict, paths: list[str]) -> set[str] | None:
    """The files the measured tree's discovery lints under ``paths`` (None if it cannot be asked)."""
    code = ("import sys, json\nfrom shaderlint.discovery import discover\n"
            "print(json.dumps([p for p in discover(sys.argv[1:])]))")
    try:
        proc = subprocess.run([python, "-c", code, *paths], capture_output=True, text=True, env=env, timeout=600)
        return {os.path.realpath(p) for p in json.loads(proc.stdout)}
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


# ---- matching and classification -------------------------------------------------------------------
@dataclass
class Missing:
    package: str
    file: str           # the translation unit's .cu file
    kernel: str         # unqualified name
    symbol: str         # one mangled instance
    reason: str         # macro-generated | header-not-read | header-read | other
    where: str          # path:line of the definition, or the macro(s), or ""


def locate(tree: PackageTree, unit: Unit, name: str) -> tuple[str | None, int, bool]:
    """(file defining ``__global__`` ``name`` in the unit -- the .cu first --, line, inside a #define)."""
    for p in [unit.path, *unit.headers]:
        clean = tree.text(p)
        if name not in clean:
            continue
        defs = find_kernel_definitions(clean, name)
        if defs:
            off, in_define = defs[0]
            return p, clean.count("\n", 0, off) + 1, in_define
    return None, 0, False


def classify(tree: PackageTree, unit: Unit, name: str, read: set[str]) -> tuple[str, str]:
    """(reason, where) for a kernel of ``unit`` the report does not list. ``read``: real paths of
    the files shaderlint read (with rows, or linted by its discovery)."""
    path, line, in_define = locate(tree, unit, name)
    rel = lambda p: os.path.relpath(p, tree.root)  # noqa: E731
    if path is not None and in_define:
        return "macro-generated", f"{rel(path)}:{line}"
    if path is None:
        macros = [(p, m) for p in [unit.path, *unit.headers] for m in kernel_macros(tree.text(p))]
        if macros:
            return "macro-generated", ", ".join(f"{m} ({rel(p)})" for p, m in macros[:3]) + \
                (f" +{len(macros) - 3}" if len(macros) > 3 else "")
        return "other", "definition not found"
    if path == unit.path:
        return "other", f"{rel(path)}:{line}"
    if os.path.realpath(path) in read:
        return "header-read", f"{rel(path)}:{line}"
    return "header-not-read", f"{rel(path)}:{line}"


def is_toolkit(qualifiers: tuple[str, ...]) -> bool:
    return bool(qualifiers) and qualifiers[0] in TOOLKIT_NAMESPACES


def match_unit(tree: PackageTree, unit: Unit, entries: list[str], rows_by_path: dict[str, set[str]],
               read: set[str]) -> tuple[dict[str, str], set[str], list[Missing], set[str]]:
    """(ptxas kernels {name: a symbol}, listed names, missing, toolkit kernels) of one compiled unit."""
    kernels: dict[str, str] = {}
    toolkit: set[str] = set()
    for sym in entries:
        quals, name = base_name(sym)
        if is_toolkit(quals) and locate(tree, unit, name)[0] is None:
            toolkit.add(name)
            continue
        kernels.setdefault(name, sym)
    listed: set[str] = set()
    for p in [unit.path, *unit.headers]:
        listed |= rows_by_path.get(os.path.realpath(p), set())
    missing = []
    for name, sym in sorted(kernels.items()):
        if name in listed:
            continue
        reason, where = classify(tree, unit, name, read)
        missing.append(Missing(unit.package, os.path.relpath(unit.path, tree.root), name, sym, reason, where))
    return kernels, listed & set(kernels), missing, toolkit


# ---- corpus and sampling ---------------------------------------------------------------------------
def stratified(units_by_pkg: dict[str, list[Unit]], n: int) -> list[Unit]:
    """Up to ``n`` units taken round-robin over the packages, each package's units in a fixed
    pseudo-random order (sha1 of the path inside the package): small packages whole, large ones sampled."""
    queues = {}
    for pkg, units in sorted(units_by_pkg.items()):
        queues[pkg] = sorted(units, key=lambda u: hashlib.sha1(u.path.encode()).hexdigest())
    out: list[Unit] = []
    while len(out) < n and any(queues.values()):
        for pkg in sorted(queues):
            if queues[pkg] and len(out) < n:
                out.append(queues[pkg].pop(0))
    return out


REASONS = ("macro-generated", "header-not-read", "header-read", "other")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample", type=int, default=150, help="files to compile, stratified by package (0: all)")
    ap.add_argument("--packages", help="comma-separated package names (default: every package with .cu files)")
    ap.add_argument("--jobs", "-j", type=int, default=2, help="nvcc processes at once (default 2)")
    ap.add_argument("--out", help="write the missing kernels here (TSV)")
    ap.add_argument("--json", help="write every figure here (JSON)")
    ap.add_argument("--root", default=REPO, help="the checkout whose shaderlint is measured (default: this one)")
    ap.add_argument("--shaderlint-cmd", help="command running shaderlint (default: python -m shaderlint with --root "
                                             "first on PYTHONPATH)")
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--timeout", type=int, default=TIMEOUT, help="seconds per nvcc run")
    ap.add_argument("--no-cache", action="store_true", help="compile again even when a cached result exists")
    ap.add_argument("--corpus", help="corpus cache (default $SHADERLINT_REALCODE_CACHE or /work/realcode-cache)")
    ap.add_argument("--list", action="store_true", help="print every missing kernel")
    ap.add_argument("--context-config", action="store_true",
                    help="give shaderlint the package's -D and -I (defines, include-dirs) in its configuration")
    ap.add_argument("--extra", action="store_true", help="also the pinned projects of EXTRA (fetched when missing)")
    ap.add_argument("--fetch-libs", action="store_true",
                    help="download the pinned cuBLAS/cuRAND/cuFFT/cuSOLVER/cuSPARSE headers first (see CUDA_LIB_WHEELS)")
    args = ap.parse_args(argv)

    import fetch

    cache_dir = args.corpus or fetch.cache_dir()
    roots: dict[str, str] = {}  # package name -> its directory
    for p in fetch.load_packages():
        roots[p.name] = os.path.join(cache_dir, "src", p.dirname)
    if args.extra:
        extra_cache = os.path.join(cache_root(), "extra")
        for p in fetch.parse_packages(EXTRA):
            roots[p.name] = os.path.join(extra_cache, "src", p.dirname)
            if not os.path.isdir(roots[p.name]) and (args.packages is None or p.name in args.packages.split(",")):
                fetch.fetch(p, extra_cache, log=lambda m: print(m, file=sys.stderr))
    wanted = set(args.packages.split(",")) if args.packages else None
    roots = {n: r for n, r in roots.items() if (wanted is None or n in wanted) and os.path.isdir(r)}
    if wanted and len(roots) < len(wanted):
        print(f"note: not found: {', '.join(sorted(wanted - set(roots)))}", file=sys.stderr)

    t0 = time.monotonic()
    libs = fetch_libs() if args.fetch_libs else lib_include_dir()
    if not os.path.isdir(libs):
        print(f"note: no CUDA library headers in {libs} (--fetch-libs): files including cuBLAS & co. will not compile",
              file=sys.stderr)
        libs = None
    system = system_include_dirs(args.nvcc) + ([libs] if libs else [])
    trees: dict[str, PackageTree] = {}
    units_by_pkg: dict[str, list[Unit]] = {}
    stats: dict[str, Counter] = defaultdict(Counter)
    for name, root in roots.items():
        sources = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(SOURCE_EXTS))
        if not sources:
            continue
        tree = trees[name] = PackageTree(root, system)
        for path in sources:
            unit = scan_unit(tree, name, path)
            stats[name]["cu files"] += 1
            if unit.missing:
                stats[name]["needs torch/pybind"] += 1
            else:
                units_by_pkg.setdefault(name, []).append(unit)
    def shown(u: Unit) -> str:
        return os.path.relpath(u.path, os.path.dirname(roots[u.package]))

    sample = stratified(units_by_pkg, args.sample if args.sample > 0 else 10 ** 9)
    for u in sample:
        stats[u.package]["sampled"] += 1
    print(f"{sum(s['cu files'] for s in stats.values())} .cu files in {len(trees)} packages; "
          f"{sum(s['needs torch/pybind'] for s in stats.values())} include torch/ATen/c10/pybind11/Python (not compiled); "
          f"{len(sample)} of the rest sampled; scan {time.monotonic() - t0:.1f} s", file=sys.stderr)

    nvcc = args.nvcc
    version = nvcc_version(nvcc)
    if not version:
        raise SystemExit(f"{nvcc}: not found")
    ccache = None if args.no_cache else os.path.join(cache_root(), "kernel-coverage")
    results: dict[str, dict] = {}
    nvcc_cpu = 0.0
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as ex:
        futs = {ex.submit(compile_unit, nvcc, u, version, ccache, args.timeout, libs): u for u in sample}
        done = 0
        for fut in concurrent.futures.as_completed(futs):
            u = futs[fut]
            r = results[u.path] = fut.result()
            done += 1
            if not r["cached"]:
                nvcc_cpu += r["seconds"]
                print(f"  [{done}/{len(sample)}] {shown(u)}: "
                      f"{'ok' if r['ok'] else 'FAILED'} {r['seconds']} s", file=sys.stderr)

    # shaderlint report on each package that has a compiled file
    env = dict(os.environ)
    if args.shaderlint_cmd:
        cmd = shlex.split(args.shaderlint_cmd)
        python = None
    else:
        root = os.path.abspath(args.root)
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        cmd = [sys.executable, "-m", "shaderlint"]
        python = sys.executable
    report_pkgs = sorted({u.package for u in sample if results[u.path]["ok"]})
    rows_by_path: dict[str, set[str]] = defaultdict(set)
    report_cpu = 0.0
    report_rows = Counter()
    for name in report_pkgs:
        config_text = ""
        if args.context_config:
            dirs = sorted({d for u in units_by_pkg.get(name, ()) for d in u.include_dirs})
            config_text = context_config(name, dirs)
        rows, cpu = run_report(cmd, env, roots[name], config_text)
        report_cpu += cpu
        for r in rows:
            rows_by_path[os.path.realpath(r["path"])].add(report_base(r["kernel"]))
            report_rows[name] += 1
    read = set(rows_by_path)
    if python is not None and report_pkgs:
        found = linted_files(python, env, [roots[n] for n in report_pkgs])
        if found:
            read |= found

    # match
    missing: list[Missing] = []
    per_pkg: dict[str, Counter] = defaultdict(Counter)
    distinct_all: set[tuple[str, str]] = set()
    distinct_missing: dict[tuple[str, str], str] = {}
    failures: list[tuple[str, str]] = []
    for u in sample:
        r = results[u.path]
        c = per_pkg[u.package]
        if not r["ok"]:
            c["not compiled"] += 1
            failures.append((shown(u), r["error"]))
            continue
        c["compiled"] += 1
        tree = trees[u.package]
        kernels, listed, miss, toolkit = match_unit(tree, u, r["entries"], rows_by_path, read)
        c["ptxas kernels"] += len(kernels)
        c["listed"] += len(listed)
        c["toolkit kernels"] += len(toolkit)
        missing.extend(miss)
        miss_names = {m.kernel: m for m in miss}
        for name in kernels:
            where = locate(tree, u, name)[0] or u.path
            key = (os.path.realpath(where), name)
            distinct_all.add(key)
            if name in miss_names:
                distinct_missing[key] = miss_names[name].reason
        for m in miss:
            c[m.reason] += 1

    # print
    print("columns: .cu files; of them including torch & co. (not compiled); sampled; compiled; nvcc failed; "
          "kernels ptxas lists; of them listed by the report; missing: macro-generated, in a header shaderlint "
          "did not read, in a header it read, other; toolkit kernels (CUB, Thrust: not scored)")
    print(f"\nKernel coverage of `shaderlint report` ({args.root if not args.shaderlint_cmd else args.shaderlint_cmd}) "
          f"against ptxas (sm_90), per translation unit")
    hdr = ["package", "cu", "torch", "sample", "compiled", "failed", "ptxas", "listed", "missing",
           *REASONS, "toolkit"]
    short = {"macro-generated": "macro", "header-not-read": "hdr-unrd", "header-read": "hdr-read"}
    print("  ".join(f"{h:>15}" if i == 0 else f"{short.get(h, h):>8}" for i, h in enumerate(hdr)))
    tot = Counter()
    for name in sorted(set(stats) | set(per_pkg)):
        s, c = stats[name], per_pkg[name]
        row = [s["cu files"], s["needs torch/pybind"], s["sampled"], c["compiled"], c["not compiled"],
               c["ptxas kernels"], c["listed"], c["ptxas kernels"] - c["listed"], *(c[r] for r in REASONS),
               c["toolkit kernels"]]
        for k, v in zip(hdr[1:], row):
            tot[k] += v
        print(f"{name[:15]:>15}  " + "  ".join(f"{v:>8}" for v in row))
    print(f"{'total':>15}  " + "  ".join(f"{tot[k]:>8}" for k in hdr[1:]))
    dm = Counter(distinct_missing.values())
    print(f"\ndistinct kernels (definition, name): {len(distinct_all)} listed by ptxas, {len(distinct_missing)} missing"
          + "".join(f"; {r} {dm[r]}" for r in REASONS if dm[r]))
    print(f"CPU: nvcc {nvcc_cpu:.0f} s for {sum(1 for u in sample if not results[u.path]['cached'])} uncached files "
          f"({sum(1 for u in sample if results[u.path]['cached'])} from the cache), report {report_cpu:.0f} s; "
          f"wall {time.monotonic() - t0:.0f} s")
    if failures:
        why = Counter(classify_failure(e) for _, e in failures)
        print("not compiled: " + ", ".join(f"{k} {v}" for k, v in why.most_common()))
    if args.list:
        for m in missing:
            print(f"  {m.reason:16} {m.package}/{m.file}: {m.kernel}  [{m.where}]")
    if args.out:
        readable = demangle_all(sorted({m.symbol for m in missing}))
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write("package\tfile\tkernel\treason\twhere\tsymbol\tdemangled\n")
            for m in missing:
                fh.write(f"{m.package}\t{m.file}\t{m.kernel}\t{m.reason}\t{m.where}\t{m.symbol}\t{readable[m.symbol]}\n")
    if args.json:
        doc = {"totals": dict(tot), "per_package": {k: dict(v) for k, v in per_pkg.items()},
               "distinct": {"ptxas": len(distinct_all), "missing": len(distinct_missing), **dm},
               "flags": {shown(u): results[u.path].get("command", []) for u in sample},
               "failures": failures, "missing": [m.__dict__ for m in missing]}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)
    return 0


def classify_failure(error: str) -> str:
    if error.startswith("timeout"):
        return "timeout"
    m = re.search(r'cannot open source file "([^"]+)"|fatal error: ([^:]+): No such file', error)
    if m:
        return "missing header " + (m.group(1) or m.group(2)).split("/")[0]
    return "compile error"


if __name__ == "__main__":
    sys.exit(main())
