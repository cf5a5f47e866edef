"""Precision of shaderlint on real code: lint the pinned corpus and score it against judged.tsv.

    python bench/realcode.py --fetch           # download the pinned sdists (bench/realcode/packages.tsv)
    python bench/realcode.py                   # per-rule findings, judged true/false/debatable, precision
    python bench/realcode.py --diff HEAD~1     # findings gained and lost between HEAD~1 and the working tree
    python bench/realcode.py --unjudged SL201  # unjudged findings with an excerpt and a judged.tsv row to fill
    python bench/realcode.py --stats           # files and lines per package and language

The corpus lives in ``$SHADERLINT_REALCODE_CACHE`` (default /work/realcode-cache),
one directory per package under ``src/``. Linting runs the CLI of the tree
being measured (``python -m shaderlint --format json --no-cache -j 2`` with that
tree first on PYTHONPATH) over the package directories, with an empty
configuration so no ``pyproject.toml`` inside an sdist changes the settings,
and every rule enabled (``--extend-select ALL``); opt-in rules are reported
apart. See bench/realcode/README.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "realcode"))
sys.path.insert(0, REPO)

import fetch  # noqa: E402
import judging  # noqa: E402
from judging import Finding  # noqa: E402

JUDGED = os.path.join(HERE, "realcode", "judged.tsv")


class Corpus:
    def __init__(self, cache: str, packages: list[fetch.Package]) -> None:
        self.cache = cache
        self.src = os.path.join(cache, "src")
        self.packages = packages
        self.by_dir = {p.dirname: p for p in packages}

    def missing(self) -> list[fetch.Package]:
        return [p for p in self.packages if not os.path.isdir(os.path.join(self.src, p.dirname))]

    def split(self, path: str) -> tuple[str, str] | None:
        """(package name, path inside it) for a path relative to src/."""
        top, _, rest = path.replace(os.sep, "/").partition("/")
        pkg = self.by_dir.get(top)
        return (pkg.name, rest) if pkg and rest else None


def tree_digest(tree: str, corpus: Corpus) -> str:
    """A hash of ``tree``'s shaderlint sources and the package list: the lint results' cache key."""
    h = hashlib.sha256()
    root = os.path.join(tree, "shaderlint")
    for d, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files):
            if name.endswith((".py", ".scm", ".json", ".toml")):
                path = os.path.join(d, name)
                h.update(os.path.relpath(path, root).encode() + b"\0")
                with open(path, "rb") as fh:
                    h.update(hashlib.sha256(fh.read()).digest())
    for p in corpus.packages:
        h.update(f"{p.dirname} {p.sha256} {','.join(p.prune)}\n".encode())
    return h.hexdigest()[:20]


def lint_cached(corpus: Corpus, tree: str, jobs: int, relint: bool) -> tuple[list[dict], float, float, bool]:
    """``lint`` whose JSON is kept in ``<cache>/results/`` under the tree's digest; the last
    item tells whether the results came from there (then the times are those of the run that made them)."""
    results = os.path.join(corpus.cache, "results")
    path = os.path.join(results, tree_digest(tree, corpus) + ".json")
    if not relint and os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        return doc["diagnostics"], doc["cpu"], doc["wall"], True
    diags, cpu, wall = lint(corpus, tree, jobs)
    os.makedirs(results, exist_ok=True)
    tmp = path + f".{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump({"cpu": cpu, "wall": wall, "diagnostics": diags}, fh)
    os.replace(tmp, path)
    return diags, cpu, wall, False


def lint(corpus: Corpus, tree: str, jobs: int = 2) -> tuple[list[dict], float, float]:
    """Run the shaderlint of ``tree`` over the corpus; (JSON diagnostics, CPU s, wall s)."""
    with tempfile.TemporaryDirectory(prefix="realcode-") as tmp:
        config = os.path.join(tmp, "shaderlint.toml")
        open(config, "w").close()
        out = os.path.join(tmp, "out.json")
        env = dict(os.environ, PYTHONPATH=tree + os.pathsep + os.environ.get("PYTHONPATH", ""))
        cmd = [sys.executable, "-m", "shaderlint", "--format", "json", "--no-cache", "-j", str(jobs),
               "--config", config, "--extend-select", "ALL", "-q", "-o", out,
               *[p.dirname for p in corpus.packages]]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        proc = subprocess.run(cmd, cwd=corpus.src, env=env, capture_output=True, text=True)
        wall = time.monotonic() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if proc.returncode not in (0, 1) or not os.path.exists(out):
            raise SystemExit(f"shaderlint failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        with open(out, encoding="utf-8") as fh:
            return json.load(fh), cpu, wall


class Lines:
    """Corpus files' lines as shaderlint numbers them (``model.source.Source``: CRLF, CR and LF
    break lines, bytes decoded as UTF-8 with replacement), each file read once."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.files: dict[str, object] = {}

    def source(self, path: str):
        from shaderlint.model.source import Source

        if path not in self.files:
            try:
                with open(os.path.join(self.root, path), "rb") as fh:
                    data = fh.read()
            except OSError:
                data = b""
            self.files[path] = Source(path, data)
        return self.files[path]

    def count(self, path: str) -> int:
        return len(self.source(path).line_starts)

    def line(self, path: str, n: int) -> str:
        return self.source(path).line_text(n)


