"""Exact AMD register figures for GLSL compute shaders from Mesa's RADV driver, without a GPU.

What :func:`measure_radv` does for one shader:

1. ``glslangValidator -V --quiet --target-env vulkan1.2 -S comp`` compiles the
   GLSL to SPIR-V (the file's directory is on the include path).
2. :mod:`shaderlint.estimate.spirv` reads the entry point, workgroup size,
   descriptor bindings and push-constant size from the SPIR-V.
3. A child process (:mod:`shaderlint.estimate._vulkan_worker`) opens Mesa's
   RADV driver on its *null device* (``RADV_FORCE_FAMILY=<chip>``: the driver
   compiles for that chip with no hardware present), builds matching descriptor
   set and pipeline layouts, creates the compute pipeline with
   ``VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR`` and returns the ACO
   compiler's statistics through ``VK_KHR_pipeline_executable_properties``.

The child process is there because RADV calls abort() on some inputs (an unknown
chip name, some shaders): a driver crash ends the child, is reported as this
shader's error, and the remaining shaders of a batch run in a new child. Every
shader must finish within ``timeout`` seconds of the previous one.

The child uses the Vulkan loader through :mod:`ctypes`. The alternatives were the
``vulkan`` package from PyPI (cffi bindings: one more dependency for an
optional feature, and its generated declarations follow its own Vulkan header
version) and a C helper built at first use (needs a C compiler and the Vulkan
headers, ``libvulkan-dev``, on the user's machine). ctypes needs only the
Debian packages ``libvulkan1`` and ``mesa-vulkan-drivers``, plus
``glslang-tools`` for the SPIR-V.

Semantics of the figures (Mesa 22.3, the version Debian 12 ships):

* ``vgprs`` is the *allocated* count, rounded up to the allocation granule
  (gfx10.3: 8 in wave64, 16 in wave32); ``pre_sched_vgprs`` is ACO's demand
  before scheduling, unrounded.
* ``sgprs`` is 128 on gfx10 and later whatever the shader uses (SGPRs do not
  limit occupancy there); on gfx6-9 it is the real granule-rounded count.
* ``subgroups_per_simd`` is RADV's own occupancy figure; on gfx10 and later
  RADV multiplies it by wave_size / 32, so wave64 shaders show twice the waves a
  SIMD holds. ``waves_per_simd`` undoes that.
* ``scratch_bytes`` is per wave; ``lds_bytes`` per workgroup after rounding.
* The wave size is whatever the pipeline asked for (``subgroup_size``); with
  none, Mesa 22.3 compiles compute shaders as wave64 on every chip.

Errors never raise: a :class:`RadvResult` carries ``error`` (glslang's message,
a driver crash, a timeout, missing packages). Results are cached by content
(the SPIR-V bytes, chip, wave size and the installed driver library), in memory
and on disk under ``$SHADERLINT_CACHE_DIR/radv`` or
``$XDG_CACHE_HOME/shaderlint/radv`` (default ``~/.cache``); so is glslang's
SPIR-V (see :func:`compile_spirv`). A shader glslang rejects is not cached.
"""

from __future__ import annotations

import ctypes.util
import functools
import glob
import hashlib
import json
import os
import platform
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from shaderlint.estimate import contentcache
from shaderlint.estimate.spirv import Reflection, reflect

DEFAULT_TIMEOUT = 60.0
#: Bump when the cached entry's layout or the worker's behaviour changes.
CACHE_FORMAT = 2

#: ``RADV_FORCE_FAMILY`` names that Mesa 22.3 accepts, by graphics generation. RADV aborts
#: (exit 134) on any other name (``gfx1030``, ``gfx900``, ``sienna_cichlid``), so names are
#: checked here first.
FAMILIES: dict[str, int] = {
    **dict.fromkeys(("tahiti", "pitcairn", "verde", "oland", "hainan"), 6),
    **dict.fromkeys(("bonaire", "kabini", "kaveri", "hawaii"), 7),
    **dict.fromkeys(("tonga", "iceland", "carrizo", "fiji", "stoney", "polaris10", "polaris11", "polaris12",
                     "vegam"), 8),
    **dict.fromkeys(("vega10", "vega12", "vega20", "raven", "raven2", "renoir", "arcturus", "aldebaran"), 9),
    **dict.fromkeys(("navi10", "navi12", "navi14"), 10),
    **dict.fromkeys(("navi21", "navi22", "navi23", "navi24", "vangogh", "rembrandt", "gfx1036"), 10.3),
    **dict.fromkeys(("gfx1100", "gfx1101", "gfx1102"), 11),
}

