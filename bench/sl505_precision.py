"""SL505 (low-occupancy) on the real-code corpus, judged against the occupancy the compiler implies.

    python bench/sl505_precision.py                  # sm_80, every corpus CUDA file ptxas compiled
    python bench/sl505_precision.py --arch sm_90 --threshold 0.5

For each CUDA file of the pinned corpus whose ptxas report is in the benchmark's nvcc cache
(``python bench/realcode_nvcc.py`` fills it; see ``bench/realcode_nvcc.py`` for the flags that
stand in for each package's build), the rule runs twice as a user would run it, one process per
file with a configuration giving the same include directories and macros:

* ``--compiler none``: a lint without a compiler (register verdicts are left to a compiler, so
  what can fire is threadgroup memory, group size and the resident-group limit);
* ``--compiler ptxas``: registers counted by nvcc during the lint.

Each finding names a kernel, its occupancy and the group size it assumed. It is **right** when the
occupancy that ptxas's registers and static shared memory imply for that kernel at that group size
(the lowest over the kernel's template instances ptxas reports) is below the threshold too, and
**wrong** otherwise. Dynamic shared memory (sized at launch) is not in ptxas's report and can only
lower the true occupancy, so a finding judged wrong could still be right at run time: those are
counted apart as "wrong unless dynamic shared memory". Recall: kernels whose implied occupancy is
below the threshold at a group size the lint knew (a finding with either run names the group size;
kernels with none are not counted).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, REPO)

import realcode_nvcc as nv  # noqa: E402

from shaderlint.estimate.occupancy import occupancy  # noqa: E402
from shaderlint.estimate.targets import get_target  # noqa: E402

_THREADS = re.compile(r"with (\d+) threads per group")
_OCC = re.compile(r"has an occupancy of ([0-9.]+)%")


def _config(path: str, directory: str) -> str:
    """A shaderlint.toml with the include directories and macros ``flags_for`` gives ``path``."""
    flags = nv.flags_for(path)
    dirs = [f[2:] for f in flags if f.startswith("-I")]
    defines = [f[2:] for f in flags if f.startswith("-D")]
    cfg = os.path.join(directory, "shaderlint.toml")
    with open(cfg, "w", encoding="utf-8") as fh:
        fh.write("time-budget = 600\n")
        fh.write("include-dirs = [" + ", ".join(json.dumps(d) for d in dirs) + "]\n")
        fh.write("defines = [" + ", ".join(json.dumps(d) for d in defines) + "]\n")
    return cfg


def lint(path: str, arch: str, compiler: str, threshold: float) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="sl505-") as tmp:
        cfg = _config(path, tmp)
        out = os.path.join(tmp, "out.json")
        env = {**os.environ, "PYTHONPATH": REPO, "SHADERLINT_CACHE_DIR": os.path.join(tmp, "cache")}
        subprocess.run([sys.executable, "-m", "shaderlint", "--select", "SL505", "--compiler", compiler,
                        "--target", arch, "--occupancy-threshold", str(threshold), "--config", cfg,
                        "--format", "json", "-o", out, "--fail-on", "never", "--no-cache", "-q", path],
                       env=env, capture_output=True, text=True, timeout=1800, check=False)
        try:
            with open(out, encoding="utf-8") as fh:
                return json.load(fh)
        except (OSError, ValueError):
            return []


def implied(res, kernel: str, threads: int, arch: str) -> tuple[float, int] | None:
    """The lowest occupancy ptxas's figures imply for ``kernel`` at ``threads``, and the instances seen."""
    target = get_target(arch)
    occs = []
    for k in res.values():
        if k.name != kernel:
            continue
        try:
            occs.append(occupancy(target, threads, float(k.registers), k.shared_bytes).occupancy)
        except ValueError:
            continue
    return (min(occs), len(occs)) if occs else None


def judge(findings: list[dict], res, arch: str, threshold: float) -> list[dict]:
    out = []
    for d in findings:
        if d.get("code") != "SL505":
            continue
        m = _THREADS.search(d["message"])
        shown = _OCC.search(d["message"])
        row = {"path": d["path"], "line": d["line"], "kernel": d.get("kernel"), "message": d["message"],
               "threads": int(m.group(1)) if m else None,
               "shown": float(shown.group(1)) / 100 if shown else None}
        got = implied(res, row["kernel"], row["threads"], arch) if row["threads"] else None
        row["implied"] = got[0] if got else None
        row["verdict"] = ("unknown" if got is None else "right" if got[0] < threshold - 1e-9
                          else "wrong unless dynamic shared memory")
        out.append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", default="sm_80")
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--packages", help="comma-separated package names")
    ap.add_argument("--json", help="write every finding with its verdict here")
    args = ap.parse_args(argv)
    packages = set(args.packages.split(",")) if args.packages else None
    files = []
    for path in nv.cuda_files(packages=packages):
        res = nv.cached(path, args.arch)
        if res is not None and not res.error and len(res):
            files.append((path, res))
    t0 = time.time()
    print(f"{len(files)} corpus CUDA files compiled by ptxas for {args.arch} (cached)", file=sys.stderr)
    doc: dict = {"arch": args.arch, "threshold": args.threshold, "files": len(files), "runs": {}}
    for compiler in ("none", "ptxas"):
        rows = []
        for i, (path, res) in enumerate(files, 1):
            rows += judge(lint(path, args.arch, compiler, args.threshold), res, args.arch, args.threshold)
            if i % 10 == 0:
                print(f"  --compiler {compiler}: {i}/{len(files)} files, {time.time() - t0:.0f} s", file=sys.stderr)
        doc["runs"][compiler] = rows
        right = sum(r["verdict"] == "right" for r in rows)
        wrong = sum(r["verdict"].startswith("wrong") for r in rows)
        unknown = sum(r["verdict"] == "unknown" for r in rows)
        prec = f"{100 * right / (right + wrong):.1f} %" if right + wrong else "undefined (no finding)"
        print(f"--compiler {compiler}: {len(rows)} SL505 findings: {right} right, {wrong} wrong (unless dynamic "
              f"shared memory), {unknown} not matched to a ptxas kernel; precision {prec}")
        for r in rows:
            if r["verdict"] != "right":
                print(f"  {r['verdict']}: {r['path']}:{r['line']} {r['kernel']} shown {r['shown']} implied {r['implied']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