def to_findings(corpus: Corpus, diags: list[dict], lines: Lines) -> list[Finding]:
    from shaderlint.engine import fingerprint  # the working tree's, whatever tree linted

    out = []
    for d in diags:
        where = corpus.split(d["path"])
        if where is None:
            continue
        kernel = d.get("kernel") or "-"
        text = lines.line(d["path"], d.get("line", 0))
        fp = fingerprint(d["code"], d.get("kernel"), text)
        out.append(Finding(where[0], where[1], d["code"], kernel, fp, d.get("line", 0), d.get("message", ""),
                           column=d.get("column", 0)))
    return judging.rank(out)


def default_on_map() -> dict[str, bool]:
    from shaderlint.rules.registry import RULES

    return {r.code: r.default_on for r in RULES}


def load_judged(path: str = JUDGED) -> dict:
    with open(path, encoding="utf-8") as fh:
        return judging.parse_judged(fh.read(), os.path.relpath(path))


def checkout(rev: str, dest: str) -> None:
    """The tree of ``rev`` in ``dest`` (git archive: no worktree bookkeeping left behind)."""
    archive = subprocess.run(["git", "-C", REPO, "archive", "--format=tar", rev, "shaderlint"],
                             capture_output=True)
    if archive.returncode != 0:
        raise SystemExit(f"git archive {rev}: {archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", dest], input=archive.stdout, check=True)


def excerpt(lines: Lines, corpus_path: str, line: int, context: int = 3) -> str:
    lo, hi = max(1, line - context), min(lines.count(corpus_path), line + context)
    return "\n".join(f"{'>' if n == line else ' '}{n:6} | {lines.line(corpus_path, n)}" for n in range(lo, hi + 1))


def stats(corpus: Corpus) -> list[dict]:
    from shaderlint.discovery import discover
    from shaderlint.languages import language_for_path

    rows = []
    for p in corpus.packages:
        files: Counter = Counter()
        nlines: Counter = Counter()
        for path in discover([os.path.join(corpus.src, p.dirname)]):
            lang = language_for_path(path)
            files[lang] += 1
            with open(path, "rb") as fh:
                data = fh.read()
            nlines[lang] += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        rows.append({"package": p.name, "version": p.version, "files": dict(files), "lines": dict(nlines)})
    return rows


def render_stats(rows: list[dict]) -> str:
    langs = ("cuda", "metal", "glsl")
    out = [f"{'package':<30} {'version':<14} " + " ".join(f"{lang + ' files':>11} {lang + ' lines':>11}"
                                                          for lang in langs)]
    total_f: Counter = Counter()
    total_l: Counter = Counter()
    for r in rows:
        out.append(f"{r['package']:<30} {r['version']:<14} " + " ".join(
            f"{r['files'].get(lang, 0):>11} {r['lines'].get(lang, 0):>11}" for lang in langs))
        total_f.update(r["files"])
        total_l.update(r["lines"])
    out.append(f"{'total':<30} {'':<14} " + " ".join(f"{total_f[lang]:>11} {total_l[lang]:>11}" for lang in langs))
    out.append(f"{sum(total_f.values())} files, {sum(total_l.values())} lines")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fetch", action="store_true", help="download and extract the missing packages, then continue")
    ap.add_argument("--pin", metavar="NAME==VERSION", help="print a packages.tsv row for this sdist and exit")
    ap.add_argument("--stats", action="store_true", help="files and lines per package and language, then exit")
    ap.add_argument("--diff", metavar="REV", help="findings gained and lost from REV to the working tree")
    ap.add_argument("--unjudged", nargs="?", const="", metavar="CODE",
                    help="list unjudged findings (of CODE, or all) with an excerpt and a judged.tsv row")
    ap.add_argument("--limit", type=int, default=30, help="findings listed by --unjudged/--diff (default 30)")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--relint", action="store_true",
                    help="lint again even when <cache>/results/ holds results for these sources")
    args = ap.parse_args(argv)

    if args.pin:
        print(fetch.pin(args.pin))
        return 0
    cache = fetch.cache_dir()
    corpus = Corpus(cache, fetch.load_packages())
    if args.fetch:
        t0 = time.monotonic()
        failures = fetch.fetch_all(corpus.packages, cache, log=lambda m: print(m, file=sys.stderr))
        print(f"fetch: {len(corpus.packages) - len(failures)} of {len(corpus.packages)} packages in {cache}/src "
              f"({time.monotonic() - t0:.0f} s)", file=sys.stderr)
        if failures:
            return 2
    missing = corpus.missing()
    if missing:
        print(f"{len(missing)} package(s) missing from {cache}/src ({', '.join(p.dirname for p in missing[:5])}"
              f"{' ...' if len(missing) > 5 else ''}): run `python bench/realcode.py --fetch` "
              "(or set SHADERLINT_REALCODE_CACHE)", file=sys.stderr)
        return 2
    if args.stats:
        rows = stats(corpus)
        print(json.dumps(rows, indent=2) if args.json else render_stats(rows))
        return 0

    judged = load_judged()
    lines = Lines(corpus.src)
    if args.diff:
        with tempfile.TemporaryDirectory(prefix="realcode-rev-") as old_tree:
            checkout(args.diff, old_tree)
            before_diags = lint_cached(corpus, old_tree, args.jobs, args.relint)[0]
        after_diags = lint_cached(corpus, REPO, args.jobs, args.relint)[0]
        before = to_findings(corpus, before_diags, lines)
        after = to_findings(corpus, after_diags, lines)
        gained, lost = judging.diff_findings(before, after)
        return report_diff(args, gained, lost, before, after, judged, lines, corpus)

    diags, cpu, wall, cached = lint_cached(corpus, REPO, args.jobs, args.relint)
    findings = to_findings(corpus, diags, lines)
    if args.unjudged is not None:
        return report_unjudged(args, findings, judged, lines, corpus)
    table = judging.precision_table(findings, judged, default_on_map())
    if args.json:
        doc = table.as_dict()
        doc["lint"] = {"cpu_seconds": round(cpu, 2), "wall_seconds": round(wall, 2), "diagnostics": len(diags),
                       "cached": cached}
        print(json.dumps(doc, indent=2))
    else:
        print(judging.render_table(table))
        print(f"lint: {len(diags)} diagnostics, {cpu:.1f} s CPU ({wall:.1f} s wall, -j {args.jobs})"
              + (" [cached results of identical sources; --relint to measure]" if cached else ""))
    return 0