_WORKER = str(Path(__file__).with_name("_vulkan_worker.py"))
_ICD_GLOBS = ("/usr/share/vulkan/icd.d/radeon_icd*.json", "/etc/vulkan/icd.d/radeon_icd*.json",
              "/usr/local/share/vulkan/icd.d/radeon_icd*.json")


@dataclass
class RadvResult:
    """RADV's statistics for one compute shader on one chip."""

    family: str
    #: The Vulkan device's name ("Null hardware (RADV NAVI21)").
    device: str = ""
    #: The driver ("Mesa 22.3.6").
    driver: str = ""
    wave_size: int | None = None
    vgprs: int | None = None
    sgprs: int | None = None
    spilled_vgprs: int | None = None
    spilled_sgprs: int | None = None
    scratch_bytes: int | None = None
    lds_bytes: int | None = None
    pre_sched_vgprs: int | None = None
    #: RADV's "Subgroups per SIMD", as reported (see the module docstring).
    subgroups_per_simd: int | None = None
    code_size: int | None = None
    instructions: int | None = None
    #: Workgroup size of the compiled shader (spec constants at their defaults; see spirv.py).
    local_size: tuple[int, int, int] | None = None
    #: A workgroup dimension is a specialization constant without a default: compiled as 1.
    local_size_unknown: bool = False
    entry_point: str | None = None
    #: Every statistic the driver reported, by its name.
    statistics: dict[str, object] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    log: str = ""
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and self.vgprs is not None

    @property
    def generation(self) -> float | None:
        return FAMILIES.get(self.family)

    @property
    def waves_per_simd(self) -> int | None:
        """RADV's occupancy in waves per SIMD, without the gfx10+ wave_size/32 factor."""
        if self.subgroups_per_simd is None:
            return None
        gen = self.generation
        if gen is not None and gen >= 10 and self.wave_size:
            return self.subgroups_per_simd * 32 // self.wave_size
        return self.subgroups_per_simd

    @property
    def threads_per_group(self) -> int | None:
        if self.local_size is None:
            return None
        x, y, z = self.local_size
        return x * y * z

    def to_json(self) -> dict:
        return {
            "family": self.family, "device": self.device, "driver": self.driver, "wave_size": self.wave_size,
            "vgprs": self.vgprs, "sgprs": self.sgprs, "spilled_vgprs": self.spilled_vgprs,
            "spilled_sgprs": self.spilled_sgprs, "scratch_bytes": self.scratch_bytes, "lds_bytes": self.lds_bytes,
            "pre_sched_vgprs": self.pre_sched_vgprs, "subgroups_per_simd": self.subgroups_per_simd,
            "code_size": self.code_size, "instructions": self.instructions,
            "local_size": list(self.local_size) if self.local_size else None,
            "local_size_unknown": self.local_size_unknown, "entry_point": self.entry_point,
            "statistics": self.statistics, "notes": self.notes, "error": self.error,
        }

    @classmethod
    def from_json(cls, o: dict) -> RadvResult:
        r = cls(family=o["family"])
        for k, v in o.items():
            if k == "local_size":
                v = tuple(v) if v else None
            if hasattr(r, k):
                setattr(r, k, v)
        return r


# ------------------------------------------------------------------------------------------------
# Availability


def glslang_path() -> str | None:
    return shutil.which("glslangValidator")


def radeon_icd() -> str | None:
    """Path of RADV's Vulkan ICD manifest, or None when mesa-vulkan-drivers is not installed."""
    machine = platform.machine()
    for pattern in _ICD_GLOBS:
        found = sorted(glob.glob(pattern))
        for path in found:  # this machine's driver first (multiarch systems install several)
            if path.endswith((f".{machine}.json", "/radeon_icd.json")):
                return path
        if found:
            return found[0]
    return None


def unavailable_reason() -> str | None:
    """Why RADV figures cannot be measured here (a missing package), or None when they can."""
    return _unavailable_reason()


@functools.lru_cache(maxsize=1)
def _unavailable_reason() -> str | None:
    # Checked once per process: find_library may run ldconfig, far slower than a compile from the cache.
    missing = []
    if glslang_path() is None:
        missing.append("glslangValidator (Debian: glslang-tools)")
    if not _loadable("libvulkan.so.1") and ctypes.util.find_library("vulkan") is None:
        missing.append("the Vulkan loader (Debian: libvulkan1)")
    if radeon_icd() is None:
        missing.append("Mesa's RADV driver (Debian: mesa-vulkan-drivers)")
    return "not installed: " + ", ".join(missing) if missing else None


