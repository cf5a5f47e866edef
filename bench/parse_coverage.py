"""Parse coverage and speed of the front ends.

    python bench/parse_coverage.py DIR [DIR ...] [--raw] [--repeat N] [--language cuda] [--list]
        [--validate] [--nvcc] [--context] [--include-dir D ...] [--judged FILE.tsv]

Per language: files, files whose tree still has an ERROR/MISSING node after the
front end (and, with ``--raw``, with the stock grammar and no masking), lines,
and lines/s for parse only vs parse + kernel model.

Validity of the CUDA files with errors (SL001 belongs on code a compiler rejects):
``--nvcc`` compiles each of them (``nvcc -arch=sm_90 -std=c++17 -x cu -c``, with the
file's directory and every ``--include-dir`` on the include path) and says
whether nvcc accepts it, rejects it, or cannot tell (a header it includes is not
there -- most real projects need torch or CUTLASS headers). ``--judged`` reads a
TSV whose first column is a path and third a validity judged by reading
(``yes``/``no``/``unknown``; the format of the issue-16 classification) and
prints the error rate among the files not judged invalid.

``--validate`` (GLSL, needs ``glslangValidator``): which files a compiler accepts, and the rate of
SL001 among those (the figure that counts: a template with ``<placeholder>`` lines that glslang
rejects too is no front-end defect). See :func:`glsl_validity`.

``--context``: each file is parsed in its project context (shaderlint.project: the headers it
includes, their macros, compile_commands.json), as a lint run does; ``--include-dir`` adds
directories to ``#include``'s search (the ``include-dirs`` setting). The headers the CUDA files include
that discovery does not take (``.h``, ``.hpp``, ``.inl``) are counted on a line of their own
("cuda hdrs"), so the per-language lines compare the same files with and without ``--context``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tree_sitter as ts  # noqa: E402

from shaderlint.discovery import discover  # noqa: E402
from shaderlint.languages import FRONT_ENDS, language_for_path  # noqa: E402
from shaderlint.model.build import build_model  # noqa: E402
from shaderlint.model.source import Source  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--raw", action="store_true", help="also count errors of the stock grammar without masking")
    ap.add_argument("--repeat", type=int, default=3, help="timing repetitions (best is reported)")
    ap.add_argument("--list", action="store_true", help="list files that still have errors")
    ap.add_argument("--language", choices=("metal", "cuda", "glsl"), help="only this language")
    ap.add_argument("--nvcc", action="store_true", help="compile the CUDA files with errors with nvcc")
    ap.add_argument("--include-dir", action="append", default=[], help="include directory for --nvcc and --context")
    ap.add_argument("--judged", help="TSV of files judged valid (yes/no/unknown in the third column)")
    ap.add_argument("--validate", action="store_true",
                    help="GLSL: also count the files glslangValidator accepts and the SL001 rate among them")
    ap.add_argument("--context", action="store_true", help="parse each file in its project context")
    args = ap.parse_args(argv)
    files = [p for p in discover(args.dirs) if language_for_path(p) and language_for_path(p) == (args.language or language_for_path(p))]
    judged = _read_judged(args.judged) if args.judged else {}
    by_lang: dict[str, list[tuple[str, bytes]]] = defaultdict(list)
    kwargs: dict[str, dict] = {}  # path -> parse keywords (the context)
    if args.context:
        from shaderlint.config import Settings
        from shaderlint.engine import predefined_for
        from shaderlint.project.run import plan_run, under_roots

        settings = Settings(include_dirs=tuple(os.path.abspath(d) for d in args.include_dir))
        plan = plan_run(files, lambda _p: settings, under_roots(args.dirs))
        for p in plan.files:
            ctx = plan.contexts.get(p)
            lang = plan.languages.get(p) or language_for_path(p)
            kwargs[p] = {"predefined": predefined_for(settings, lang, ctx),
                         "extra_macros": ctx.macros if ctx is not None and ctx.macros else None}
        for p in plan.files[len(files):]:
            by_lang["cuda hdrs"].append((p, plan.data.get(p) or open(p, "rb").read()))
    for p in files:
        with open(p, "rb") as fh:
            by_lang[language_for_path(p)].append((p, fh.read()))
    print(f"{'language':<8} {'files':>6} {'with errors':>12} {'raw errors':>11} {'lines':>8} "
          f"{'parse lines/s':>14} {'parse+model lines/s':>20}")
    total_err = 0
    for lang in ("metal", "cuda", "glsl", "cuda hdrs"):
        items = by_lang.get(lang, [])
        if not items:
            continue
        fe = FRONT_ENDS["cuda" if lang == "cuda hdrs" else lang]
        lines = sum(d.count(b"\n") + 1 for _, d in items)
        errors = []
        raw_errors = 0
        for p, d in items:
            parsed = fe.parse(Source(p, d), **kwargs.get(p, {}))
            if parsed.tree.root_node.has_error:
                errors.append(p)
            if args.raw:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    raw = ts.Parser(fe.language()).parse(d)
                raw_errors += raw.root_node.has_error
        total_err += len(errors)
        best_parse = best_model = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            for p, d in items:
                fe.parse(Source(p, d), **kwargs.get(p, {}))
            t1 = time.perf_counter()
            for p, d in items:
                build_model(fe.parse(Source(p, d), **kwargs.get(p, {})))
            t2 = time.perf_counter()
            best_parse = min(best_parse, t1 - t0)
            best_model = min(best_model, t2 - t1)
        raw_txt = f"{raw_errors}/{len(items)}" if args.raw else "-"
        print(f"{lang:<8} {len(items):>6} {len(errors):>12} {raw_txt:>11} {lines:>8} "
              f"{lines / best_parse:>14,.0f} {lines / best_model:>20,.0f}")
        if args.validate and lang == "glsl":
            print_glsl_validity(items, set(errors), args.list)
        elif args.list:
            for p in errors:
                print(f"    {p}")
        if judged:
            invalid = {p for p, v in judged.items() if v == "no"}
            valid_errors = [p for p in errors if os.path.abspath(p) not in invalid]
            denominator = sum(1 for p, _ in items if os.path.abspath(p) not in invalid)
            print(f"    {lang}: {len(valid_errors)} of {denominator} files not judged invalid have errors "
                  f"({100.0 * len(valid_errors) / max(denominator, 1):.2f} %)")
        if args.nvcc and lang == "cuda":
            verdicts = Counter()
            for p in errors:
                verdict, detail = _nvcc_verdict(p, args.include_dir)
                verdicts[verdict] += 1
                print(f"    nvcc {verdict:<8} {p}  {detail}")
            print(f"    nvcc on the {len(errors)} files with errors: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
    return 0


def _read_judged(path: str) -> dict[str, str]:
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            cols = line.rstrip("\n").split("\t")
            if len(cols) >= 3 and not line.startswith("#") and cols[0] != "file":
                out[os.path.abspath(cols[0])] = cols[2].strip().lower()
    return out


def _nvcc_verdict(path: str, include_dirs: list[str]) -> tuple[str, str]:
    """("valid" | "invalid" | "unknown", first error line): nvcc's verdict on ``path`` alone."""
    nvcc = shutil.which("nvcc") or "/usr/local/bin/nvcc"
    cmd = [nvcc, "-arch=sm_90", "-std=c++17", "--expt-relaxed-constexpr", "--extended-lambda", "-x", "cu", "-c",
           path, "-o", os.devnull, "-I", os.path.dirname(path)] + [f"-I{d}" for d in include_dirs]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "unknown", str(exc)
    if r.returncode == 0:
        return "valid", ""
    first = next((ln for ln in r.stderr.splitlines() if "error" in ln), r.stderr.strip()[:200])
    if "No such file or directory" in first or "cannot open source file" in first:
        return "unknown", first.strip()[:200]  # a header is missing: nvcc cannot tell
    return "invalid", first.strip()[:200]


