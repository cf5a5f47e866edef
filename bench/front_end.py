"""The front end alone (masking, then the parse) on a corpus: its CPU time, and a digest of its result.

    python bench/front_end.py --corpus DIR [--step N] [--digest OUT.tsv] [--time ROUNDS] [--context]

``--digest``: one line per file (path, then a hash of the masked bytes, the masks and the tree's
S-expression, and of the attribute maps), written from the tree on ``PYTHONPATH``: run it once per
tree, each in its own process from outside the trees, and compare the files (``cmp``) to show that
a change to the front end leaves its result byte-identical. ``--context``: parse as a lint does,
with each file's project context (the included headers' macros and the build's ``#if`` macros, from
:func:`shaderlint.project.run.plan_run`), besides the plain parse. ``--time``: the CPU time
(``time.process_time``) of ``masked`` and of ``parse`` over every file, ROUNDS times; min and median
printed (interleave two trees by running this alternately: each process measures one tree).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import time


def corpus_files(root: str) -> list[str]:
    from shaderlint.languages import language_for_path

    out = []
    for d, _, fs in os.walk(root):
        for f in fs:
            p = os.path.join(d, f)
            if language_for_path(p):
                out.append(p)
    return sorted(out)


def _masks_repr(masks) -> bytes:
    return repr([(m.start, m.end, m.kind, m.text, m.value, m.args) for m in masks]).encode()


def _digest(parsed) -> str:
    h = hashlib.sha256()
    h.update(parsed.parse_bytes)
    h.update(_masks_repr(parsed.masks))
    h.update(str(parsed.tree.root_node).encode())
    h.update(repr(parsed.stage).encode())
    for table in (parsed.attrs_after, parsed.attrs_before, parsed.qualifiers_before):
        h.update(repr(sorted((k, [(m.start, m.end) for m in v]) for k, v in table.items())).encode())
    h.update(repr([(e.start, getattr(e, "inv_start", None)) for e in parsed.expansions]).encode())
    return h.hexdigest()[:24]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--step", type=int, default=1)
    ap.add_argument("--digest")
    ap.add_argument("--context", action="store_true")
    ap.add_argument("--time", type=int, default=0)
    a = ap.parse_args(argv)
    from shaderlint.languages import FRONT_ENDS, language_for_path
    from shaderlint.model.source import Source

    files = corpus_files(a.corpus)[::a.step]
    datas = [(p, language_for_path(p), open(p, "rb").read()) for p in files]
    if a.digest:
        contexts = {}
        if a.context:
            from shaderlint.config import Settings
            from shaderlint.engine import predefined_for
            from shaderlint.project.run import plan_run

            settings = Settings()
            plan = plan_run(files, lambda _p: settings, None)
            for p, lang, _ in datas:
                ctx = plan.contexts.get(p)
                if ctx is not None:
                    contexts[p] = (predefined_for(settings, lang, ctx), ctx.macros or None)
        with open(a.digest, "w") as out:
            for p, lang, data in datas:
                rows = [("plain", None, None)]
                if p in contexts:
                    rows.append(("context", *contexts[p]))
                for kind, pre, macros in rows:
                    try:
                        got = _digest(FRONT_ENDS[lang].parse(Source(p, data), predefined=pre, extra_macros=macros))
                    except Exception as exc:  # (the same failure on both sides is the same result)
                        got = f"{type(exc).__name__}: {exc}"
                    out.write(f"{os.path.relpath(p, a.corpus)}\t{kind}\t{got}\n")
    if a.time:
        masked, parsed = [], []
        for _ in range(a.time):
            t = time.process_time()
            for p, lang, data in datas:
                FRONT_ENDS[lang].masked(Source(p, data))
            t1 = time.process_time()
            for p, lang, data in datas:
                FRONT_ENDS[lang].parse(Source(p, data))
            t2 = time.process_time()
            masked.append(t1 - t)
            parsed.append(t2 - t1)
        print(f"{len(datas)} files, {a.time} rounds: masked min {min(masked):.3f} s median "
              f"{statistics.median(masked):.3f} s; parse (mask+expand+parse) min {min(parsed):.3f} s "
              f"median {statistics.median(parsed):.3f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