def radv_available() -> bool:
    """True when glslangValidator, the Vulkan loader and RADV are all installed."""
    return unavailable_reason() is None


def _loadable(name: str) -> bool:
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def subgroup_size_for(target) -> int | None:
    """The subgroup size to ask RADV for on a :class:`~shaderlint.estimate.targets.Target`: the
    target's on gfx10+ (wave32 and wave64), None before (wave64 only) or off AMD."""
    return target.simd_width if target.radv_family and FAMILIES[target.radv_family] >= 10 else None


def check_family(family: str) -> str | None:
    """The family name normalised (lower case), or None when RADV would abort on it."""
    name = family.strip().lower()
    return name if name in FAMILIES else None


def _driver_stamp(icd: str | None) -> str:
    """Identifies the installed driver: the ICD manifest and the library it names (path, size, mtime)."""
    parts = [str(icd)]
    paths = [icd] if icd else []
    if icd:
        try:
            with open(icd, encoding="utf-8") as fh:
                lib = json.load(fh).get("ICD", {}).get("library_path")
            if lib:
                paths.append(lib if os.path.isabs(lib) else os.path.join(os.path.dirname(icd), lib))
        except (OSError, ValueError, AttributeError):
            pass
    for p in paths:
        try:
            st = os.stat(p)
            parts.append(f"{p}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{p}:missing")
    return "|".join(parts)


# ------------------------------------------------------------------------------------------------
# GLSL -> SPIR-V


def compile_spirv(path_or_source: str | os.PathLike[str], *, defines: Sequence[str] = (),
                  include_dirs: Sequence[str] = (), stage: str = "comp",
                  timeout: float = DEFAULT_TIMEOUT, cache_dir: str | None = "default") -> tuple[bytes | None, str]:
    """SPIR-V of a GLSL shader (file or source text) and glslang's messages; None on failure.

    A successful compile is cached by the source text, the options and
    glslangValidator's identity, with the files it included (glslang's depfile)
    and their sizes and modification times: editing an included file is a miss.
    """
    tool = glslang_path()
    if tool is None:
        return None, "glslangValidator not found on PATH (Debian: glslang-tools)"
    if _looks_like_path(path_or_source):
        source_path = Path(path_or_source).resolve()
        try:
            text = source_path.read_bytes()
        except OSError:
            return None, f"no such file: {source_path}"
        base = source_path.parent
    else:
        source_path, text = None, str(path_or_source).encode("utf-8")
        base = None
    key = hashlib.sha256(json.dumps([CACHE_FORMAT, _stamp(tool), stage, list(defines), list(include_dirs),
                                     str(base)]).encode() + b"\0" + text).hexdigest()
    directory = _cache_directory(cache_dir)
    spv_dir = os.path.join(directory, "spv") if directory else None
    hit = _spirv_cache_get(spv_dir, key)
    if hit is not None:
        return hit
    if key in _SPIRV_FAILED:
        return None, _SPIRV_FAILED[key]
    with tempfile.TemporaryDirectory(prefix="shaderlint-radv-") as tmp:
        source = source_path or Path(tmp) / "shader.comp"
        if source_path is None:
            source.write_bytes(text)
        out = Path(tmp) / "shader.spv"
        depfile = Path(tmp) / "shader.d"
        command = [tool, "-V", "--quiet", "--target-env", "vulkan1.2", "-S", stage, "-I" + str(source.parent)]
        command += ["-I" + d for d in include_dirs] + ["-D" + d for d in defines]
        command += ["--depfile", str(depfile), "-o", str(out), str(source)]
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=tmp, check=False,
                                  errors="replace")
        except subprocess.TimeoutExpired:
            return None, f"glslangValidator timed out after {timeout:g} s"
        except OSError as exc:
            return None, f"could not run glslangValidator: {exc}"
        log = (proc.stdout + proc.stderr).strip()
        if proc.returncode != 0 or not out.is_file():
            _SPIRV_FAILED[key] = log = log or f"glslangValidator exited with status {proc.returncode}"
            return None, log
        spirv = out.read_bytes()
        deps = _depfile_paths(depfile, [source.parent, *map(Path, include_dirs)], exclude=(tmp, str(source)))
    _spirv_cache_put(spv_dir, key, spirv, log, deps)
    return spirv, log


