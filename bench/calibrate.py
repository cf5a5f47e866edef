"""Calibrate the static register estimator against ptxas (CUDA) and RADV (GLSL compute).

    python bench/calibrate.py                 # compile bench/calibration/*.cu live (needs nvcc)
    python bench/calibrate.py --reference     # use bench/calibration/ptxas_reference.json
    python bench/calibrate.py --reference --fit   # grid-search the coefficients on sm_80,
                                                  # with leave-one-file-out cross-validation
    python bench/calibrate.py --radv DIR      # GLSL compute shaders under DIR against Mesa's RADV
                                              # (glslang-tools, mesa-vulkan-drivers; no GPU)
    python bench/calibrate.py --realcode      # real kernels of the pinned corpus against ptxas,
                                              # leave-one-project-out (bench/realcode_calibration.py)

``--radv`` takes every ``.comp`` file (and ``.glsl`` file the GLSL front end
calls compute) under DIR that glslangValidator compiles on its own (no defines;
the file's directory on the include path), measures it with RADV on the
``--radv-target`` profile's chip and wave size, and compares the register
model's estimate for the same profile: exact matches after rounding the
estimate up to the VGPR allocation granule (RADV reports allocated VGPRs),
median absolute error, Spearman's rho, against the constant baseline "8 VGPRs".

For each architecture (sm_80, sm_90) it prints the number of kernels, Spearman's
rank correlation between estimated and measured registers, the median absolute
percentage error, the share of kernels within ±25 %, how often the estimate
agrees with ptxas on whether a kernel needs stack memory, and the worst
outliers. The estimator never sees ptxas's numbers except through ``--fit``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CORPUS = HERE / "calibration"
REFERENCE = CORPUS / "ptxas_reference.json"
sys.path.insert(0, str(REPO))

from shaderlint.estimate.registers import DEFAULT_COEFFICIENTS, Coefficients, estimate_kernel  # noqa: E402
from shaderlint.estimate.targets import get_target  # noqa: E402
from shaderlint.languages import FRONT_ENDS  # noqa: E402
from shaderlint.model.build import build_model  # noqa: E402
from shaderlint.model.source import Source  # noqa: E402

ARCHS = ("sm_80", "sm_90")


def split_args(text: str | None) -> list[str]:
    """``"float, 4"`` -> ``["float", "4"]`` (commas inside <> or () kept)."""
    if not text:
        return []
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def load_models() -> dict[str, object]:
    models = {}
    for path in sorted(CORPUS.glob("*.cu")):
        data = path.read_bytes()
        parsed = FRONT_ENDS["cuda"].parse(Source(str(path), data))
        models[path.name] = build_model(parsed)
    return models


def measured(arch: str, use_reference: bool) -> list[dict]:
    """ptxas rows: file, kernel, template_args, registers, stack_bytes."""
    if use_reference:
        data = json.loads(REFERENCE.read_text())
        return [r for r in data["archs"].get(arch, [])]
    from shaderlint.estimate.ptxas import compile_ptxas, ptxas_available

    if not ptxas_available():
        sys.exit("nvcc is not on PATH: use --reference")
    rows = []
    for path in sorted(CORPUS.glob("*.cu")):
        res = compile_ptxas(path, arch)
        if res.error:
            print(f"  {path.name}: {res.error}", file=sys.stderr)
        for k in res.values():
            head = k.demangled.split("(", 1)[0]
            at = head.rfind(k.name + "<")
            targs = head[at + len(k.name) + 1: head.rfind(">")] if at >= 0 else None
            rows.append({"file": path.name, "kernel": k.name, "template_args": targs, "registers": k.registers,
                         "stack_bytes": k.stack_bytes})
    return rows


SKIPPED: dict[str, set] = {}


def estimate_rows(models, rows: list[dict], arch: str, coeffs: Coefficients) -> list[tuple[dict, float, int]]:
    target = get_target(arch)
    out = []
    skipped = SKIPPED.setdefault(arch, set())
    for r in rows:
        model = models.get(r["file"])
        f = next((k for k in model.kernels if k.name == r["kernel"]), None) if model is not None else None
        if f is None or f.body is None:
            skipped.add((r["file"], r["kernel"]))  # e.g. a body written as a macro the parser cannot see
            continue
        args = split_args(r.get("template_args"))
        bindings = dict(zip(f.template_params, args)) if args and len(args) == len(f.template_params) else None
        est = estimate_kernel(model, f, target, bindings=bindings, coefficients=coeffs)
        out.append((r, est.registers_exact, est.stack_bytes))
    return out


def ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(a: list[float], b: list[float]) -> float:
    if not a:
        return 0.0
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else 0.0


def metrics(results: list[tuple[dict, float, int]]) -> dict:
    est = [e for _, e, _ in results]
    real = [r["registers"] for r, _, _ in results]
    ape = [abs(e - r) / r for e, r in zip(est, real)]
    stack_agree = sum((s > 0) == (r["stack_bytes"] > 0) for r, _, s in results)
    return {
        "kernels": len(results),
        "spearman": spearman(est, real),
        "median_ape": statistics.median(ape) if ape else 0.0,
        "within_25": sum(a <= 0.25 for a in ape) / len(ape) if ape else 0.0,
        "stack_agreement": stack_agree / len(results) if results else 0.0,
    }


def report(arch: str, results, worst: int) -> dict:
    m = metrics(results)
    if SKIPPED.get(arch):
        names = ", ".join(sorted(k for _, k in SKIPPED[arch]))
        print(f"{arch}: {len(SKIPPED[arch])} kernels not estimated (not found in the kernel model): {names}")
    print(f"{arch}: {m['kernels']} kernels  Spearman rho {m['spearman']:.3f}  median |error| "
          f"{100 * m['median_ape']:.1f} %  within ±25 %: {100 * m['within_25']:.1f} %  "
          f"stack yes/no agrees: {100 * m['stack_agreement']:.1f} %")
    ranked = sorted(results, key=lambda x: -abs(x[1] - x[0]["registers"]) / x[0]["registers"])
    if worst:
        print(f"  worst {worst}:")
        for r, e, s in ranked[:worst]:
            name = r["kernel"] + (f"<{r['template_args']}>" if r.get("template_args") else "")
            print(f"    {r['file']:26} {name:40} ptxas {r['registers']:4d}  estimate {e:6.1f}  "
                  f"stack ptxas {r['stack_bytes']:5d} est {s:5d}")
    return m


def score(m: dict) -> float:
    return m["median_ape"] - 0.5 * m["spearman"] - 0.25 * m["within_25"]


GRID = {
    "base": [3.0, 4.0, 5.0, 6.0],
    "batch": [0.5, 1.0],
    "stack_array": [8.0, 12.0, 16.0],
    "hoist": [2, 3, 4],
    "stream": [1.0, 2.0],
}


def fit(models, rows, arch: str) -> Coefficients:
    """Grid search on all files, then leave-one-file-out: fit on the others, score the held-out file."""
    keys = list(GRID)
    combos = [dict(zip(keys, vals)) for vals in itertools.product(*(GRID[k] for k in keys))]
    cache: dict[int, list] = {}
    t0 = time.time()
    for i, combo in enumerate(combos):
        cache[i] = estimate_rows(models, rows, arch, replace(DEFAULT_COEFFICIENTS, **combo))
    print(f"  evaluated {len(combos)} coefficient sets in {time.time() - t0:.0f} s")
    best = min(range(len(combos)), key=lambda i: score(metrics(cache[i])))
    print(f"  best on all files: {combos[best]}")
    files = sorted({r["file"] for r in rows})
    held: list = []
    for fname in files:
        train = min(range(len(combos)),
                    key=lambda i: score(metrics([x for x in cache[i] if x[0]["file"] != fname])))
        held.extend(x for x in cache[train] if x[0]["file"] == fname)
    m = metrics(held)
    print(f"  leave-one-file-out: Spearman rho {m['spearman']:.3f}  median |error| {100 * m['median_ape']:.1f} %  "
          f"within ±25 %: {100 * m['within_25']:.1f} %")
    return replace(DEFAULT_COEFFICIENTS, **combos[best])


def radv_rows(root: Path, target_name: str, defines: list[str] = (), includes: bool = False) -> tuple[list[dict], dict]:
    """(path, estimate, measured) rows for the GLSL compute shaders under ``root``, and counts."""
    from shaderlint.config import Settings
    from shaderlint.estimate.radv import Job, compile_spirv, measure_spirv, subgroup_size_for, unavailable_reason
    from shaderlint.report import report_file

    missing = unavailable_reason()
    if missing:
        sys.exit(f"RADV {missing}")
    target = get_target(target_name)
    if target.radv_family is None:
        sys.exit(f"{target_name} is not an AMD target")
    wave = subgroup_size_for(target)
    glsl = FRONT_ENDS["glsl"]
    paths = []
    for p in sorted(root.rglob("*")):
        if p.suffix == ".comp" or (p.suffix == ".glsl" and p.is_file()
                                   and glsl.stage_for(str(p), Source(str(p), p.read_bytes())) == "compute"):
            paths.append(p)
    counts = {"files": len(paths), "compiled": 0, "measured": 0, "one_thread_groups": 0, "estimated": 0}
    compiled = []
    for p in paths:
        if includes:  # as glslc/shaderc compile: #include without the extension line
            import re

            text = re.sub(r"^(#version[^\n]*\n)", r"\1#extension GL_GOOGLE_include_directive : enable\n",
                          p.read_text(encoding="utf-8", errors="replace"), count=1, flags=re.M)
            spirv, _ = compile_spirv(text, defines=defines, include_dirs=[str(p.parent)])
        else:
            spirv, _ = compile_spirv(p, defines=defines)
        if spirv is not None:
            compiled.append((p, spirv))
    counts["compiled"] = len(compiled)
    results = measure_spirv([Job(spirv, target.radv_family, wave) for _, spirv in compiled])
    rows = []
    for (p, _), r in zip(compiled, results):
        if not r.ok:
            continue
        counts["measured"] += 1
        if r.local_size_unknown or not declares_local_size(p):
            # a workgroup size left to the application (a specialization constant without a default, or
            # no declaration at all: ncnn adds its own at run time): compiled as one thread, where every
            # value is uniform, not as the application runs it; left out
            counts["one_thread_groups"] += 1
            continue
        # the variant glslang compiled: the estimate's #if branches decided with the same defines
        est = next((row for row in report_file(str(p), Settings(defines=tuple(defines)), target=target)
                    if row.kernel == "main"), None)
        if est is None or est.registers is None:
            continue
        counts["estimated"] += 1
        rows.append({"file": str(p.relative_to(root)), "estimate": est.registers, "radv": r.vgprs,
                     "pre_sched": r.pre_sched_vgprs, "spilled": r.spilled_vgprs or 0})
    return rows, counts


def declares_local_size(path: Path, seen: set | None = None) -> bool:
    """Whether the shader at ``path`` or a file it ``#include``s (beside it) declares its workgroup size
    (``local_size_x``…): glslang compiles one without any as a one-invocation workgroup."""
    import re

    seen = set() if seen is None else seen
    if path in seen or not path.is_file():
        return False
    seen.add(path)
    text = path.read_text(encoding="utf-8", errors="replace")
    if "local_size_" in text:
        return True
    return any(declares_local_size(path.parent / inc, seen)
               for inc in re.findall(r'^\s*#\s*include\s*"([^"]+)"', text, flags=re.M))


def radv_split(rows: list[dict], granule: int) -> dict:
    """The development / held-out split of the GLSL calibration (fixed in session 11, before any
    change: rows sorted by path, even positions are the development half, the only shaders looked at)
    with, per half, exact allocations, median |error| and Spearman, and the same above the minimum
    (RADV allocates more than the constant baseline's 8 VGPRs, or two granules where the granule is
    smaller): median relative error and Spearman."""
    def up(x: float) -> int:
        return max(granule, -(-int(x) // granule) * granule)

    ordered = sorted(rows, key=lambda r: r["file"])
    floor = granule if granule >= 8 else 2 * granule
    out = {}
    for name, part in (("development", ordered[0::2]), ("held-out", ordered[1::2]), ("all", ordered)):
        if not part:
            continue
        err = [abs(up(r["estimate"]) - r["radv"]) for r in part]
        above = [r for r in part if r["radv"] > floor]
        out[name] = {
            "shaders": len(part),
            "exact": sum(e == 0 for e in err) / len(part),
            "median_abs_error": statistics.median(err),
            "spearman": spearman([float(r["estimate"]) for r in part], [float(r["radv"]) for r in part]),
            "above_minimum": len(above),
            "above_median_ape": statistics.median(abs(up(r["estimate"]) - r["radv"]) / r["radv"] for r in above)
            if above else 0.0,
            "above_spearman": spearman([float(r["estimate"]) for r in above], [float(r["radv"]) for r in above]),
        }
    return out


def radv_metrics(rows: list[dict], granule: int) -> dict:
    def up(x: float) -> int:
        return max(granule, -(-int(x) // granule) * granule)

    real = [r["radv"] for r in rows]
    out = {"shaders": len(rows)}
    for name, guess in (("estimate", [r["estimate"] for r in rows]), ("constant_8", [8] * len(rows))):
        rounded = [up(g) for g in guess]
        err = [abs(g - m) for g, m in zip(rounded, real)]
        out[name] = {
            "exact": sum(e == 0 for e in err) / len(err) if err else 0.0,
            "median_abs_error": statistics.median(err) if err else 0.0,
            "median_ape": statistics.median(e / m for e, m in zip(err, real)) if err else 0.0,
            "within_25": sum(e <= 0.25 * m for e, m in zip(err, real)) / len(err) if err else 0.0,
            "spearman": spearman([float(g) for g in guess], [float(m) for m in real]),
            "under": sum(g < m for g, m in zip(rounded, real)) / len(err) if err else 0.0,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reference", action="store_true", help="use ptxas_reference.json instead of running nvcc")
    ap.add_argument("--arch", action="append", choices=ARCHS, help="architectures (default: sm_80 and sm_90)")
    ap.add_argument("--worst", type=int, default=8, help="outliers to list per architecture")
    ap.add_argument("--fit", action="store_true", help="grid-search coefficients on sm_80 (slow)")
    ap.add_argument("--json", help="write the metrics to this file")
    ap.add_argument("--radv", metavar="DIR", type=Path, help="compare on the GLSL compute shaders under DIR "
                                                             "against Mesa's RADV instead of ptxas")
    ap.add_argument("--radv-target", default="rdna2-wave64", help="AMD profile for --radv (default rdna2-wave64)")
    ap.add_argument("--radv-define", action="append", default=[], metavar="NAME=VALUE",
                    help="--radv: a macro for glslangValidator (a shader variant, as a project's build passes)")
    ap.add_argument("--radv-includes", action="store_true",
                    help="--radv: allow #include without GL_GOOGLE_include_directive (as glslc does)")
    ap.add_argument("--realcode", action="store_true",
                    help="the real-code corpus's CUDA kernels against ptxas, leave-one-project-out "
                         "(see bench/realcode_calibration.py)")
    ap.add_argument("--sample", type=int, default=200,
                    help="--realcode: at most N files, stratified by package (default 200; 0: all)")
    ap.add_argument("--packages", help="--realcode: comma-separated package names")
    ap.add_argument("--cached-only", action="store_true",
                    help="--realcode: only files already in the nvcc cache (python bench/realcode_nvcc.py fills it)")
    ap.add_argument("--markdown", action="store_true", help="--realcode: also print the note's tables")
    ap.add_argument("--write-intervals", action="store_true",
                    help="--realcode: write the measured intervals the report shows with each CUDA estimate "
                         "to shaderlint/estimate/intervals.json (see shaderlint/estimate/uncertainty.py)")
    ap.add_argument("--shipped-walk", action="store_true",
                    help="--realcode: walk each kernel with the shipped coefficients only (the LOPO refit then "
                         "searches the post-walk terms alone; a twelfth of the CPU)")
    ap.add_argument("--no-context", action="store_true",
                    help="--realcode: build each file's model alone, without its project context (the headers "
                         "read through -I, their macros)")
    args = ap.parse_args(argv)
    if args.realcode:
        import realcode_calibration

        if args.sample == 0:
            args.sample = None
        return realcode_calibration.run(args)
    if args.radv is not None:
        t0 = time.process_time()
        rows, counts = radv_rows(args.radv, args.radv_target, args.radv_define, args.radv_includes)
        target = get_target(args.radv_target)
        m = radv_metrics(rows, target.register_alloc_unit // target.simd_width)
        m["counts"] = counts
        print(f"{args.radv_target} ({target.radv_family}): {counts['files']} compute shaders, "
              f"{counts['compiled']} compile{' standalone' if not args.radv_define else ' with the defines'}, "
              f"{counts['measured']} measured, {counts['one_thread_groups']} left out (workgroup size set only by "
              f"the application: compiled as one invocation), "
              f"{counts['estimated']} estimated ({time.process_time() - t0:.1f} s CPU in this process)")
        for name in ("estimate", "constant_8"):
            x = m[name]
            print(f"  {name:10}  exact {100 * x['exact']:5.1f} %  median |error| {x['median_abs_error']:.0f} VGPRs "
                  f"({100 * x['median_ape']:.1f} %)  within ±25 %: {100 * x['within_25']:5.1f} %  "
                  f"Spearman {x['spearman']:.3f}  below RADV: {100 * x['under']:.1f} %")
        m["split"] = radv_split(rows, target.register_alloc_unit // target.simd_width)
        for name, x in m["split"].items():
            print(f"  {name:11} {x['shaders']:3d} shaders: exact {100 * x['exact']:5.1f} %  median |error| "
                  f"{x['median_abs_error']:.0f} VGPRs  Spearman {x['spearman']:.2f};  above the minimum "
                  f"({x['above_minimum']}): median error {100 * x['above_median_ape']:.0f} %, "
                  f"Spearman {x['above_spearman']:.2f}")
        ranked = sorted(rows, key=lambda r: -abs(r["estimate"] - r["radv"]) / r["radv"])
        if args.worst:
            print(f"  worst {args.worst}:")
            for r in ranked[:args.worst]:
                print(f"    {r['file']:70} RADV {r['radv']:4d} (pre-sched {r['pre_sched']}, spilled "
                      f"{r['spilled']})  estimate {r['estimate']:4d}")
        if args.json:
            Path(args.json).write_text(json.dumps({"metrics": m, "rows": rows}, indent=1) + "\n")
        return 0
    models = load_models()
    out = {}
    coeffs = DEFAULT_COEFFICIENTS
    for arch in args.arch or ARCHS:
        rows = measured(arch, args.reference)
        if args.fit and arch == "sm_80":
            coeffs = fit(models, rows, arch)
        results = estimate_rows(models, rows, arch, coeffs)
        out[arch] = report(arch, results, args.worst)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
