"""Time and memory bounds per file (issue 17), at full size: CPU time and peak memory of one lint in
a fresh child process, against the time budget and :func:`shaderlint.engine.memory_bound`.

    python bench/bounds.py            # every case (about a minute of CPU)
    python bench/bounds.py nested     # only the cases whose name contains "nested"

Cases: nested subscripts ``a[a[...]]`` (Metal 200,000 deep, 600 KB; CUDA 60,000 deep), small deeply
nested files at and past the depth the front end keeps, 100,000 unclosed brackets (one node of that
many children), ordinary kernels concatenated up to
``max-file-size`` (1 MiB) per language, a 50 MB input, and ``--fix --unsafe-fixes`` on 1x and 10x the
examples. "over" is the peak RSS over the RSS after imports, "bound" the memory bound for the file's
size; the exit code is 1 if a case passes its budget (plus 0.5 s) or its bound.

Figures before the bounds (issue 17): Metal 200,000 deep 93 s of CPU against the 5 s budget; CUDA
60,000 deep 34 s (21 s here); a 6 KB nested file 287 MB and a 15 KB one 692 MB; 100,000 unclosed
``{`` 9.8 s; a 50 MB input 3.4-3.5 GB; --fix about 2 MB more per fixed file (140 fixed examples:
93 MB peak against 54 MB for 14).

After (this machine, 2 shared cores): Metal 200,000 deep 0.54 s CPU, 116 MB over the process; CUDA
60,000 deep 0.22 s, 33 MB; nested files at the depth limit 6-56 MB, past it 6 MB; unclosed brackets
0.2 s; 1 MiB of examples 10.9-14.4 s (budget 20 s), 194-198 MB (bound 276 MB); 48 MB refused in
0.64 s, 28 MB; --fix on 10x the examples +4 MB (52 -> 56 MB).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from shaderlint.engine import memory_bound  # noqa: E402

WRAP = {
    "cuda": ("k.cu", "__global__ void k(int* a) {{ a[threadIdx.x] = {E}; }}\n"),
    "metal": ("k.metal", "kernel void k(device int* a [[buffer(0)]], uint tid [[thread_position_in_grid]]) "
                         "{{ a[tid] = {E}; }}\n"),
}
EXT = {"cuda": ".cu", "metal": ".metal", "glsl": ".comp"}


def make(kind: str, *args) -> tuple[str, bytes]:
    if kind == "nested":
        language, depth, (open_, leaf, close) = args
        path, wrap = WRAP[language]
        return path, wrap.format(E=open_ * depth + leaf + close * depth).encode()
    if kind == "examples":  # the examples of one language, whole files, repeated up to ``size`` bytes
        language, size = args
        files = sorted(glob.glob(os.path.join(ROOT, "examples", "*" + EXT[language])))
        unit = b"".join(open(p, "rb").read() + b"\n" for p in files)
        data = unit * max(1, size // len(unit))
        while len(data) + len(unit) <= size:
            data += unit
        return "big" + EXT[language], data
    if kind == "unclosed":  # brackets never closed: error recovery strings them on one node
        return "k.cu", ("__global__ void k(int* a) { a[0] = 1; " + args[0] * args[1]).encode()
    if kind == "large":
        return "big.cu", (b"__global__ void k(int* a, int n) { a[threadIdx.x] = a[0] / n; }\n" * (args[0] // 66 + 1))[:args[0]]
    raise ValueError(kind)


_CHILD = textwrap.dedent("""
    import json, resource, sys, time
    sys.path.insert(0, {root!r})
    sys.path.insert(0, {bench!r})
    from bounds import make
    from shaderlint.config import Settings
    from shaderlint.engine import lint_source
    path, data = make(*{args!r})
    lint_source("warm.cu", b"__global__ void w(int* a) {{ a[0] = 1; }}\\n")
    def rss():
        with open("/proc/self/status") as fh:
            return next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmRSS:"))
    before = rss()
    t0 = time.process_time()
    settings = Settings()
    r = lint_source(path, data, settings)
    cpu = time.process_time() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({{"cpu": cpu, "over": peak - before, "size": len(data), "budget": settings.budget_for(data),
                      "sl001": [d.message[:90] for d in r.diagnostics if d.code == "SL001"][:1]}}))