_stamp = contentcache.stamp
_depfile_paths = contentcache.depfile_paths


_SPIRV_MEMORY: dict[str, dict] = {}
#: Rejected compiles, in this process only (an edited include must be able to fix them in the next run).
_SPIRV_FAILED: dict[str, str] = {}


def _spirv_cache_get(directory: str | None, key: str) -> tuple[bytes, str] | None:
    entry = _SPIRV_MEMORY.get(key)
    if entry is None and directory:
        try:
            with open(os.path.join(directory, key + ".json"), encoding="utf-8") as fh:
                entry = json.load(fh)
        except (OSError, ValueError):
            return None
    try:
        if any(_stamp(path) != stamp for path, stamp in entry["deps"]):
            return None
        return bytes.fromhex(entry["spirv"]), str(entry.get("log", ""))
    except (TypeError, KeyError, ValueError):
        return None


def _spirv_cache_put(directory: str | None, key: str, spirv: bytes, log: str, deps: list[str] | None) -> None:
    if deps is None:
        return
    entry = {"spirv": spirv.hex(), "log": log, "deps": [[p, _stamp(p)] for p in deps]}
    _SPIRV_MEMORY[key] = entry
    _write_json(directory, key, entry)


_write_json = contentcache.write_json


def _looks_like_path(value: str | os.PathLike[str]) -> bool:
    if isinstance(value, os.PathLike):
        return True
    if "\n" in value or len(value) >= 4096:
        return False
    return os.path.isfile(value) or value.endswith((".comp", ".glsl"))


# ------------------------------------------------------------------------------------------------
# Measuring


@dataclass
class Job:
    """One shader to measure: its SPIR-V and how to compile it."""

    spirv: bytes
    family: str
    subgroup_size: int | None = None
    #: The specialization constants the application sets ((id, value) pairs, from its host code);
    #: None when not known: :func:`shaderlint.estimate.spirv.reflect`'s defaults.
    specialization: tuple[tuple[int, int], ...] | None = None


def measure_radv(path_or_source: str | os.PathLike[str], family: str = "navi21", *,
                 subgroup_size: int | None = None, defines: Sequence[str] = (),
                 include_dirs: Sequence[str] = (), timeout: float = DEFAULT_TIMEOUT,
                 cache_dir: str | None = "default",
                 specialization: tuple[tuple[int, int], ...] | None = None) -> RadvResult:
    """RADV's statistics for one GLSL compute shader (a file or source text) on ``family``.

    ``subgroup_size`` (32 or 64) is passed as the pipeline's required subgroup
    size (gfx10+); None leaves the choice to the driver. ``specialization``: the
    constants the application's pipeline sets, when its host code says (the
    workgroup size may be one of them). ``cache_dir=None`` disables the on-disk
    cache. Never raises: see ``RadvResult.error``.
    """
    name = check_family(family)
    if name is None:
        return RadvResult(family=family, error=f"unknown RADV family {family!r}; known: {', '.join(FAMILIES)}")
    missing = unavailable_reason()
    if missing:
        return RadvResult(family=name, error=f"RADV measurement unavailable: {missing}")
    spirv, log = compile_spirv(path_or_source, defines=defines, include_dirs=include_dirs, timeout=timeout,
                               cache_dir=cache_dir)
    if spirv is None:
        return RadvResult(family=name, error=f"glslang: {_first_line(log)}", log=log)
    return measure_spirv([Job(spirv, name, subgroup_size, specialization)], timeout=timeout, cache_dir=cache_dir)[0]