# --- GLSL validity (--validate) -------------------------------------------------------------------

_GLSLANG_STAGES = {
    "compute": "comp", "vertex": "vert", "fragment": "frag", "geometry": "geom", "tess_control": "tesc",
    "tess_evaluation": "tese", "mesh": "mesh", "task": "task", "raygen": "rgen", "closest_hit": "rchit",
    "miss": "rmiss", "any_hit": "rahit", "intersection": "rint", "callable": "rcall",
}
_PRAGMA_STAGE = re.compile(rb"^[ \t]*#[ \t]*pragma[ \t]+shader_stage[ \t]*\([ \t]*(\w+)[ \t]*\)", re.M)
_PRAGMA_STAGE_NAMES = {"compute": "comp", "vertex": "vert", "fragment": "frag", "geometry": "geom",
                       "tesscontrol": "tesc", "tesseval": "tese", "mesh": "mesh", "task": "task"}
_VERSION = re.compile(rb"^[ \t]*#[ \t]*version\b[^\n]*\n?", re.M)
# A build generator next to the shaders (llama.cpp's vulkan-shaders-gen.cpp) passes `-D` defines:
# `{"K", "V"}` pairs, `{"K", c ? "V" : "W"}`, `defines["K"] = "V"` and maps named on the lines before
# a call that names the shader file.
_GEN_PAIR = re.compile(rb'\{\s*"(\w+)"\s*,\s*(?:"([^"]*)"|[^{}",]*\?\s*"([^"]*)"\s*:\s*"[^"]*")\s*\}')
_GEN_ASSIGN = re.compile(rb'\w+\s*\[\s*"(\w+)"\s*\]\s*=\s*"([^"]*)"')
_GEN_MAP = re.compile(rb"(\w+)\s*=\s*\{((?:\s*\{[^{}]*\}\s*,?)*)\s*\}\s*;")
_GEN_WINDOW = 16  # lines before a call that can build its defines