""")


def lint_case(*args) -> dict:
    code = _CHILD.format(root=ROOT, bench=os.path.join(ROOT, "bench"), args=args)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def fix_case(copies: int) -> dict:
    """Peak RSS of ``shaderlint --fix --unsafe-fixes -j 1`` on ``copies`` copies of the examples."""
    d = tempfile.mkdtemp(prefix="shaderlint-bounds-fix-")
    try:
        with open(os.path.join(d, "shaderlint.toml"), "w"):
            pass
        size = 0
        for k in range(copies):
            for p in sorted(glob.glob(os.path.join(ROOT, "examples", "*"))):
                stem, ext = os.path.splitext(os.path.basename(p))
                if ext in (".cu", ".metal", ".comp"):
                    shutil.copy(p, os.path.join(d, f"{stem}_{k}{ext}"))
                    size = max(size, os.path.getsize(p))
        code = textwrap.dedent(f"""
            import resource, sys, time
            sys.path.insert(0, {ROOT!r})
            from shaderlint.cli import main
            t0 = time.process_time()
            main(["--no-cache", "-j", "1", "--fix", "--unsafe-fixes", "-q", {d!r}])
            print(time.process_time() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
        """)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=d,
                             env=dict(os.environ, SHADERLINT_CACHE_DIR=os.path.join(d, ".cache")))
        cpu, peak = out.stdout.strip().splitlines()[-1].split()
        return {"cpu": float(cpu), "peak": int(peak), "size": size}
    finally:
        shutil.rmtree(d, ignore_errors=True)


CASES = {
    "nested subscripts metal 200,000": ("nested", "metal", 200_000, ("a[", "0", "]")),
    "nested subscripts cuda 60,000": ("nested", "cuda", 60_000, ("a[", "0", "]")),
    "nested calls cuda 490 (at the limit)": ("nested", "cuda", 490, ("f(", "0", ")")),
    "nested subscripts metal 490 (at the limit)": ("nested", "metal", 490, ("a[", "0", "]")),
    "nested subscripts cuda 2,000 (6 KB)": ("nested", "cuda", 2_000, ("a[", "0", "]")),
    "nested subscripts cuda 5,000 (15 KB)": ("nested", "cuda", 5_000, ("a[", "0", "]")),
    "unclosed { cuda 100,000": ("unclosed", "{", 100_000),
    "unclosed ( cuda 100,000": ("unclosed", "(", 100_000),
    "examples cuda 1 MiB": ("examples", "cuda", 1 << 20),
    "examples metal 1 MiB": ("examples", "metal", 1 << 20),
    "examples glsl 1 MiB": ("examples", "glsl", 1 << 20),
    "large 50 MB (refused)": ("large", 50_000_000),
}


def main(argv: list[str]) -> int:
    pick = argv[0] if argv else ""
    bad = 0
    print(f"{'case':44} {'size':>10} {'CPU s':>7} {'budget':>7} {'over MB':>8} {'bound MB':>9}  SL001")
    for name, args in CASES.items():
        if pick not in name:
            continue
        r = lint_case(*args)
        bound = memory_bound(r["size"])
        ok = r["cpu"] <= r["budget"] + 0.5 and r["over"] <= bound
        bad += not ok
        print(f"{name:44} {r['size']:>10,} {r['cpu']:>7.2f} {r['budget']:>7.3g} {r['over'] / 2**20:>8.0f} "
              f"{bound / 2**20:>9.0f}  {(r['sl001'] or [''])[0]}{'' if ok else '  <-- OVER'}", flush=True)
    if pick in "fix --unsafe-fixes":
        one, ten = fix_case(1), fix_case(10)
        grow = ten["peak"] - one["peak"]
        ok = grow <= 20 << 20  # nothing of a fixed file stays alive after it
        bad += not ok
        print(f"--fix --unsafe-fixes: peak {one['peak'] / 2**20:.0f} MB for the examples ({one['cpu']:.1f} s), "
              f"{ten['peak'] / 2**20:.0f} MB for 10 copies ({ten['cpu']:.1f} s): {grow / 2**20:+.0f} MB"
              f"{'' if ok else '  <-- GROWS'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