def measure_spirv(jobs: Sequence[Job], *, timeout: float = DEFAULT_TIMEOUT,
                  cache_dir: str | None = "default") -> list[RadvResult]:
    """RADV's statistics for each SPIR-V module, in order; one worker process per family."""
    results: list[RadvResult | None] = [None] * len(jobs)
    icd = radeon_icd()
    stamp = _driver_stamp(icd)
    directory = _cache_directory(cache_dir)
    todo: dict[str, list[tuple[int, str, Reflection]]] = {}
    for index, job in enumerate(jobs):
        name = check_family(job.family)
        if name is None:
            results[index] = RadvResult(family=job.family, error=f"unknown RADV family {job.family!r}")
            continue
        given = dict(job.specialization) if job.specialization is not None else None
        refl = reflect(job.spirv, given)
        if not refl.ok:
            results[index] = RadvResult(family=name, error=refl.error)
            continue
        spec = b"" if given is None else b"specialization %s\0" % repr(sorted(given.items())).encode()
        key = hashlib.sha256(b"%d\0%s\0%s\0%s\0" % (CACHE_FORMAT, name.encode(), str(job.subgroup_size).encode(),
                                                      stamp.encode()) + spec + job.spirv).hexdigest()
        hit = _cache_get(directory, key)
        if hit is not None:
            hit.cached = True
            results[index] = hit
            continue
        todo.setdefault(name, []).append((index, key, refl))
    missing = unavailable_reason() if todo else None
    with tempfile.TemporaryDirectory(prefix="shaderlint-radv-") as tmp:
        for name, items in todo.items():
            if missing:
                for index, _, _ in items:
                    results[index] = RadvResult(family=name, error=f"RADV measurement unavailable: {missing}")
                continue
            requests = []
            for index, key, refl in items:
                spv = os.path.join(tmp, f"{index}.spv")
                with open(spv, "wb") as fh:
                    fh.write(jobs[index].spirv)
                requests.append({"id": index, "spv": spv, "entry": refl.entry_point, "sets": refl.sets(),
                                 "push_constant_bytes": refl.push_constant_bytes,
                                 "subgroup_size": jobs[index].subgroup_size,
                                 "specialization": sorted(refl.specialization.items())})
            by_index = {index: (key, refl) for index, key, refl in items}
            for index, result in _run_family(name, requests, icd, timeout):
                key, refl = by_index[index]
                result.local_size = refl.local_size
                result.local_size_unknown = refl.local_size_unknown
                result.entry_point = refl.entry_point
                result.notes[:0] = refl.notes
                if result.error is None:
                    _cache_put(directory, key, result)
                results[index] = result
    return [r if r is not None else RadvResult(family="?", error="not measured") for r in results]


def prefetch(shaders: Iterable[tuple], *, timeout: float = DEFAULT_TIMEOUT, cache_dir: str | None = "default") -> None:
    """Measure many shaders in one worker per family, so that :func:`measure_radv` on each is a cache hit.

    ``shaders``: (source text, include directories, family, subgroup size, defines), optionally
    followed by the pipeline's specialization (as :func:`measure_radv` takes it). Saves the
    driver's start-up per shader (about 0.1 s of CPU) in a report over many files.
    """
    if unavailable_reason():
        return
    jobs = []
    for text, include_dirs, family, subgroup_size, defines, *rest in shaders:
        spirv, _ = compile_spirv(text, defines=defines, include_dirs=include_dirs, timeout=timeout,
                                 cache_dir=cache_dir)
        if spirv is not None and check_family(family):
            jobs.append(Job(spirv, family, subgroup_size, rest[0] if rest else None))
    if jobs:
        measure_spirv(jobs, timeout=timeout, cache_dir=cache_dir)


def _run_family(family: str, requests: list[dict], icd: str | None,
                timeout: float) -> Iterable[tuple[int, RadvResult]]:
    """Run the worker over ``requests``; after a crash or a timeout, the rest in a new worker."""
    env = dict(os.environ)
    env.update({"RADV_FORCE_FAMILY": family, "MESA_SHADER_CACHE_DISABLE": "true"})
    if icd:
        env["VK_ICD_FILENAMES"] = icd
        env["VK_DRIVER_FILES"] = icd
    for var in ("VK_INSTANCE_LAYERS", "VK_LOADER_LAYERS_ENABLE", "RADV_DEBUG", "RADV_PERFTEST", "ACO_DEBUG"):
        env.pop(var, None)
    pending = list(requests)
    while pending:
        done: set[int] = set()
        header: dict = {}
        outcome = ""
        with tempfile.TemporaryFile() as errfile:
            try:
                proc = subprocess.Popen([sys.executable, "-I", _WORKER], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=errfile, env=env)
            except OSError as exc:
                for req in pending:
                    yield req["id"], RadvResult(family=family, error=f"could not start the Vulkan worker: {exc}")
                return
            try:
                assert proc.stdin is not None and proc.stdout is not None
                try:
                    proc.stdin.write(json.dumps({"jobs": pending}).encode())
                    proc.stdin.close()
                except OSError:
                    pass
                for line in _lines(proc, timeout):
                    if line is None:
                        outcome = "timeout"
                        break
                    try:
                        msg = json.loads(line)
                    except ValueError:
                        continue
                    if "fatal" in msg:
                        outcome = f"RADV could not start: {msg['fatal']}"
                        break
                    if "device" in msg:
                        header = msg
                        continue
                    index = msg.get("id")
                    if index is None or index in done:
                        continue
                    done.add(index)
                    yield index, _result(family, header, msg)
            finally:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
            errfile.seek(0)
            stderr = errfile.read().decode("utf-8", "replace")
        rest = [req for req in pending if req["id"] not in done]
        if not rest:
            return
        if outcome.startswith("RADV could not start"):
            for req in rest:
                yield req["id"], RadvResult(family=family, error=outcome, log=stderr)
            return
        if not header and outcome != "timeout":
            # Died before it had a device: every shader would fail the same way.
            error = f"the driver crashed while starting ({_status(proc.returncode)}): {_last_line(stderr)}"
            for req in rest:
                yield req["id"], RadvResult(family=family, error=error.rstrip(": "), log=stderr)
            return
        culprit = rest[0]
        if outcome == "timeout":
            error = f"the driver did not finish within {timeout:g} s"
        else:
            error = f"the driver crashed ({_status(proc.returncode)}): {_last_line(stderr)}".rstrip(": ")
        yield culprit["id"], RadvResult(family=family, device=header.get("device", ""),
                                        driver=header.get("driver_info", ""), error=error, log=stderr)
        pending = rest[1:]