def _corpus_path(corpus: Corpus, f: Finding) -> str:
    pkg = next(p for p in corpus.packages if p.name == f.package)
    return f"{pkg.dirname}/{f.path}"


def report_unjudged(args, findings: list[Finding], judged: dict, lines: Lines, corpus: Corpus) -> int:
    todo = [f for f in findings if f.key not in judged and (not args.unjudged or f.code == args.unjudged)]
    seen, unique = set(), []
    for f in todo:
        if f.key not in seen:
            seen.add(f.key)
            unique.append(f)
    if args.json:
        print(json.dumps([{"key": list(f.key), "line": f.line, "message": f.message} for f in unique], indent=2))
        return 0
    for f in unique[:args.limit]:
        path = _corpus_path(corpus, f)
        print(f"{path}:{f.line}: {f.code} [{f.kernel}] {f.message}")
        print(excerpt(lines, path, f.line))
        print("judged.tsv: " + judging.format_row(f, "VERDICT", "REASON"))
        print()
    print(f"{len(unique)} unjudged finding(s){' of ' + args.unjudged if args.unjudged else ''}"
          f"{f', {args.limit} shown' if len(unique) > args.limit else ''}")
    return 0


def report_diff(args, gained, lost, before, after, judged, lines: Lines, corpus: Corpus) -> int:
    def verdict(f: Finding) -> str:
        j = judged.get(f.key)
        return j.verdict if j else "unjudged"

    per_rule: dict[str, Counter] = {}
    for kind, fs in (("gained", gained), ("lost", lost)):
        for f in fs:
            per_rule.setdefault(f.code, Counter())[(kind, verdict(f))] += 1
    if args.json:
        print(json.dumps({
            "rev": args.diff, "before": len(before), "after": len(after),
            "gained": [{"key": list(f.key), "line": f.line, "message": f.message, "verdict": verdict(f)}
                       for f in gained],
            "lost": [{"key": list(f.key), "line": f.line, "message": f.message, "verdict": verdict(f)}
                     for f in lost]}, indent=2))
        return 0
    print(f"{args.diff}: {len(before)} findings; working tree: {len(after)} "
          f"(+{len(gained)} gained, -{len(lost)} lost)")
    for code in sorted(per_rule):
        c = per_rule[code]
        parts = []
        for kind in ("gained", "lost"):
            n = sum(v for (k, _), v in c.items() if k == kind)
            if n:
                detail = ", ".join(f"{v} {verd}" for (k, verd), v in sorted(c.items()) if k == kind)
                parts.append(f"{'+' if kind == 'gained' else '-'}{n} ({detail})")
        print(f"  {code}: {'  '.join(parts)}")
    for kind, fs in (("gained", gained), ("lost", lost)):
        if not fs:
            continue
        print(f"\n{kind}:")
        for f in fs[:args.limit]:
            path = _corpus_path(corpus, f)
            print(f"  {'+' if kind == 'gained' else '-'} {path}:{f.line}: {f.code} [{f.kernel}] ({verdict(f)}) "
                  f"{f.message[:160]}")
        if len(fs) > args.limit:
            print(f"  ... {len(fs) - args.limit} more (--limit N, or --json)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