def _gen_define_sets(directory: str, name: str, cache: dict) -> list[tuple[str, ...]]:
    """The define sets a build generator in ``directory`` (``*-gen.cpp``, ``*_gen.cpp``) evidently
    compiles the file ``name`` with: one set per line naming ``"name"``, from string literals only
    (keys built at run time, ``"DATA_A_" + to_uppercase(t)``, are not read)."""
    if directory not in cache:
        gens = []
        for f in sorted(os.listdir(directory)):
            if re.search(r"[-_]gen\.(?:cpp|cc)$", f):
                with open(os.path.join(directory, f), "rb") as fh:
                    gens.append(fh.read().split(b"\n"))
        cache[directory] = gens
    sets: list[tuple[str, ...]] = []
    needle = b'"' + name.encode() + b'"'
    for lines in cache[directory]:
        maps: list[tuple[int, bytes, dict]] = []
        text = b"\n".join(lines)
        for m in _GEN_MAP.finditer(text):
            pairs = {k: (v if v is not None else w) for k, v, w in _GEN_PAIR.findall(m.group(2))} if m.group(2) else {}
            maps.append((text.count(b"\n", 0, m.start()), m.group(1), pairs))
        for i, line in enumerate(lines):
            if needle not in line:
                continue
            window = b"\n".join(lines[max(0, i - _GEN_WINDOW):i + 1])
            defines: dict[bytes, bytes] = {}
            for _, map_name, pairs in sorted(maps, key=lambda t: t[0]):
                if _ < i and re.search(rb"\b" + map_name + rb"\b", window):
                    defines.update(pairs)
            for k, v, w in _GEN_PAIR.findall(window):
                defines[k] = v if v is not None and (v or not w) else w
            for k, v in _GEN_ASSIGN.findall(window):
                defines[k] = v
            key = tuple(sorted(f"{k.decode()}={v.decode()}" for k, v in defines.items()))
            if key not in sets:
                sets.append(key)
    return sets


def _glslang_accepts(path: str, data: bytes, stage: str, defines: tuple[str, ...], vulkan: bool, tmp: str) -> bool:
    """glslangValidator accepts the file (errors of the link step, such as a library file's missing
    entry point, do not count). ``#include`` is enabled as glslc enables it; ``-I`` the file's dir."""
    if b"#include" in data and b"GL_GOOGLE_include_directive" not in data:
        m = _VERSION.search(data)
        at = m.end() if m else 0
        data = data[:at] + b"#extension GL_GOOGLE_include_directive : require\n" + data[at:]
    src = os.path.join(tmp, "shader." + stage)
    with open(src, "wb") as fh:
        fh.write(data)
    cmd = ["glslangValidator", "-S", stage, "-I" + os.path.dirname(os.path.abspath(path))]
    if vulkan:
        cmd += ["-V", "--target-env", "vulkan1.3", "-o", os.devnull]
    cmd += [f"-D{d}" for d in defines] + [src]
    try:
        out = subprocess.run(cmd, capture_output=True, timeout=30).stdout
    except subprocess.TimeoutExpired:
        return False
    return all(ln.startswith(b"ERROR: Linking") for ln in out.splitlines() if ln.startswith(b"ERROR:"))


def glsl_validity(items: list[tuple[str, bytes]]) -> dict[str, bool]:
    """Per GLSL file, whether glslangValidator accepts it: as the stage its extension or ``#pragma
    shader_stage`` names (``.glsl``: the front end's guess by content, else fragment), for OpenGL or
    for Vulkan, with no defines or with one of the define sets a build generator next to it passes."""
    from shaderlint.languages.glsl import GlslFrontEnd

    fe = GlslFrontEnd()
    cache: dict = {}
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for p, d in items:
            m = _PRAGMA_STAGE.search(d)
            stage = _PRAGMA_STAGE_NAMES.get(m.group(1).decode().lower()) if m else None
            if stage is None:
                stage = _GLSLANG_STAGES.get(fe.stage_for(p, Source(p, d)) or "fragment", "frag")
            define_sets = [()] + _gen_define_sets(os.path.dirname(os.path.abspath(p)), os.path.basename(p), cache)
            out[p] = any(_glslang_accepts(p, d, stage, ds, vk, tmp) for ds in define_sets[:12] for vk in (False, True))
    return out


def print_glsl_validity(items: list[tuple[str, bytes]], errors: set[str], listing: bool) -> None:
    if shutil.which("glslangValidator") is None:
        print("    --validate: glslangValidator not found")
        return
    valid = glsl_validity(items)
    n_valid = sum(valid.values())
    bad = sorted(p for p in errors if valid.get(p))
    rate = 100.0 * len(bad) / n_valid if n_valid else 0.0
    print(f"    glslang: {len(items)} files, {n_valid} valid, {len(bad)} valid with errors ({rate:.1f} %)")
    if listing:
        for p in sorted(errors):
            print(f"    {'valid  ' if valid.get(p) else 'invalid'} {p}")


if __name__ == "__main__":
    sys.exit(main())
