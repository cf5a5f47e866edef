"""Compile the real-code corpus's CUDA files with nvcc, as each package's build would, and cache ptxas's report.

    from realcode_nvcc import cuda_files, flags_for, compile
    for path in cuda_files():                 # .cu files of the corpus that define a __global__ kernel
        res = compile(path, "sm_80")          # a shaderlint.estimate.ptxas.PtxasResult, from the cache when it can

nvcc runs with ``-cubin`` (``compile_ptxas(device_only=True)``): ptxas's report
is the same as with ``-c`` and the host compilation, two thirds of the time, is
skipped (so the cache key leaves it out; a failure cached from a ``-c`` run is
compiled again). The flags a file gets (:func:`flags_for`) stand in for its package's build system,
which we do not run: the include path holds the file's directory, every
directory between it and the package root, and the usual include roots found
there (``include/``, ``csrc/``, ``src/``, vendored CUTLASS/CUB ``include/``),
plus a small per-package table of the roots and macros a package's setup.py or
CMakeLists passes (:data:`PACKAGE_FLAGS`). Every file gets ``-std=c++17
--expt-relaxed-constexpr --expt-extended-lambda`` (what PyTorch extensions and
ggml pass), cuRAND's headers when ``--fetch-headers`` has put them in the cache
(from the ``nvidia-curand`` wheel on PyPI: device code, so they must be the real
ones), and ``bench/realcode/stubs/`` last (host-only declarations of cuBLAS, which
no kernel calls). Headers that are not installed here (PyTorch's above all) make
many files fail: they are counted as failures, not worked around.

Results are cached outside the repository in ``~/.cache/shaderlint-bench/nvcc/``
(``$SHADERLINT_BENCH_CACHE`` overrides the root), keyed by the file's bytes, the
flags, the architecture and nvcc's version; a cached failure is a result too.
``python bench/realcode_nvcc.py [--arch sm_80 ...] [--packages a,b] [--sample N]`` fills
the cache (one file at a time: nvcc takes 1-10 s per file).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import sys
import time
from dataclasses import asdict

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "realcode"))
sys.path.insert(0, REPO)

import fetch  # noqa: E402

from shaderlint.estimate.ptxas import PtxasKernel, PtxasResult, compile_ptxas, nvcc_version  # noqa: E402

COMMON_FLAGS = ("-std=c++17", "--expt-relaxed-constexpr", "--expt-extended-lambda", "-w")
TIMEOUT = 300.0

#: Include roots (relative to the package directory) and macros a package's build passes besides
#: the generic ones :func:`flags_for` finds.
PACKAGE_FLAGS: dict[str, dict[str, tuple[str, ...]]] = {
    "flash-attn": {"include": ("csrc/cutlass/include", "csrc/cutlass/tools/util/include",
                               "csrc/cutlass/examples/common",
                               "csrc/flash_attn", "csrc/flash_attn/src", "hopper")},
    "llama-cpp-python": {"include": ("vendor/llama.cpp/ggml/include", "vendor/llama.cpp/ggml/src",
                                     "vendor/llama.cpp/ggml/src/ggml-cuda")},
    "vllm": {"include": ("csrc",)},
    "xgboost": {"include": ("include", "src", "dmlc-core/include", "rabit/include", "cpp_src/include",
                            "cpp_src/src", "cpp_src/dmlc-core/include"), "define": ("XGBOOST_USE_CUDA=1",)},
    "lightgbm": {"include": ("include", "src", "compile/include", "external_libs/fmt/include",
                             "external_libs/fast_double_parser/include", "external_libs/eigen"),
                 "define": ("USE_CUDA",)},
    "deepspeed": {"include": ("csrc/includes", "deepspeed/ops/csrc/includes", "csrc/transformer/inference/includes")},
    "gptqmodel": {"include": ("gptqmodel_ext",)},
    "mmcv": {"include": ("mmcv/ops/csrc/common", "mmcv/ops/csrc/common/cuda")},
    "gsplat": {"include": ("gsplat/cuda/include", "gsplat/cuda/csrc", "gsplat/cuda/csrc/third_party/glm")},
    "natten": {"include": ("csrc/include", "csrc/autogen/include", "third_party/cutlass/include")},
    "xformers": {"include": ("xformers/csrc", "third_party/cutlass/include")},
    # dlib refuses its own folder on the include path (dlib_include_path_tutorial.txt): the root only
    "dlib": {"include": (".",), "define": ("DLIB_USE_CUDA",), "walk": ()},
}

_ROOT_NAMES = ("include", "csrc", "src")
STUBS = os.path.join(HERE, "realcode", "stubs")
CURAND_WHEEL = "nvidia-curand"


def corpus_src() -> str:
    return os.path.join(fetch.cache_dir(), "src")


def bench_cache() -> str:
    return os.environ.get("SHADERLINT_BENCH_CACHE") or os.path.expanduser("~/.cache/shaderlint-bench")


def cache_root() -> str:
    return os.path.join(bench_cache(), "nvcc")


def extra_headers() -> list[str]:
    """Include directories of the CUDA libraries ``--fetch-headers`` unpacked into the cache."""
    root = os.path.join(bench_cache(), "cuda-extra", "nvidia")
    if not os.path.isdir(root):
        return []
    return sorted(os.path.join(root, d, "include") for d in os.listdir(root)
                  if os.path.isdir(os.path.join(root, d, "include")))


def fetch_headers() -> list[str]:
    """Download the ``nvidia-curand`` wheel with pip and unpack its ``include/`` into the cache."""
    import glob
    import subprocess
    import zipfile

    wheels = os.path.join(bench_cache(), "wheels")
    os.makedirs(wheels, exist_ok=True)
    if not glob.glob(os.path.join(wheels, "nvidia_curand-*.whl")):
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", wheels, CURAND_WHEEL], check=True)
    for whl in glob.glob(os.path.join(wheels, "nvidia_curand-*.whl")):
        with zipfile.ZipFile(whl) as z:
            z.extractall(os.path.join(bench_cache(), "cuda-extra"),
                         [n for n in z.namelist() if "/include/" in n and not n.endswith("/")])
    return extra_headers()


def package_of(path: str, src: str | None = None) -> tuple[str, str] | None:
    """(package name, package directory) of a corpus path, or None outside the corpus."""
    src = os.path.abspath(src or corpus_src())
    rel = os.path.relpath(os.path.abspath(path), src)
    if rel.startswith(".."):
        return None
    top = rel.split(os.sep, 1)[0]
    for p in _packages():
        if p.dirname == top:
            return p.name, os.path.join(src, top)
    return None


@functools.lru_cache(maxsize=1)
def _packages() -> tuple:
    return tuple(fetch.load_packages())


def cuda_files(src: str | None = None, packages: set[str] | None = None) -> list[str]:
    """The corpus's ``.cu`` files that define a ``__global__`` function (the kernels the model of the
    file can see), sorted; ``packages`` restricts to those package names."""
    src = src or corpus_src()
    out = []
    for p in _packages():
        if packages and p.name not in packages:
            continue
        root = os.path.join(src, p.dirname)
        for d, dirs, files in os.walk(root):
            dirs.sort()
            for name in sorted(files):
                if not name.endswith(".cu"):
                    continue
                path = os.path.join(d, name)
                try:
                    with open(path, "rb") as fh:
                        if b"__global__" not in fh.read():
                            continue
                except OSError:
                    continue
                out.append(path)
    return sorted(out)


def flags_for(path: str, src: str | None = None) -> list[str]:
    """nvcc flags (besides ``-arch``) for a corpus file: include roots and macros, see the module docstring."""
    where = package_of(path, src)
    dirs: list[str] = []

    def add(d: str) -> None:
        d = os.path.normpath(d)
        if os.path.isdir(d) and d not in dirs:
            dirs.append(d)

    here = os.path.dirname(os.path.abspath(path))
    defines: tuple[str, ...] = ()
    if where is not None:
        name, root = where
        table = PACKAGE_FLAGS.get(name, {})
        d = here
        while "walk" not in table:  # the file's directory up to the package root, each with its include roots
            add(d)
            for sub in _ROOT_NAMES:
                add(os.path.join(d, sub))
            if os.path.samefile(d, root) or len(d) <= len(root):
                break
            d = os.path.dirname(d)
        for rel in table.get("include", ()):
            add(os.path.join(root, rel))
        defines = table.get("define", ())
    else:
        add(here)
    for d in extra_headers():
        add(d)
    add(STUBS)
    return [*COMMON_FLAGS, *(f"-I{d}" for d in dirs), *(f"-D{m}" for m in defines)]


@functools.lru_cache(maxsize=1)
def _nvcc_version() -> str:
    return nvcc_version() or "none"


def cache_key(path: str, arch: str, flags: list[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        h.update(fh.read())
    h.update("\0".join([arch, _nvcc_version(), *(_portable(f) for f in flags), _stubs_digest()]).encode())
    return h.hexdigest()[:32]


def _portable(flag: str) -> str:
    """A flag with the checkout's, the corpus's and the cache's locations replaced by names, so that
    another worktree of the repository reuses the cache."""
    for path, name in ((STUBS, "<stubs>"), (corpus_src(), "<src>"), (bench_cache(), "<cache>")):
        flag = flag.replace(path, name)
    return flag


@functools.lru_cache(maxsize=1)
def _stubs_digest() -> str:
    h = hashlib.sha256()
    for name in sorted(os.listdir(STUBS)) if os.path.isdir(STUBS) else ():
        with open(os.path.join(STUBS, name), "rb") as fh:
            h.update(name.encode() + b"\0" + fh.read())
    return h.hexdigest()[:16]


def _to_json(res: PtxasResult) -> dict:
    return {"arch": res.arch, "error": res.error, "device_only": True, "kernels": [asdict(k) for k in res.values()],
            "log_tail": res.log[-4000:] if res.error else ""}


def _from_json(doc: dict) -> PtxasResult:
    kernels = {k["mangled"]: PtxasKernel(**k) for k in doc["kernels"]}
    return PtxasResult(kernels, arch=doc["arch"], error=doc["error"], log=doc.get("log_tail", ""))


def cached(path: str, arch: str) -> PtxasResult | None:
    """The cached result for ``path`` on ``arch``, or None when it was never compiled with these flags."""
    key = cache_key(path, arch, flags_for(path))
    f = os.path.join(cache_root(), key + ".json")
    try:
        with open(f, encoding="utf-8") as fh:
            doc = json.load(fh)
        if doc["error"] and not doc.get("device_only"):
            return None  # a failure with -c may be the host compiler's: compiled again with -cubin
        return _from_json(doc)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def compile(path: str, arch: str, *, cache_only: bool = False) -> PtxasResult | None:  # noqa: A001
    """ptxas's report for a corpus file on ``arch`` (``shaderlint.estimate.ptxas.compile_ptxas``
    with :func:`flags_for`), cached; None when ``cache_only`` and it is not cached."""
    got = cached(path, arch)
    if got is not None or cache_only:
        return got
    flags = flags_for(path)
    res = compile_ptxas(path, arch, flags, timeout=TIMEOUT, device_only=True)
    if res.error and "timed out" in res.error or (res.error or "").startswith(("nvcc not found", "could not run")):
        return res  # not a property of the file: not cached
    os.makedirs(cache_root(), exist_ok=True)
    target = os.path.join(cache_root(), cache_key(path, arch, flags) + ".json")
    tmp = f"{target}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(_to_json(res), fh)
    os.replace(tmp, target)
    return res


def stratified(paths: list[str], n: int | None, src: str | None = None, *, round_robin: bool = False) -> list[str]:
    """Up to ``n`` paths taken round-robin over packages (each package's files in a fixed
    pseudo-random order), so that a sample covers every package; all when ``n`` is None.
    Sorted, or in the round-robin order with ``round_robin`` (a run stopped part-way has
    then measured every package alike)."""
    if (n is None or n >= len(paths)) and not round_robin:
        return list(paths)
    n = len(paths) if n is None else n
    by_pkg: dict[str, list[str]] = {}
    for p in paths:
        where = package_of(p, src)
        by_pkg.setdefault(where[0] if where else "", []).append(p)
    queues = [sorted(v, key=lambda p: hashlib.sha256(p.encode()).hexdigest()) for _, v in sorted(by_pkg.items())]
    out: list[str] = []
    i = 0
    while len(out) < n and any(queues):
        q = queues[i % len(queues)]
        if q:
            out.append(q.pop(0))
        i += 1
    return out if round_robin else sorted(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", action="append", help="architectures (default sm_80 and sm_90)")
    ap.add_argument("--packages", help="comma-separated package names")
    ap.add_argument("--sample", type=int, help="at most N files, stratified by package")
    ap.add_argument("--fetch-headers", action="store_true", help="download cuRAND's headers (nvidia-curand wheel)")
    args = ap.parse_args(argv)
    if args.fetch_headers:
        print("\n".join(fetch_headers()) or "no headers unpacked")
    archs = args.arch or ["sm_80", "sm_90"]
    files = stratified(cuda_files(packages=set(args.packages.split(",")) if args.packages else None), args.sample,
                       round_robin=True)
    t0 = time.time()
    for i, path in enumerate(files, 1):
        for arch in archs:
            was = cached(path, arch) is not None
            res = compile(path, arch)
            state = "cached" if was else f"{time.time() - t0:6.0f} s"
            print(f"[{i}/{len(files)}] {arch} {os.path.relpath(path, corpus_src())}: "
                  f"{len(res)} kernels{' ERROR ' + (res.error or '')[:120] if res.error else ''} ({state})",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
