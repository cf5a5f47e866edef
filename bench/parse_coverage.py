"""Parse coverage and speed of the front ends.

    python bench/parse_coverage.py DIR [DIR ...] [--raw] [--repeat N] [--context [--include-dir D ...]]

Per language: files, files whose tree still has an ERROR/MISSING node after the
front end (and, with ``--raw``, with the stock grammar and no masking), lines,
and lines/s for parse only vs parse + kernel model.

``--context``: each file is parsed in its project context (shaderlint.project: the headers it
includes, their macros, compile_commands.json), as a lint run does; ``--include-dir`` adds
directories to ``#include``'s search (the ``include-dirs`` setting). The headers the CUDA files include
that discovery does not take (``.h``, ``.hpp``, ``.inl``) are counted on a line of their own
("cuda hdrs"), so the per-language lines compare the same files with and without ``--context``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections import defaultdict

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
    ap.add_argument("--context", action="store_true", help="parse each file in its project context")
    ap.add_argument("--include-dir", action="append", default=[], help="with --context: an include directory")
    args = ap.parse_args(argv)
    files = [p for p in discover(args.dirs) if language_for_path(p)]
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
        if args.list:
            for p in errors:
                print(f"    {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
