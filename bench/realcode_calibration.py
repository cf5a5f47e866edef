"""Leave-one-project-out validation of the static register estimator on real kernels nobody here wrote.

    python bench/calibrate.py --realcode [--sample N] [--packages a,b] [--json out.json]

The kernels are those of the real-code corpus (bench/realcode.py, pinned sdists in
``$SHADERLINT_REALCODE_CACHE/src``) that nvcc compiles with the package's include
roots (bench/realcode_nvcc.py: a cache of ptxas's reports, filled in the
background with ``python bench/realcode_nvcc.py``). Each ptxas kernel (a template
instance, demangled) is matched to the estimator's kernel of the same file
(:func:`match_kernel`), estimated as ``bench/calibrate.py`` does
(``estimate_kernel(model, f, target, bindings=...)``, the model built with the
macros nvcc had: ``__CUDA_ARCH__`` and the package's ``-D``), and compared, per
architecture, with:

* the estimator as shipped (nothing in it was fitted on this corpus: every
  package is held out);
* the estimator with its coefficients refitted leave-one-project-out: for each
  package, the coefficient grid (:data:`WALK_GRID` x :data:`POST_GRID`) is scored
  on the other packages and the best set predicts the held-out one;
* a baseline fitted on the kernel's lines of code (log-log least squares),
  also leave-one-project-out.

Held-out predictions are pooled for the figures: kernels, Spearman's rho,
median |error|, share within ±25 %, under/over-estimated share, per band of
ptxas registers (≤32, 33–64, 65–128, >128). The residual quantiles
(10th/50th/90th percentile of log(ptxas/estimate)) per band of the *estimate*
are what an interval such as ``~40 registers (28–55)`` needs; their coverage is
itself checked leave-one-project-out. The occupancy check compares, for kernels
whose group size the estimator knows (a launch in the same file or
``__launch_bounds__``), the occupancy shown with the one ptxas's registers and
static shared memory imply.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import replace

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, REPO)

#: Bands of registers: (label, lowest, highest).
BANDS = (("<=32", 0, 32), ("33-64", 33, 64), ("65-128", 65, 128), (">128", 129, 10 ** 9))

#: Coefficients the walk depends on (bench/calibrate.py's GRID without the post-walk terms).
WALK_GRID = {"hoist": (2, 3, 4), "batch": (0.5, 1.0), "stream": (1.0, 2.0)}
#: Coefficients applied after the walk (registers = max(floor, base + scale * peak + stack_array * on_stack)):
#: calibrate.py's base and stack_array, plus scale and floor, which cost nothing to search.
POST_GRID = {"base": (3.0, 4.0, 5.0, 6.0), "stack_array": (8.0, 12.0, 16.0), "scale": (0.8, 1.0, 1.25, 1.5),
             "floor": (4.0, 8.0)}

#: Reasons a ptxas kernel has no estimate.
NOT_IN_FILE = "defined outside the compiled file (a header): the model of the file does not see it"
AMBIGUOUS = "several kernels of that name and parameter count in the file"
NO_BODY = "the kernel's body was not parsed"
FAILED = "the estimator raised or ran out of time"


# ---- matching ptxas's kernels to the model's -------------------------------------------------------------
def _split_top(text: str) -> list[str]:
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _head_and_params(demangled: str) -> tuple[str, str | None]:
    """``void ns::k<4>(float*, int)`` -> (``void ns::k<4>``, ``float*, int``)."""
    text = demangled.strip()
    if not text.endswith(")"):
        return text, None
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        if text[i] == ")":
            depth += 1
        elif text[i] == "(":
            depth -= 1
            if depth == 0:
                return text[:i].rstrip(), text[i + 1:-1]
    return text, None


def normalize_arg(arg: str) -> str:
    """A demangled template argument as source would write it: ``(ggml_type)2`` -> ``2``, ``4u`` -> ``4``,
    ``&_INTERNAL_ea5b8fe6_8_unary_cu_eb6d5366::op_cos`` (a function of internal linkage) -> ``op_cos``."""
    a = arg.strip()
    m = re.fullmatch(r"&?\s*(?:_INTERNAL_\w+::)?([A-Za-z_][\w:]*)", a)
    if m and (a.startswith("&") or a.startswith("_INTERNAL_")):
        return m.group(1)
    m = re.fullmatch(r"\((?:[\w:<> ]+)\)\s*(-?\d+)", a)
    if m:
        return m.group(1)
    m = re.fullmatch(r"(-?\d+)(?:[uU]|[lL]{1,2}|[uU][lL]{1,2}|[lL]{1,2}[uU])", a)
    if m:
        return m.group(1)
    return a


def template_args(demangled: str, name: str) -> list[str] | None:
    """The template arguments of the instance ``demangled`` of kernel ``name`` (None: not a template)."""
    head, _ = _head_and_params(demangled)
    if not head.endswith(">"):
        return None
    at = head.rfind(name + "<")
    if at < 0:
        return None
    inner = head[at + len(name) + 1:-1]
    return [normalize_arg(a) for a in _split_top(inner)]


def param_count(demangled: str) -> int | None:
    """Parameters in a demangled signature (None when it has no parameter list)."""
    _, params = _head_and_params(demangled)
    if params is None:
        return None
    params = params.strip()
    if params in ("", "void"):
        return 0
    return len(_split_top(params))


def match_kernel(functions, name: str, demangled: str):
    """(function, reason): the model's kernel for a ptxas kernel, by base name, then by parameter
    count when the name is overloaded; ``reason`` says why there is none."""
    cands = [f for f in functions if f.name == name]
    if not cands:
        return None, NOT_IN_FILE
    if len(cands) > 1:
        n = param_count(demangled)
        cands = [f for f in cands if len(f.params) == n] if n is not None else cands
        if len(cands) != 1:
            return None, AMBIGUOUS if cands else NOT_IN_FILE
    f = cands[0]
    if f.body is None:
        return None, NO_BODY
    return f, None


def bindings_for(f, args: list[str] | None, model=None) -> dict[str, str] | None:
    """Template parameter -> argument (None: unbound). With the model, arguments are placed by the
    position of each parameter in the template's declaration, so that parameters the model does not
    track and a trailing pack (``typename... Args``) are skipped (a function pointer ``float
    (*op)(float)`` is tracked: bound to the function's name); without it, only when the counts agree."""
    params = list(f.template_params)
    if not args or not params:
        return None
    decl = getattr(f, "outer", None)
    plist = decl.child_by_field_name("parameters") if decl is not None and model is not None else None
    if plist is None:
        return dict(zip(params, args)) if len(args) == len(params) else None
    out: dict[str, str] = {}
    nodes = [n for n in plist.named_children if n.type != "comment"]
    packs: set[str] = set()
    for i, node in enumerate(nodes):
        if "variadic" in node.type:
            packs = set(re.findall(r"[A-Za-z_]\w*", model.text(node))) & set(params)
            break
        if i >= len(args):
            return None
        words = set(re.findall(r"[A-Za-z_]\w*", model.text(node)))
        named = [p for p in params if p in words]
        if len(named) == 1:
            out[named[0]] = args[i]
    else:
        if len(nodes) != len(args):
            return None
    return out if set(out) == set(params) - packs else None


def kernel_lines(source: bytes, start: int, end: int) -> int:
    """Non-blank lines of a kernel's definition (the lines-of-code baseline's input)."""
    return max(1, sum(1 for ln in source[start:end].splitlines() if ln.strip()))


#: Calls the estimator costs by rule (math library, intrinsics, atomics, vector constructors): not "unseen".
_KNOWN_CALL = re.compile(
    r"^(__\w+|atomic\w+|make_\w+|(u?(char|short|int|long|longlong)|float|double|half|bool)\d?|u?int\d+_t|size_t|"
    r"min|max|f?absf?|fminf?|"
    r"fmaxf?|sqrtf?|rsqrtf?|fmaf?|floorf?|ceilf?|roundf?|truncf?|rintf?|exp2f?|copysignf?|isnan|isinf|isfinite|"
    r"signbit|static_assert|sizeof|printf|clock|clock64|tex\w+|surf\w+|static_cast|reinterpret_cast|const_cast|"
    r"dynamic_cast)$")


def unseen_calls(model, functions) -> list[str]:
    """Callees of ``functions`` (a kernel and the helpers the estimate inlined) that the file does not
    define and the walk does not cost by rule: header and library functions, functor and
    function-pointer template arguments, member calls. ``assert`` is listed apart (``__assertfail``)."""
    from shaderlint.estimate.liveness import _F32_SPECIAL, _F64_SPECIAL

    spans = [(g.body.start_byte, g.body.end_byte) for g in functions if g.body is not None]
    out = set()
    for call in model.nodes("call"):
        if not any(s <= call.start_byte < e for s, e in spans):
            continue
        name = model.callee_name(call)
        if not name:
            continue
        fn = call.child_by_field_name("function")
        member = fn is not None and fn.type == "field_expression"
        g = model.function_by_name.get(name)
        if fn is not None and fn.type == "identifier":
            v = model.resolve(fn)
            if v is not None and v.init is not None and v.init.type == "lambda_expression":
                continue  # a local lambda: the walk inlines it
        if name == "assert":
            out.add("assert")
        elif member:
            out.add("." + name)
        elif g is not None and g.body is not None:
            continue
        elif name in _F32_SPECIAL or name in _F64_SPECIAL or _KNOWN_CALL.match(name):
            continue
        else:
            out.add(name)
    return sorted(out)


# ---- registers from the walk -------------------------------------------------------------------------------
def registers_from(peak: float, on_stack: bool, cap: float, base: float, scale: float, floor: float,
                   stack_array: float) -> float:
    """``estimate_kernel``'s registers after the walk (NVIDIA: whole registers), capped."""
    regs = max(floor, base + scale * peak + (stack_array if on_stack else 0.0))
    return float(min(math.ceil(max(regs, 1.0) - 1e-9), cap))


def band_of(regs: float) -> str:
    for label, lo, hi in BANDS:
        if regs <= hi:
            return label
    return BANDS[-1][0]


# ---- metrics ----------------------------------------------------------------------------------------------
def spearman(a, b) -> float:
    import numpy as np
    from scipy.stats import rankdata

    if len(a) < 2:
        return 0.0
    ra, rb = rankdata(a), rankdata(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    d = float(np.sqrt((ra * ra).sum() * (rb * rb).sum()))
    return float((ra * rb).sum() / d) if d else 0.0


def metrics(est: list[float], real: list[float]) -> dict:
    """Figures of estimates against ptxas, overall and per band of ptxas registers."""
    out: dict = {"kernels": len(est)}
    if not est:
        return out
    ape = [abs(e - r) / r for e, r in zip(est, real)]
    out.update({
        "spearman": spearman(est, real),
        "median_ape": statistics.median(ape),
        "within_25": sum(a <= 0.25 for a in ape) / len(ape),
        "under": sum(e < r for e, r in zip(est, real)) / len(est),
        "over": sum(e > r for e, r in zip(est, real)) / len(est),
        "bands": {},
    })
    for label, lo, hi in BANDS:
        idx = [i for i, r in enumerate(real) if lo <= r <= hi]
        if not idx:
            continue
        out["bands"][label] = {
            "kernels": len(idx),
            "median_ape": statistics.median(ape[i] for i in idx),
            "median_signed": statistics.median((est[i] - real[i]) / real[i] for i in idx),
            "under": sum(est[i] < real[i] for i in idx) / len(idx),
            "within_25": sum(ape[i] <= 0.25 for i in idx) / len(idx),
        }
    return out


def score(m: dict) -> float:
    """What the fit minimizes (bench/calibrate.py's score)."""
    return m["median_ape"] - 0.5 * m["spearman"] - 0.25 * m["within_25"]


def halves(packages) -> dict[str, str]:
    """Package -> ``"dev"`` or ``"held-out"``: the packages measured, sorted by name, taken in turn
    (the first a development package, the second held out, ...). The rule is fixed before any work
    on the model: changes are found by looking at development kernels only, and the held-out
    packages' figures say whether they carry over."""
    return {p: ("dev" if i % 2 == 0 else "held-out") for i, p in enumerate(sorted(set(packages)))}


def lopo_groups(packages: list[str]) -> list[tuple[str, list[int], list[int]]]:
    """(held-out package, training indices, held-out indices) for each package."""
    out = []
    for p in sorted(set(packages)):
        held = [i for i, q in enumerate(packages) if q == p]
        train = [i for i, q in enumerate(packages) if q != p]
        out.append((p, train, held))
    return out


def fit_loc(lines: list[int], real: list[float]) -> tuple[float, float]:
    """log(registers) = a + b log(lines), least squares."""
    xs = [math.log(max(1, n)) for n in lines]
    ys = [math.log(max(1.0, r)) for r in real]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return my - b * mx, b


def predict_loc(ab: tuple[float, float], lines: int) -> float:
    return math.exp(ab[0] + ab[1] * math.log(max(1, lines)))


def lopo_loc(rows: list[dict]) -> list[float]:
    """Held-out predictions of the lines-of-code baseline."""
    pred = [0.0] * len(rows)
    for _, train, held in lopo_groups([r["package"] for r in rows]):
        if not train:
            continue
        ab = fit_loc([rows[i]["lines"] for i in train], [rows[i]["registers"] for i in train])
        for i in held:
            pred[i] = predict_loc(ab, rows[i]["lines"])
    return pred


#: --shipped-walk: only the shipped coefficients' walk per kernel (a twelfth of the CPU); the LOPO refit
#: then searches the post-walk terms alone. --no-context: models built from the file alone (the harness
#: before session 11's project contexts). Both are part of the estimate cache's key.
OPTIONS = {"shipped_walk": False, "no_context": False}


def walk_grid() -> dict:
    if OPTIONS["shipped_walk"]:
        from shaderlint.estimate.registers import DEFAULT_COEFFICIENTS as d

        return {"hoist": (d.hoist,), "batch": (d.batch,), "stream": (d.stream,)}
    return WALK_GRID


def combos() -> list[dict]:
    import itertools

    grid = walk_grid()
    walk = [dict(zip(grid, v)) for v in itertools.product(*grid.values())]
    post = [dict(zip(POST_GRID, v)) for v in itertools.product(*POST_GRID.values())]
    return [{**w, **p} for w in walk for p in post]


def walk_key(c: dict) -> str:
    return f"h{c['hoist']}b{c['batch']}s{c['stream']}"


def predictions(rows: list[dict], c: dict) -> list[float]:
    wk = walk_key(c)
    out = []
    for r in rows:
        peak, on_stack = r["walks"][wk]
        out.append(registers_from(peak, on_stack, r["cap"], c["base"], c["scale"], c["floor"], c["stack_array"]))
    return out


def lopo_fit(rows: list[dict], grid: list[dict] | None = None) -> tuple[list[float], dict[str, dict]]:
    """Held-out predictions of the estimator refitted on the other packages, and the set chosen per package."""
    grid = grid or combos()
    real = [float(r["registers"]) for r in rows]
    preds = [predictions(rows, c) for c in grid]
    out = [0.0] * len(rows)
    chosen: dict[str, dict] = {}
    for pkg, train, held in lopo_groups([r["package"] for r in rows]):
        if not train:
            continue
        tr = [real[i] for i in train]
        best = min(range(len(grid)), key=lambda k: score(metrics([preds[k][i] for i in train], tr)))
        chosen[pkg] = grid[best]
        for i in held:
            out[i] = preds[best][i]
    return out, chosen


def best_fit(rows: list[dict], grid: list[dict] | None = None) -> dict:
    """The coefficient set that scores best on every package (what a refit would ship)."""
    grid = grid or combos()
    real = [float(r["registers"]) for r in rows]
    return min(grid, key=lambda c: score(metrics(predictions(rows, c), real)))


def _quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    if not s:
        return 0.0
    pos = q * (len(s) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def residual_quantiles(est: list[float], real: list[float], qs=(0.1, 0.5, 0.9)) -> dict[str, dict]:
    """Per band of the *estimate*: kernels and quantiles of log(ptxas / estimate) (what an interval
    around a shown estimate needs: est * exp(q10) .. est * exp(q90))."""
    out: dict[str, dict] = {}
    for label, lo, hi in BANDS:
        res = [math.log(r / e) for e, r in zip(est, real) if lo <= e <= hi and e > 0 and r > 0]
        if not res:
            continue
        out[label] = {"kernels": len(res), **{f"q{round(100 * q)}": _quantile(res, q) for q in qs}}
    return out


def interval(estimate: float, quantiles: dict[str, dict], lo_q: str = "q10", hi_q: str = "q90"
             ) -> tuple[float, float] | None:
    q = quantiles.get(band_of(estimate))
    if q is None:
        return None
    return estimate * math.exp(q[lo_q]), estimate * math.exp(q[hi_q])


def floor(row: dict) -> bool:
    """The report shows the row's estimate as a floor (``~28+``: it leaves out code it knows is
    there: calls it cannot see, or the part of a kernel past the walk's visit limit), without an
    interval: such rows neither train nor test the intervals (``KernelEstimate.lower_bound``)."""
    return bool(row.get("estimator_unseen")) or row.get("complete") is False


def lopo_coverage(rows: list[dict], est: list[float], min_kernels: int = 30) -> dict:
    """Share of held-out kernels whose ptxas count falls in the interval the report would show
    (:func:`lopo_intervals`: built from the other packages' residuals, rounded outward, withheld in
    sparse bands and for floors), over the kernels shown with one."""
    inside = total = 0
    per_band: Counter = Counter()
    per_band_in: Counter = Counter()
    for i, iv in enumerate(lopo_intervals(rows, est, min_kernels)):
        if iv is None:
            continue
        total += 1
        ok = iv[0] <= rows[i]["registers"] <= iv[1]
        inside += ok
        per_band[band_of(est[i])] += 1
        per_band_in[band_of(est[i])] += ok
    return {"kernels": total, "coverage": inside / total if total else 0.0,
            "bands": {b: per_band_in[b] / per_band[b] for b in per_band}}


INTERVALS_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                              "shaderlint", "estimate", "intervals.json")


def _nvcc_release() -> str:
    from shaderlint.estimate.ptxas import nvcc_version

    v = nvcc_version() or ""
    m = re.search(r"cuda_([0-9]+\.[0-9]+)", v)
    return f"nvcc {m.group(1)}" if m else "nvcc"


def write_intervals(doc: dict, rows: list[dict]) -> None:
    """The table shaderlint/estimate/uncertainty.py reads: per architecture and band of the
    estimate, quantiles of ln(ptxas / estimate) over every measured kernel (the shipped table uses
    all packages; its leave-one-project-out coverage says how well such a table carries over to a
    project it has not seen)."""
    out = {
        "what": doc["intervals"]["what"],
        "measured_on": (f"{len({(r['file'], r['mangled']) for r in rows if not floor(r)})} kernel instances of "
                        f"{len({r['package'] for r in rows if not floor(r)})} packages of the "
                        f"real-code corpus (bench/realcode/) against ptxas ({_nvcc_release()})"),
        "written_by": "python bench/calibrate.py --realcode --cached-only --sample 0 --write-intervals",
        "tree": doc.get("tree"),
        "bands": doc["intervals"]["bands"],
        "languages": {"cuda": {"archs": {}}},
    }
    for arch, a in doc["intervals"]["archs"].items():
        cov = a["coverage_lopo"]
        out["languages"]["cuda"]["archs"][arch] = {
            "quantiles": {b: {k: (round(v, 4) if isinstance(v, float) else v) for k, v in q.items()}
                          for b, q in a["quantiles"].items()},
            "coverage_lopo": round(cov["coverage"], 4), "coverage_lopo_kernels": cov["kernels"],
            "coverage_lopo_bands": {b: round(v, 4) for b, v in cov["bands"].items()},
        }
    with open(INTERVALS_PATH, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
        fh.write("\n")
    print(f"wrote {INTERVALS_PATH}")


# ---- gathering the rows ---------------------------------------------------------------------------------
def tree_digest() -> str:
    h = hashlib.sha256()
    root = os.path.join(REPO, "shaderlint")
    for d, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files):
            if name.endswith((".py", ".scm", ".json", ".toml")):
                with open(os.path.join(d, name), "rb") as fh:
                    h.update(name.encode() + hashlib.sha256(fh.read()).digest())
    with open(os.path.abspath(__file__), "rb") as fh:  # the rows' fields are this file's
        h.update(fh.read())
    return h.hexdigest()[:16]


_PROJECT = None


def file_context(path: str, data: bytes, arch: str, flags: list[str]):
    """The project context lint builds for ``path`` (:meth:`shaderlint.project.includes.Project.context`)
    when its ``compile_commands.json`` entry is nvcc's command here (``-arch``, the package's ``-I`` and
    ``-D``): the headers read through the include path, their macros, the build's. One
    :class:`~shaderlint.project.includes.Project` per run, as lint has."""
    from shaderlint.config import Settings
    from shaderlint.project.includes import CompileDB, Project, parse_flags

    global _PROJECT
    if _PROJECT is None:
        class _Corpus(Project):
            db = CompileDB("<realcode compile commands>", {})

            def compile_db(self, p, settings):
                return self.db

        _PROJECT = _Corpus()
    key = os.path.normpath(os.path.abspath(path))
    _PROJECT.db.entries[key] = parse_flags(["nvcc", f"-arch={arch}", *flags, key], os.path.dirname(key))
    return _PROJECT.context(key, data, Settings(), "cuda")


def file_rows(path: str, arch: str, ptx, package: str, rel: str, flags: list[str],
              budget: float = 60.0) -> tuple[list[dict], Counter]:
    """One row per ptxas kernel of ``path`` that the estimator could estimate, and the reasons of
    the others. The file's model is built as lint builds it, with its project context
    (:func:`file_context`: the headers' macros for ``#if`` and macro expansion, their helpers for the
    register walk)."""
    from shaderlint.config import Settings
    from shaderlint.deadline import Deadline, TimeBudgetExceeded
    from shaderlint.engine import predefined_for
    from shaderlint.estimate.registers import DEFAULT_COEFFICIENTS, _dynamic_shared, estimate_kernel
    from shaderlint.estimate.targets import get_target
    from shaderlint.languages import FRONT_ENDS
    from shaderlint.languages.conditions import predefined
    from shaderlint.model.build import build_model
    from shaderlint.model.source import Source

    target = get_target(arch)
    skipped: Counter = Counter()
    rows: list[dict] = []
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        ctx = None if OPTIONS["no_context"] else file_context(path, data, arch, flags)
    except (RecursionError, ValueError, OSError):  # as lint: the file alone
        ctx = None
    try:
        with Deadline(budget) as dl:
            if ctx is None:
                defines = [d[2:] for d in flags if d.startswith("-D")]
                model = build_model(FRONT_ENDS["cuda"].parse(Source(path, data), deadline=dl,
                                                             predefined=predefined("cuda", arch, defines)))
            else:
                model = build_model(FRONT_ENDS["cuda"].parse(
                    Source(path, data), deadline=dl, predefined=predefined_for(Settings(), "cuda", ctx),
                    extra_macros=ctx.macros or None, headers=ctx.files))
    except (TimeBudgetExceeded, Exception):
        skipped[FAILED] += len(ptx)
        return rows, skipped
    functions = [f for f in model.kernels if f.is_device_code]
    for k in sorted(ptx.values(), key=lambda k: k.mangled):
        f, why = match_kernel(functions, k.name, k.demangled)
        if f is None:
            skipped[why] += 1
            continue
        args = template_args(k.demangled, k.name)
        b = bindings_for(f, args, model)
        walks = {}
        est0 = None
        cpu0 = 0.0
        try:
            with Deadline(budget):
                grid = walk_grid()
                for h in grid["hoist"]:
                    for bt in grid["batch"]:
                        for st in grid["stream"]:
                            c = replace(DEFAULT_COEFFICIENTS, hoist=h, batch=bt, stream=st)
                            t1 = time.process_time()
                            e = estimate_kernel(model, f, target, bindings=b, coefficients=c)
                            t1 = time.process_time() - t1
                            walks[walk_key({"hoist": h, "batch": bt, "stream": st})] = \
                                [e.peak, _on_stack(e, c)]
                            if (h, bt, st) == (DEFAULT_COEFFICIENTS.hoist, DEFAULT_COEFFICIENTS.batch,
                                               DEFAULT_COEFFICIENTS.stream):
                                est0, cpu0 = e, t1
        except (TimeBudgetExceeded, Exception):
            skipped[FAILED] += 1
            continue
        assert est0 is not None
        dyn = _dynamic_shared(model, f) or 0
        helpers = [f] + [model.function_by_name[n] for n in _inlined(est0) if n in model.function_by_name]
        # helpers the walk took from the project's headers (not the file's: not in the file's model)
        from_headers = {n.split("::")[-1] for n in _inlined(est0)} - set(model.function_by_name)
        gs_origin = f.group_size.origin if f.group_size is not None else None
        rows.append({
            "package": package, "file": rel, "arch": arch, "kernel": _head_and_params(k.demangled)[0],
            "mangled": k.mangled, "registers": k.registers, "stack_bytes": k.stack_bytes,
            "spill_bytes": k.spill_store_bytes, "shared_bytes": k.shared_bytes,
            "lines": kernel_lines(model.source.data, f.node.start_byte, f.node.end_byte),
            "estimate": est0.registers_exact, "estimate_stack": est0.stack_bytes, "cap": est0.register_cap,
            "walks": walks, "estimate_cpu": round(cpu0, 4), "bound": b is not None or not f.template_params,
            "complete": est0.complete,
            # the calls the estimator itself could not see: the report marks its figure "+" (likely low)
            "estimator_unseen": list(est0.unseen_calls)[:12],
            "threads": est0.threads_per_group if not est0.occupancy_is_bound else None,
            "threads_origin": gs_origin or ("launch" if est0.threads_per_group and not est0.occupancy_is_bound
                                            else None),
            "estimated_occupancy": est0.occupancy_value, "occupancy_is_bound": est0.occupancy_is_bound,
            "dynamic_shared": dyn, "estimated_shared": est0.shared_bytes,
            "notes": [n for n in est0.notes if "inlined" not in n][:6],
            "unseen_calls": [c for c in unseen_calls(model, helpers) if c not in from_headers][:12],
            "header_helpers": sorted(from_headers)[:12],
            "template_param_words": sorted(_template_words(model, helpers))[:40],
            "features": code_features(model, helpers),
        })
    return rows, skipped


_I64 = re.compile(r"^(const\s+)?(unsigned\s+)?(long(\s+long)?(\s+int)?|u?int64_t|size_t|ptrdiff_t|ssize_t|"
                  r"intptr_t|uintptr_t|index_t|std::size_t|std::int64_t|std::uint64_t)$")


def code_features(model, functions) -> list[str]:
    """What a kernel and its inlined helpers (of the file) contain, for the harness's per-feature
    lines: range-based ``for``, lambdas, ``auto`` locals, 64-bit integer / ``double`` locals,
    member calls on an object whose class the file defines, and a class or struct declared in a
    helper's or kernel's body."""
    out: set[str] = set()
    classes = set(model.structs)
    for g in functions:
        if g.body is None:
            continue
        stack = [g.body]
        while stack:
            n = stack.pop()
            t = n.type
            if t == "for_range_loop":
                out.add("range-based for")
            elif t == "lambda_expression":
                out.add("lambda")
            elif t == "declaration":
                ty = n.child_by_field_name("type")
                text = model.text(ty) if ty is not None else ""
                if text == "auto" or text.startswith("auto "):
                    out.add("auto local")
                elif _I64.match(text):
                    out.add("64-bit integer local")
                elif text in ("double", "const double"):
                    out.add("double local")
                elif text.split("<")[0].split("::")[-1] in classes:
                    out.add("local of a class the file defines")
            elif t == "call_expression":
                fn = n.child_by_field_name("function")
                if fn is not None and fn.type == "field_expression":
                    out.add("member call")
                elif fn is not None and fn.type == "identifier":
                    v = model.resolve(fn)
                    if v is not None and v.is_param:
                        out.add("calls a parameter (functor object)")
            elif t == "parameter_pack_expansion":
                out.add("parameter pack")
            stack.extend(n.named_children)
    for g in functions:
        for p in getattr(g, "params", ()) or ():
            pt = getattr(p, "type", None)
            if pt is not None and getattr(pt, "kind", "") in ("int", "uint") and getattr(pt, "bits", 32) == 64:
                out.add("64-bit integer parameter")
    return sorted(out)


def _template_words(model, functions) -> set[str]:
    """Identifiers in the template parameter lists of a kernel and its inlined helpers (a call to one
    of them is a call through a function-pointer or functor parameter)."""
    out: set[str] = set()
    for g in functions:
        decl = getattr(g, "outer", None)
        plist = decl.child_by_field_name("parameters") if decl is not None else None
        if plist is not None:
            out.update(re.findall(r"[A-Za-z_]\w*", model.text(plist)))
    return out


def _inlined(e) -> list[str]:
    for n in e.notes:
        if n.startswith("inlined: "):
            return [x.strip() for x in n[len("inlined: "):].split(",")]
    return []


def _on_stack(e, c) -> bool:
    """Whether the walk put an array on the stack (the estimate's ``stack_array`` term applied)."""
    plain = registers_from(e.peak, False, e.register_cap, c.base, c.scale, c.floor, c.stack_array)
    stacked = registers_from(e.peak, True, e.register_cap, c.base, c.scale, c.floor, c.stack_array)
    if plain == stacked:
        return bool(e.stack_arrays)
    return abs(e.registers_exact - stacked) < 1e-6


def gather(files: list[str], archs: list[str], compile_missing: bool, log=print) -> tuple[list[dict], dict]:
    """Rows for every kernel of ``files`` on ``archs`` and the counts of what was left out."""
    import realcode_nvcc as nv

    mode = "".join(f"-{k}" for k, v in sorted(OPTIONS.items()) if v)
    cache_dir = os.path.join(nv.bench_cache(), "estimates", tree_digest() + mode)
    os.makedirs(cache_dir, exist_ok=True)
    counts: dict = {a: Counter() for a in archs}
    reasons: dict = {a: Counter() for a in archs}
    failures: dict = {a: Counter() for a in archs}
    rows: list[dict] = []
    src = nv.corpus_src()
    t0 = time.process_time()
    for n, path in enumerate(files, 1):
        pkg = nv.package_of(path)
        package = pkg[0] if pkg else "?"
        rel = os.path.relpath(path, src)
        flags = nv.flags_for(path)
        for arch in archs:
            res = nv.compile(path, arch, cache_only=not compile_missing)
            c = counts[arch]
            c["files"] += 1
            if res is None:
                c["not compiled yet"] += 1
                continue
            if res.error:
                c["failed"] += 1
                failures[arch][_failure_cause(res.error)] += 1
                continue
            c["compiled"] += 1
            c["ptxas kernels"] += len(res)
            if not len(res):
                continue
            key = hashlib.sha256(f"{nv.cache_key(path, arch, flags)}".encode()).hexdigest()[:32]
            cpath = os.path.join(cache_dir, key + ".json")
            got = None
            if os.path.exists(cpath):
                try:
                    with open(cpath, encoding="utf-8") as fh:
                        got = json.load(fh)
                except (OSError, ValueError):
                    got = None
            if got is None:
                fr, sk = file_rows(path, arch, res, package, rel, flags)
                got = {"rows": fr, "skipped": dict(sk)}
                tmp = f"{cpath}.{os.getpid()}.tmp"
                with open(tmp, "w", encoding="utf-8") as fh:
                    json.dump(got, fh)
                os.replace(tmp, cpath)
            rows.extend(got["rows"])
            c["estimated"] += len(got["rows"])
            reasons[arch].update(got["skipped"])
        if n % 20 == 0:
            log(f"  ... {n}/{len(files)} files, {time.process_time() - t0:.0f} s CPU")
    return rows, {"counts": {a: dict(v) for a, v in counts.items()},
                  "not_estimated": {a: dict(v) for a, v in reasons.items()},
                  "compile_failures": {a: dict(v.most_common(12)) for a, v in failures.items()}}


def _failure_cause(error: str) -> str:
    m = re.search(r"fatal error: ([^:]+): No such file", error)
    if m:
        name = m.group(1).strip()
        top = name.split("/")[0]
        return f"missing header {top if '/' in name else name}"
    if "timed out" in error:
        return "timed out"
    return "compile error"


# ---- the report -----------------------------------------------------------------------------------------
def lopo_intervals(rows: list[dict], est: list[float], min_kernels: int = 30) -> list[tuple[int, int] | None]:
    """Per row, the register interval the report would show for its estimate had the package been
    left out of the measurement: the other packages' 10-90 % residual quantiles for the estimate's
    band (None where that band has fewer than ``min_kernels`` training kernels, as
    shaderlint/estimate/uncertainty.py withholds it), rounded outward as the report rounds it."""
    out: list[tuple[int, int] | None] = [None] * len(rows)
    real = [float(r["registers"]) for r in rows]
    for _, train, held in lopo_groups([r["package"] for r in rows]):
        train = [i for i in train if not floor(rows[i])]
        q = residual_quantiles([est[i] for i in train], [real[i] for i in train])
        for i in held:
            if floor(rows[i]):
                continue
            shown = math.ceil(est[i] - 1e-9)  # the report's whole registers, as it looks them up
            b = q.get(band_of(shown))
            if b is None or b["kernels"] < min_kernels or shown <= 0:
                continue
            low = max(1, math.floor(shown * math.exp(b["q10"])))
            out[i] = (low, max(low, math.ceil(shown * math.exp(b["q90"]))))
    return out


def occupancy_check(rows: list[dict], est: list[float] | None = None,
                    intervals: list[tuple[int, int] | None] | None = None) -> dict:
    """Kernels with a known group size: does the occupancy shown (or the one from ``est``) equal the
    one ptxas's registers and static shared memory (plus the launch's dynamic shared memory) imply?
    With ``intervals`` (:func:`lopo_intervals`), also: does the occupancy range the report shows next
    to it (the occupancy at each end of the register interval; the point alone where there is no
    interval) contain the implied one, and how wide are those ranges?"""
    from shaderlint.estimate.occupancy import occupancy
    from shaderlint.estimate.targets import get_target

    known = below = agree_shown = agree_regs = agree_refit = too_optimistic = 0
    reg_limited = reg_agree = 0
    range_ok = ranged = ceilings = 0
    widths: list[float] = []
    for i, r in enumerate(rows):
        if not r.get("threads") or r.get("occupancy_is_bound"):
            continue
        target = get_target(r["arch"])
        try:
            true = occupancy(target, r["threads"], float(r["registers"]), r["shared_bytes"] + r["dynamic_shared"])
            regs_only = occupancy(target, r["threads"], float(r["estimate"]), r["shared_bytes"] + r["dynamic_shared"])
            refit = occupancy(target, r["threads"], est[i], r["shared_bytes"] + r["dynamic_shared"]) \
                if est is not None else None
        except ValueError:
            continue
        known += 1
        if true.occupancy >= 1.0 - 1e-9:
            continue
        below += 1
        shown = r.get("estimated_occupancy")
        if true.limiter == "registers":
            reg_limited += 1
            reg_agree += shown is not None and abs(shown - true.occupancy) < 1e-9
        if shown is not None and intervals is not None:
            lo = hi = shown
            iv = intervals[i]
            if r.get("estimator_unseen"):  # "~28+": the report shows "≤ shown", no register interval
                lo, iv = 0.0, None
                ceilings += 1
            if iv is not None:
                shared = r["estimated_shared"]
                cap = target.max_registers_per_thread
                ends = [occupancy(target, r["threads"], float(min(x, cap)), shared).occupancy for x in iv]
                lo, hi = min(ends), max(ends)
                if hi - lo > 1e-9:
                    ranged += 1
                    widths.append(hi - lo)
            range_ok += lo - 1e-9 <= true.occupancy <= hi + 1e-9
        if shown is not None and abs(shown - true.occupancy) < 1e-9:
            agree_shown += 1
        elif shown is not None and shown > true.occupancy:
            too_optimistic += 1
        agree_regs += abs(regs_only.occupancy - true.occupancy) < 1e-9
        if refit is not None:
            agree_refit += abs(refit.occupancy - true.occupancy) < 1e-9
    return {"known_group_size": known, "true_below_100": below,
            "shown_agrees": agree_shown / below if below else None,
            "shown_too_optimistic": too_optimistic / below if below else None,
            "registers_only_agrees": agree_regs / below if below else None,
            "refit_agrees": agree_refit / below if below and est is not None else None,
            "register_limited": reg_limited,
            "register_limited_shown_agrees": reg_agree / reg_limited if reg_limited else None,
            "shown_or_range_agrees": range_ok / below if below and intervals is not None else None,
            "shown_as_range": ranged / below if below and intervals is not None else None,
            "shown_as_ceiling": ceilings / below if below and intervals is not None else None,
            "range_width_median": statistics.median(widths) if widths else None}


def evaluate(rows: list[dict]) -> dict:
    """Every figure of the note for the rows of one architecture."""
    real = [float(r["registers"]) for r in rows]
    shipped = [float(r["estimate"]) for r in rows]
    out: dict = {"packages": dict(Counter(r["package"] for r in rows))}
    out["shipped"] = metrics(shipped, real)
    refit, chosen = lopo_fit(rows)
    out["lopo_refit"] = metrics(refit, real)
    out["lopo_refit_choices"] = chosen
    one = one_per_source_kernel(rows)
    out["shipped_one_instance_per_kernel"] = metrics([shipped[i] for i in one], [real[i] for i in one])
    out["lopo_refit_one_instance_per_kernel"] = metrics([refit[i] for i in one], [real[i] for i in one])
    half = halves(r["package"] for r in rows)
    for h in ("dev", "held-out"):
        idx = [i for i, r in enumerate(rows) if half[r["package"]] == h]
        out[f"shipped_{h}"] = metrics([shipped[i] for i in idx], [real[i] for i in idx])
        out[f"lopo_refit_{h}"] = metrics([refit[i] for i in idx], [real[i] for i in idx])
    out["halves"] = half
    loc = lopo_loc(rows)
    out["lopo_lines_of_code"] = metrics(loc, real)
    ab = fit_loc([r["lines"] for r in rows], real)
    out["in_sample_lines_of_code"] = metrics([predict_loc(ab, r["lines"]) for r in rows], real)
    out["in_sample_lines_of_code"]["fit"] = {"a": ab[0], "b": ab[1]}
    points = [i for i, r in enumerate(rows) if not floor(r)]
    out["shipped_points"] = metrics([shipped[i] for i in points], [real[i] for i in points])
    floors = [i for i, r in enumerate(rows) if floor(r)]
    out["floors"] = {"kernels": len(floors),
                     "ptxas_at_least": sum(real[i] >= shipped[i] for i in floors) / len(floors) if floors else None}
    # the intervals describe the estimates shown with one (not the floors)
    out["residual_quantiles_shipped"] = residual_quantiles([shipped[i] for i in points], [real[i] for i in points])
    out["interval_coverage_lopo_shipped"] = lopo_coverage(rows, shipped)
    out["residual_quantiles_refit"] = residual_quantiles(refit, real)
    out["interval_coverage_lopo_refit"] = lopo_coverage(rows, refit)
    out["occupancy"] = occupancy_check(rows, refit, lopo_intervals(rows, shipped))
    out["by_cause_shipped"] = causes(rows, shipped)
    out["per_package_shipped"] = {
        p: {"kernels": len(idx), "median_ape": statistics.median(abs(shipped[i] - real[i]) / real[i] for i in idx),
            "under": sum(shipped[i] < real[i] for i in idx) / len(idx)}
        for p, _, idx in lopo_groups([r["package"] for r in rows])}
    return out


def causes(rows: list[dict], est: list[float]) -> dict:
    """Median |error| and under-estimated share of the kernels with and without each likely cause."""
    def through_param(r):
        words = set(r.get("template_param_words", ()))
        return any(c in words for c in r.get("unseen_calls", ()))

    def elsewhere(r):
        words = set(r.get("template_param_words", ()))
        return any(not c.startswith(".") and c != "assert" and c not in words for c in r.get("unseen_calls", ()))

    tests = {
        "calls a function-pointer/functor template parameter": through_param,
        "calls functions defined outside the file (headers, libraries, macros)": elsewhere,
        "member calls (functors, objects)": lambda r: any(c.startswith(".") for c in r.get("unseen_calls", ())),
        "assert": lambda r: "assert" in r.get("unseen_calls", ()),
        "template parameters unbound": lambda r: not r.get("bound", True),
        "walk incomplete": lambda r: not r.get("complete", True),
        "shown as a lower bound (+: calls the estimate cannot see)": lambda r: bool(r.get("estimator_unseen")),
        "stack in ptxas": lambda r: r["stack_bytes"] > 0,
        **{f: (lambda r, f=f: f in r.get("features", ())) for f in (
            "range-based for", "lambda", "auto local", "64-bit integer local", "64-bit integer parameter",
            "double local", "local of a class the file defines", "member call",
            "calls a parameter (functor object)", "parameter pack")},
    }
    half = halves([r["package"] for r in rows])
    out = {}
    for name, test in tests.items():
        for flag in (True, False):
            idx = [i for i, r in enumerate(rows) if bool(test(r)) == flag]
            if not idx:
                continue
            out.setdefault(name, {})["yes" if flag else "no"] = {
                "kernels": len(idx),
                "median_ape": statistics.median(abs(est[i] - rows[i]["registers"]) / rows[i]["registers"] for i in idx),
                "under": sum(est[i] < rows[i]["registers"] for i in idx) / len(idx),
                "median_signed": statistics.median((est[i] - rows[i]["registers"]) / rows[i]["registers"]
                                                   for i in idx),
                **{f"signed_{h}": statistics.median((est[i] - rows[i]["registers"]) / rows[i]["registers"]
                                                    for i in sub)
                   for h in ("dev", "held-out")
                   for sub in [[i for i in idx if half[rows[i]["package"]] == h]] if sub},
                "held_out": sum(half[rows[i]["package"]] == "held-out" for i in idx),
            }
    return out


def one_per_source_kernel(rows: list[dict]) -> list[int]:
    """Indices of one template instance per kernel definition (file and name; the instance with the
    median ptxas count), so that a template with 100 instances weighs as one kernel."""
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(rows):
        name = _head_and_params(r["kernel"])[0].split("<", 1)[0]
        groups.setdefault((r["file"], name), []).append(i)
    out = []
    for idx in groups.values():
        idx.sort(key=lambda i: rows[i]["registers"])
        out.append(idx[(len(idx) - 1) // 2])
    return sorted(out)


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"


def render(arch: str, ev: dict, rows: list[dict], worst: int) -> str:
    lines = []
    pk = ev["packages"]
    lines.append(f"{arch}: {sum(pk.values())} kernels from {len(pk)} packages (leave-one-project-out)")
    for name, key in (("estimator as shipped", "shipped"), ("shipped, dev packages", "shipped_dev"),
                      ("shipped, held-out packages", "shipped_held-out"),
                      ("shipped, shown as a point (no +)", "shipped_points"),
                      ("estimator refitted LOPO", "lopo_refit"), ("refitted LOPO, dev packages", "lopo_refit_dev"),
                      ("refitted LOPO, held-out packages", "lopo_refit_held-out"),
                      ("lines-of-code baseline LOPO", "lopo_lines_of_code"),
                      ("lines-of-code, in-sample fit", "in_sample_lines_of_code"),
                      ("shipped, one instance per kernel", "shipped_one_instance_per_kernel"),
                      ("refitted, one instance per kernel", "lopo_refit_one_instance_per_kernel")):
        m = ev[key]
        if not m.get("kernels"):
            continue
        lines.append(f"  {name:30} Spearman {m['spearman']:.3f}  median |error| {_pct(m['median_ape'])}  "
                     f"within ±25 % {_pct(m['within_25'])}  under {_pct(m['under'])}  over {_pct(m['over'])}")
        lines.append("  " + " " * 30 + "  ".join(
            f"{b}: {v['kernels']} k, med |err| {_pct(v['median_ape'])} (signed {100 * v['median_signed']:+.0f} %,"
            f" under {_pct(v['under'])})" for b, v in m["bands"].items()))
    q = ev["residual_quantiles_shipped"]
    lines.append("  residuals log(ptxas/estimate) by estimate band (shipped): " + "  ".join(
        f"{b}: n={v['kernels']} x{math.exp(v['q10']):.2f}..x{math.exp(v['q90']):.2f} (median x{math.exp(v['q50']):.2f})"
        for b, v in q.items()))
    fl = ev.get("floors") or {}
    if fl.get("kernels"):
        lines.append(f"  shown as a floor (~N+, no interval): {fl['kernels']} kernels, ptxas at least the estimate for "
                     f"{_pct(fl['ptxas_at_least'])}")
    cov = ev["interval_coverage_lopo_shipped"]
    lines.append(f"  10-90 % interval from the other packages covers {_pct(cov['coverage'])} of held-out kernels "
                 f"(shipped); refit: {_pct(ev['interval_coverage_lopo_refit']['coverage'])}")
    o = ev["occupancy"]
    lines.append(f"  occupancy: {o['known_group_size']} kernels with a known group size, {o['true_below_100']} below "
                 f"100 % by ptxas: shown agrees {_pct(o['shown_agrees'])} (too optimistic "
                 f"{_pct(o['shown_too_optimistic'])}); registers alone agree {_pct(o['registers_only_agrees'])}; "
                 f"refit {_pct(o['refit_agrees'])}; where registers limit ({o['register_limited']} kernels) shown "
                 f"agrees {_pct(o['register_limited_shown_agrees'])}")
    if o.get("shown_or_range_agrees") is not None:
        width = o["range_width_median"]
        lines.append(f"  occupancy shown with its range (the report's, from intervals measured on the other packages): "
                     f"agrees or contains {_pct(o['shown_or_range_agrees'])} of the {o['true_below_100']}; shown as a "
                     f"range for {_pct(o['shown_as_range'])}, median width "
                     f"{'-' if width is None else f'{100 * width:.1f} points'}; as a ceiling (\"≤\", the "
                     f"registers a floor: \"~N+\") for {_pct(o.get('shown_as_ceiling'))}")
    for name, v in ev["by_cause_shipped"].items():
        lines.append(f"  {name}: " + "; ".join(
            f"{k} {x['kernels']} k ({x.get('held_out', 0)} held out), med |err| {_pct(x['median_ape'])} (signed "
            f"{100 * x.get('median_signed', 0):+.0f} %; dev {100 * x.get('signed_dev', 0):+.0f} %, held-out "
            f"{100 * x.get('signed_held-out', 0):+.0f} %), under {_pct(x['under'])}" for k, x in v.items()))
    lines.append("  per package (shipped): " + ", ".join(
        f"{p} {v['kernels']} k {_pct(v['median_ape'])}" for p, v in sorted(ev["per_package_shipped"].items())))
    if worst:
        half = ev.get("halves", {})
        ranked = sorted((r for r in rows if half.get(r["package"], "dev") == "dev"),
                        key=lambda r: -abs(math.log(r["estimate"] / r["registers"])))
        lines.append(f"  worst {worst} (shipped, development packages only: the held-out ones are not looked at):")
        for r in ranked[:worst]:
            lines.append(f"    {r['file'][-60:]:60} {r['kernel'][:70]:70} ptxas {r['registers']:4d} "
                         f"est {r['estimate']:6.1f} lines {r['lines']:4d} stack ptxas {r['stack_bytes']} "
                         f"est {r['estimate_stack']} calls {','.join(r.get('unseen_calls', ())[:4]) or '-'}"
                         f"{'' if r.get('bound', True) else ' UNBOUND'}")
    return "\n".join(lines)


def markdown(doc: dict) -> str:
    """The note's tables (docs/register-model.md) from a run's document."""
    out = []
    for arch, ev in doc["archs"].items():
        pk = ev["packages"]
        out.append(f"**{arch}** — CUDA, real code, {sum(pk.values())} kernels from {len(pk)} packages, "
                   "leave-one-project-out\n")
        out.append("| predictor | Spearman ρ | median \\|error\\| | within ±25 % | under / over |")
        out.append("|---|---|---|---|---|")
        for name, key in (("estimator as shipped", "shipped"),
                          ("estimator as shipped, development packages", "shipped_dev"),
                          ("estimator as shipped, held-out packages", "shipped_held-out"),
                          ("estimator as shipped, shown as a point (not a floor `~N+`)", "shipped_points"),
                          ("estimator, coefficients refitted LOPO", "lopo_refit"),
                          ("lines of code, fitted LOPO", "lopo_lines_of_code"),
                          ("lines of code, fitted in-sample", "in_sample_lines_of_code"),
                          ("estimator as shipped, one instance per kernel definition",
                           "shipped_one_instance_per_kernel"),
                          ("estimator refitted LOPO, one instance per kernel definition",
                           "lopo_refit_one_instance_per_kernel")):
            m = ev[key]
            if not m.get("kernels"):
                continue
            out.append(f"| {name} ({m['kernels']}) | {m['spearman']:.2f} | {100 * m['median_ape']:.0f} % "
                       f"| {100 * m['within_25']:.0f} % "
                       f"| {100 * m['under']:.0f} % / {100 * m['over']:.0f} % |")
        out.append("")
        out.append("| band (ptxas registers) | kernels | shipped: median \\|error\\| (signed), under | "
                   "refitted LOPO: median \\|error\\| (signed) |")
        out.append("|---|---|---|---|")
        for b, v in ev["shipped"]["bands"].items():
            r = ev["lopo_refit"]["bands"].get(b, {})
            out.append(f"| {b} | {v['kernels']} | {100 * v['median_ape']:.0f} % ({100 * v['median_signed']:+.0f} %), "
                       f"{100 * v['under']:.0f} % | {100 * r.get('median_ape', 0):.0f} % "
                       f"({100 * r.get('median_signed', 0):+.0f} %) |")
        out.append("")
        fl = ev.get("floors") or {}
        if fl.get("kernels"):
            out.append(f"Shown as a floor (`~N+`, no range): {fl['kernels']} kernels; ptxas at least the estimate "
                       f"for {100 * fl['ptxas_at_least']:.0f} %.")
            out.append("")
        out.append("| band (estimate, point estimates) | kernels | ptxas / estimate: 10th–90th percentile (median) |")
        out.append("|---|---|---|")
        for b, v in ev["residual_quantiles_shipped"].items():
            out.append(f"| {b} | {v['kernels']} | ×{math.exp(v['q10']):.2f}–×{math.exp(v['q90']):.2f} "
                       f"(×{math.exp(v['q50']):.2f}) |")
        out.append("")
    return "\n".join(out)


def run(args) -> int:
    import realcode_nvcc as nv

    OPTIONS["shipped_walk"] = bool(getattr(args, "shipped_walk", False))
    OPTIONS["no_context"] = bool(getattr(args, "no_context", False))

    packages = set(args.packages.split(",")) if args.packages else None
    files = nv.stratified(nv.cuda_files(packages=packages), args.sample)
    archs = args.arch or ["sm_80", "sm_90"]
    t0 = time.process_time()
    rows, info = gather(files, archs, compile_missing=not args.cached_only, log=lambda m: print(m, file=sys.stderr))
    doc: dict = {"files": len(files), "archs": {}, "tree": tree_digest(), **info}
    for arch in archs:
        c = info["counts"][arch]
        print(f"{arch}: {c.get('files', 0)} CUDA files with a __global__ kernel, {c.get('compiled', 0)} compile "
              f"({c.get('failed', 0)} fail, {c.get('not compiled yet', 0)} not in the nvcc cache), "
              f"{c.get('ptxas kernels', 0)} ptxas kernels, {c.get('estimated', 0)} estimated")
        if info["compile_failures"][arch]:
            print("  compile failures: " + ", ".join(f"{k} {v}" for k, v in info["compile_failures"][arch].items()))
        if info["not_estimated"][arch]:
            print("  not estimated: " + "; ".join(f"{v} {k}" for k, v in info["not_estimated"][arch].items()))
        arows = [r for r in rows if r["arch"] == arch]
        if len({r["package"] for r in arows}) < 2:
            print(f"  {arch}: fewer than two packages measured: no leave-one-project-out figures")
            continue
        ev = evaluate(arows)
        doc["archs"][arch] = ev
        print(render(arch, ev, arows, args.worst))
    both = {}
    for r in rows:
        both.setdefault((r["file"], r["mangled"]), {})[r["arch"]] = r
    pairs = [v for v in both.values() if len(v) == 2]
    if pairs:
        differ = sum(v["sm_80"]["registers"] != v["sm_90"]["registers"] for v in pairs)
        est_differ = sum(v["sm_80"]["estimate"] != v["sm_90"]["estimate"] for v in pairs)
        doc["arch_dependence"] = {"kernels_on_both": len(pairs), "ptxas_differs": differ,
                                  "estimate_differs": est_differ}
        print(f"sm_80 vs sm_90: {len(pairs)} kernels on both; ptxas differs for {differ}, "
              f"the estimate for {est_differ}")
    print(f"({time.process_time() - t0:.0f} s CPU; the shipped estimates alone took "
          f"{sum(r.get('estimate_cpu', 0.0) for r in rows):.1f} s CPU when computed, {len(rows)} estimates)")
    # The table an interval "~40 registers (28-55)" would read (proposed home: shaderlint/estimate/
    # intervals.json, loaded by the report): per arch and band of the estimate, quantiles of
    # log(ptxas / estimate) and how often the 10-90 % interval held leave-one-project-out.
    doc["intervals"] = {
        "what": "quantiles of ln(ptxas registers / estimated registers) per band of the estimate, "
                "CUDA real code, estimator as shipped; interval = estimate * exp(q10) .. estimate * exp(q90)",
        "bands": [list(b) for b in BANDS],
        "archs": {a: {"quantiles": ev["residual_quantiles_shipped"],
                      "coverage_lopo": ev["interval_coverage_lopo_shipped"]}
                  for a, ev in doc["archs"].items()},
    }
    if getattr(args, "write_intervals", False):
        write_intervals(doc, rows)
    if getattr(args, "markdown", False):
        print(markdown(doc))
    if args.json:
        doc["rows"] = rows
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)
            fh.write("\n")
    return 0