def _lines(proc: subprocess.Popen, timeout: float) -> Iterable[bytes | None]:
    """Lines of the worker's stdout until it closes; None when one takes longer than ``timeout``."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buffer = b""
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                yield None
                return
            chunk = os.read(fd, 65536)
            if not chunk:
                if buffer:
                    yield buffer
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                deadline = time.monotonic() + timeout
                yield line


def _result(family: str, header: dict, msg: dict) -> RadvResult:
    r = RadvResult(family=family, device=header.get("device", ""), driver=header.get("driver_info", ""))
    if "error" in msg:
        r.error = str(msg["error"])
        return r
    executables = msg.get("executables") or []
    if not executables:
        r.error = "the driver reported no pipeline executable"
        return r
    ex = executables[0]
    stats = ex.get("statistics", {})
    r.statistics = stats
    r.wave_size = ex.get("subgroup_size") or None

    def stat(name: str) -> int | None:
        v = stats.get(name)
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    r.vgprs, r.sgprs = stat("VGPRs"), stat("SGPRs")
    r.spilled_vgprs, r.spilled_sgprs = stat("Spilled VGPRs"), stat("Spilled SGPRs")
    r.scratch_bytes, r.lds_bytes = stat("Scratch size"), stat("LDS size")
    r.pre_sched_vgprs, r.subgroups_per_simd = stat("Pre-Sched VGPRs"), stat("Subgroups per SIMD")
    r.code_size, r.instructions = stat("Code size"), stat("Instructions")
    if r.vgprs is None:
        r.error = "the driver reported no VGPR count (not the ACO compiler?)"
    return r


def _status(code: int | None) -> str:
    if code is None:
        return "killed"
    if code < 0:
        return f"signal {-code}"
    return f"exit status {code}"


def _first_line(log: str) -> str:
    for line in log.splitlines():
        if "error" in line.lower():
            return line.strip()
    return log.strip().splitlines()[0] if log.strip() else "failed"


def _last_line(log: str) -> str:
    lines = [ln.strip() for ln in log.splitlines() if ln.strip() and "not a conformant" not in ln]
    return lines[-1] if lines else ""


# ------------------------------------------------------------------------------------------------
# Content cache

_MEMORY: dict[str, dict] = {}


def _cache_directory(cache_dir: str | None) -> str | None:
    return contentcache.cache_directory("radv", cache_dir)


def _cache_get(directory: str | None, key: str) -> RadvResult | None:
    entry = _MEMORY.get(key)
    if entry is None and directory:
        try:
            with open(os.path.join(directory, key[:2], key + ".json"), encoding="utf-8") as fh:
                entry = json.load(fh)
        except (OSError, ValueError):
            return None
    if not isinstance(entry, dict):
        return None
    try:
        return RadvResult.from_json(entry)
    except (KeyError, TypeError, ValueError):
        return None


def _cache_put(directory: str | None, key: str, result: RadvResult) -> None:
    entry = result.to_json()
    _MEMORY[key] = entry
    _write_json(os.path.join(directory, key[:2]) if directory else None, key, entry)
