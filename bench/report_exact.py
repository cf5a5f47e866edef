"""Does ``shaderlint report`` (``--compiler auto``, the default) give the compilers' own figures?

    python bench/report_exact.py [PATH ...]      (default: examples tests/fixtures)

Runs ``shaderlint report --format json`` twice in a fresh cache directory
(CUDA on ``sm_80``, GLSL on ``rdna2-wave32`` so that RADV applies), counts the
rows by ``registers_source`` and checks every measured row against a direct,
uncached compile of the file: ``compile_ptxas`` (the file's path, ``-cubin``
compile, the configured defines and include-dirs) and ``measure_radv``. A row
agrees when its registers and stack bytes equal the compiler's for the same
kernel (template instances compared as a multiset per kernel name). Prints the
CPU (user+sys of the report process) and wall time of the first (uncached) and
second (cached) run. Needs nvcc and/or Mesa RADV; what is missing is said.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from shaderlint.config import SettingsResolver  # noqa: E402
from shaderlint.estimate import radv  # noqa: E402
from shaderlint.estimate.ptxas import compile_ptxas, ptxas_available  # noqa: E402
from shaderlint.estimate.targets import get_target  # noqa: E402

RUNS = (("cuda", "sm_80"), ("glsl", "rdna2-wave32"))


def report(paths: list[str], target: str, cache: str) -> tuple[list[dict], float, float]:
    env = dict(os.environ, SHADERLINT_CACHE_DIR=cache, PYTHONPATH=ROOT)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "shaderlint", "report", "--format", "json", "--target", target,
                           *paths], capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(proc.stdout or "[]"), cpu, wall


def direct(language: str, path: str, target: str) -> dict[str, list[tuple[int, int]]] | None:
    """Per kernel name, the sorted (registers, stack) of every instance the compiler reports; None: failed."""
    settings = SettingsResolver(None, {}).for_path(path)
    t = get_target(target)
    out: dict[str, list[tuple[int, int]]] = defaultdict(list)
    if language == "cuda":
        flags = [x for d in settings.include_dirs for x in ("-I", d)] + [f"-D{d}" for d in settings.defines]
        if not path.endswith(".cu"):  # a header analysed in context: nvcc needs to be told it is CUDA
            flags += ["-x", "cu"]
        res = compile_ptxas(path, t.ptxas_arch, flags, device_only=True)
        if not len(res):
            return None
        for k in res.values():
            out[k.name].append((k.registers, k.stack_bytes))
    else:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        r = radv.measure_radv(text, t.radv_family, subgroup_size=radv.subgroup_size_for(t),
                              defines=settings.defines, include_dirs=[os.path.dirname(os.path.abspath(path))],
                              cache_dir=None)
        if not r.ok:
            return None
        wave = r.wave_size or t.simd_width
        out[r.entry_point or "main"].append((r.vgprs, -(-(r.scratch_bytes or 0) // wave)))
    return {k: sorted(v) for k, v in out.items()}


def main(argv: list[str]) -> int:
    paths = argv or ["examples", "tests/fixtures"]
    for language, target in RUNS:
        if language == "cuda" and not ptxas_available():
            print("cuda: nvcc is not on PATH: skipped")
            continue
        if language == "glsl" and radv.unavailable_reason():
            print(f"glsl: RADV unavailable ({radv.unavailable_reason()}): skipped")
            continue
        with tempfile.TemporaryDirectory(prefix="report-exact-") as cache:
            rows, cpu1, wall1 = report(paths, target, cache)
            rows2, cpu2, wall2 = report(paths, target, cache)
        rows = [r for r in rows if r["language"] == language]
        assert [r for r in rows2 if r["language"] == language] == rows, "the cached run differs"
        exact = "ptxas" if language == "cuda" else "radv"
        sources = Counter(r["registers_source"] for r in rows)
        by_file: dict[str, list[dict]] = defaultdict(list)
        for r in rows:
            if r["registers_source"] == exact:
                by_file[r["path"]].append(r)
        agree = differ = 0
        for path, file_rows in sorted(by_file.items()):
            want = direct(language, path, target)
            got: dict[str, list[tuple[int, int]]] = defaultdict(list)
            for r in file_rows:
                got[r["kernel"].split("<")[0]].append((r["registers"], r["stack_bytes"]))
            for name, figures in got.items():
                if want is not None and sorted(figures) == want.get(name):
                    agree += len(figures)
                else:
                    differ += len(figures)
                    print(f"  DIFFERS {path} {name}: report {sorted(figures)}, compiler {None if want is None else want.get(name)}")
        files = len({r["path"] for r in rows})
        print(f"{language} ({target}): {len(rows)} rows in {files} files: {dict(sources)}; {exact} rows equal to a direct "
              f"compile: {agree} of {agree + differ}")
        print(f"  report uncached: {cpu1:.2f} s CPU, {wall1:.2f} s wall; cached: {cpu2:.2f} s CPU, {wall2:.2f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
