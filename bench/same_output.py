"""Is a change pure speed? Every output of a tree on the real-code corpus, and a comparison of two.

    python bench/same_output.py run TREE OUT       # TREE's outputs into the directory OUT
    python bench/same_output.py compare OUT_A OUT_B

``run`` writes, for the shaderlint package of ``TREE`` (run from a temporary directory, so that the
current directory cannot put another package first on ``sys.path``): ``all.json``, the lint of the
whole corpus with every rule (``--extend-select ALL``, an empty configuration, ``--no-cache``), and
``report80.json`` / ``report90.json``, ``shaderlint report --compiler none --format json`` for sm_80
and sm_90 (every kernel's register and occupancy estimate), with their stderr beside them.

``compare`` says IDENTICAL per output when the bytes are equal. A file whose estimates stopped at its
per-file time budget (the report says so on stderr) can stop at another point from run to run, even
for the same tree, since CPU time under load is not quite the same work; those files' rows are set
apart, named, and the rest must then be equal in order. Exit status 0 when everything else is equal.

The corpus is ``$SHADERLINT_REALCODE_CACHE/src`` (default /work/realcode-cache/src; ``python
bench/realcode.py --fetch`` downloads it). A run takes about 6 minutes on two cores.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile

OUTPUTS = ("all.json", "report80.json", "report90.json")
_STOPPED = re.compile(r"^shaderlint: (.*?): estimates stopped", re.M)


def corpus() -> str:
    return os.path.join(os.environ.get("SHADERLINT_REALCODE_CACHE", "/work/realcode-cache"), "src")


def run(tree: str, out: str) -> int:
    tree, out = os.path.realpath(tree), os.path.realpath(out)
    os.makedirs(out, exist_ok=True)
    src = corpus()
    with tempfile.TemporaryDirectory(prefix="same-output-") as tmp:
        config = os.path.join(tmp, "shaderlint.toml")
        open(config, "w").close()
        env = dict(os.environ, PYTHONPATH=tree, SHADERLINT_CACHE_DIR=os.path.join(tmp, "cache"))
        base = [sys.executable, "-m", "shaderlint"]
        jobs = [("all.json", base + ["--format", "json", "--no-cache", "-j", "2", "--config", config,
                                     "--extend-select", "ALL", src])]
        for target, name in (("sm_80", "report80.json"), ("sm_90", "report90.json")):
            jobs.append((name, base + ["report", "--config", config, "--format", "json", "--compiler", "none",
                                       "--target", target, src]))
        for name, cmd in jobs:
            with open(os.path.join(out, name), "wb") as fh, open(os.path.join(out, name + ".err"), "wb") as err:
                proc = subprocess.run(cmd, cwd=tmp, env=env, stdout=fh, stderr=err)
            if proc.returncode not in (0, 1):
                print(f"{name}: shaderlint exited {proc.returncode} (see {name}.err)", file=sys.stderr)
                return 2
            print(f"{name}: {os.path.getsize(os.path.join(out, name))} bytes")
    return 0


def _stopped(directory: str, name: str) -> set[str]:
    try:
        with open(os.path.join(directory, name + ".err"), encoding="utf-8", errors="replace") as fh:
            return set(_STOPPED.findall(fh.read()))
    except OSError:
        return set()


def _rows(data: bytes) -> list[str] | None:
    """An output's rows, each as JSON with sorted keys; None when it is not JSON (an empty file: a run
    still writing it, or one that failed)."""
    try:
        return [json.dumps(r, sort_keys=True) for r in json.loads(data)]
    except ValueError:
        return None


def compare(a: str, b: str) -> int:
    ok = True
    for name in OUTPUTS:
        with open(os.path.join(a, name), "rb") as fa, open(os.path.join(b, name), "rb") as fb:
            da, db = fa.read(), fb.read()
        if da == db:
            print(f"{name} IDENTICAL")
            continue
        rows_a, rows_b = _rows(da), _rows(db)
        if rows_a is None or rows_b is None:
            print(f"{name} NOT COMPARED: not JSON in {a if rows_a is None else b} "
                  "(a run still writing it, or a failed one: see its .err)")
            ok = False
            continue
        stopped = _stopped(a, name) | _stopped(b, name)

        def kept(rows: list[str]) -> list[str]:
            return [r for r in rows if json.loads(r).get("path") not in stopped]

        if stopped and kept(rows_a) == kept(rows_b):
            apart = sorted(set(rows_a) ^ set(rows_b))
            print(f"{name} IDENTICAL but for {len(apart)} row(s) of file(s) whose estimates stopped at the "
                  f"time budget: {', '.join(sorted(stopped))}")
            continue
        ok = False
        only_a, only_b = sorted(set(rows_a) - set(rows_b)), sorted(set(rows_b) - set(rows_a))
        print(f"{name} DIFFERENT: {len(only_a)} row(s) only in {a}, {len(only_b)} only in {b}"
              + ("" if only_a or only_b else " (the same rows in another order)"))
        for r in only_a[:3]:
            print(f"  {a}: {r[:400]}")
        for r in only_b[:3]:
            print(f"  {b}: {r[:400]}")
    return 0 if ok else 1


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "run":
        return run(argv[1], argv[2])
    if len(argv) == 3 and argv[0] == "compare":
        return compare(argv[1], argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
