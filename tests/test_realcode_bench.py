"""The pure parts of bench/realcode.py on synthetic data (no corpus, no download)."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import tarfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("realcode_bench", os.path.join(ROOT, "bench", "realcode.py"))
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)
fetch, judging = bench.fetch, bench.judging
Finding = judging.Finding

HEADER = "package\tpath\tcode\tkernel\tfingerprint\tn\tverdict\treason\n"
FP = "0123456789abcdef"


def row(*cols):
    return "\t".join(cols) + "\n"


def test_parse_judged_reads_rows_and_skips_comments():
    text = ("# comment\n\n" + HEADER
            + row("vllm", "csrc/a.cu", "SL201", "k", FP, "1", "true", "runtime divisor in the hot loop")
            + row("ncnn", "src/b.comp", "SL301", "-", FP, "02", "debatable", "cost unclear"))
    judged = judging.parse_judged(text)
    assert set(judged) == {("vllm", "csrc/a.cu", "SL201", "k", FP, "1"), ("ncnn", "src/b.comp", "SL301", "-", FP, "2")}
    j = judged[("vllm", "csrc/a.cu", "SL201", "k", FP, "1")]
    assert (j.verdict, j.reason, j.lineno) == ("true", "runtime divisor in the hot loop", 4)


@pytest.mark.parametrize("body, message", [
    ("package\tpath\tcode\n", "header"),
    (HEADER + row("p", "a.cu", "SL201", "k", FP, "1", "yes", "r"), "verdict 'yes'"),
    (HEADER + row("p", "a.cu", "SL201", "k", FP, "1", "true"), "7 columns"),
    (HEADER + row("p", "a.cu", "SL201", "", FP, "1", "true", "r"), "empty column"),
    (HEADER + row("p", "a.cu", "SL201", "k", FP, "0", "true", "r"), "n must be a positive integer"),
    (HEADER + row("p", "a.cu", "SL201", "k", FP, "1", "true", "r") + row("p", "a.cu", "SL201", "k", FP, "1", "false", "s"),
     "judged twice (first at line 2)"),
])
def test_parse_judged_rejects_malformed_files(body, message):
    with pytest.raises(judging.JudgedError, match=message.replace("(", r"\(").replace(")", r"\)")):
        judging.parse_judged(body)


def test_committed_judged_file_parses():
    with open(os.path.join(ROOT, "bench", "realcode", "judged.tsv"), encoding="utf-8") as fh:
        judging.parse_judged(fh.read())


def test_committed_package_list_parses():
    packages = fetch.load_packages()
    assert len({p.name for p in packages}) == len(packages)
    assert all(len(p.sha256) == 64 for p in packages)


def f(code, package="p", path="a.cu", kernel="k", fp=FP, line=1, n=1):
    return Finding(package, path, code, kernel, fp, line, n=n)


def test_precision_table_counts_verdicts_per_finding_and_splits_opt_in():
    judged = judging.parse_judged(
        HEADER
        + row("p", "a.cu", "SL201", "k", "1" * 16, "1", "true", "r")
        + row("p", "a.cu", "SL201", "k", "1" * 16, "2", "true", "r")
        + row("p", "a.cu", "SL201", "k", "2" * 16, "1", "false", "r")
        + row("p", "a.cu", "SL201", "k", "3" * 16, "1", "debatable", "r")
        + row("p", "a.cu", "SL302", "k", "4" * 16, "1", "true", "r")
        + row("p", "gone.cu", "SL101", "k", "5" * 16, "1", "true", "no longer found"))
    findings = [f("SL201", fp="1" * 16), f("SL201", fp="1" * 16, line=9, n=2),
                f("SL201", fp="2" * 16), f("SL201", fp="3" * 16), f("SL201", fp="9" * 16),
                f("SL302", fp="4" * 16), f("SL999", fp="8" * 16)]
    table = judging.precision_table(findings, judged, {"SL201": True, "SL302": False})
    rows = {r.code: r for r in table.rows}
    sl201 = rows["SL201"]
    assert (sl201.findings, sl201.true, sl201.false, sl201.debatable, sl201.unjudged) == (5, 2, 1, 1, 1)
    assert sl201.precision == pytest.approx(2 / 3)
    assert sl201.debatable_share == pytest.approx(1 / 4)
    assert rows["SL999"].default_on  # a code the registry does not know counts as default
    assert [r.code for r in table.rows] == ["SL201", "SL999", "SL302"]
    d, o = table.default_total, table.optin_total
    assert (d.findings, d.true, d.false, d.debatable, d.unjudged) == (6, 2, 1, 1, 2)
    assert (o.findings, o.true, o.precision) == (1, 1, 1.0)
    assert [j.key[1] for j in table.stale] == ["gone.cu"]
    text = judging.render_table(table)
    assert "overall precision over default findings: 66.7% (2 true / 3 decided; 4 of 6 judged)" in text
    assert "debatable share 25.0%" in text
    assert "1 judgement(s) match no current finding (judged.tsv lines 7)" in text


def test_precision_is_undefined_without_decided_findings():
    table = judging.precision_table([f("SL201")], {}, {"SL201": True})
    assert table.default_total.precision is None and table.default_total.debatable_share is None
    assert "overall precision over default findings: - (0 true / 0 decided; 0 of 1 judged)" in \
        judging.render_table(table)


def test_diff_findings_by_key_with_multiplicity():
    a, b, c = f("SL201", fp="a" * 16), f("SL201", fp="b" * 16), f("SL301", fp="c" * 16)
    moved_a = f("SL201", fp="a" * 16, line=40)  # same key on another line: not a change
    b2 = f("SL201", fp="b" * 16, line=50, n=2)
    b_shifted = f("SL201", fp="b" * 16, n=2)  # rank changed only: not a change
    gained, lost = judging.diff_findings([a, b, b2], [moved_a, b_shifted, c])
    assert gained == [c]
    assert lost == [b2]  # one of the two same-text findings went away


def test_findings_take_package_path_and_baseline_fingerprint(tmp_path):
    from shaderlint.engine import fingerprint

    src = tmp_path / "src" / "pkg-1.0" / "csrc"
    src.mkdir(parents=True)
    (src / "k.cu").write_text("int x;\n  int q = a   /  b;\n")
    corpus = bench.Corpus(str(tmp_path), [fetch.Package("pkg", "1.0", "0" * 64)])
    diags = [{"path": "pkg-1.0/csrc/k.cu", "line": 2, "code": "SL201", "kernel": "k", "message": "m"},
             {"path": "pkg-1.0/csrc/k.cu", "line": 2, "code": "SL001", "kernel": None, "message": "m"},
             {"path": "elsewhere/k.cu", "line": 1, "code": "SL201", "kernel": "k", "message": "m"}]
    found = bench.to_findings(corpus, diags, bench.Lines(corpus.src))
    assert [x.key for x in found] == [
        ("pkg", "csrc/k.cu", "SL201", "k", fingerprint("SL201", "k", "int q = a / b;"), "1"),
        ("pkg", "csrc/k.cu", "SL001", "-", fingerprint("SL001", None, "int q = a / b;"), "1"),
    ]


def test_rank_numbers_same_text_findings_in_line_order():
    same = [f("SL403", fp="s" * 16, line=30), f("SL403", fp="s" * 16, line=10), f("SL403", fp="t" * 16, line=20),
            f("SL403", fp="s" * 16, line=10, path="b.cu")]
    assert [(x.line, x.n) for x in judging.rank(same)] == [(30, 2), (10, 1), (20, 1), (10, 1)]


def test_parse_packages_prune_column_and_errors():
    sha = "a" * 64
    pkgs = fetch.parse_packages(f"# c\nfoo\t1.0\t{sha}\tx/test, y\tCUDA\nbar\t2\t{sha}\t-\n")
    assert pkgs[0] == fetch.Package("foo", "1.0", sha, ("x/test", "y"), "CUDA")
    assert pkgs[1].prune == () and pkgs[1].dirname == "bar-2"
    with pytest.raises(ValueError, match="sha256"):
        fetch.parse_packages("foo\t1.0\tabc\n")
    with pytest.raises(ValueError, match="leaves the package"):
        fetch.parse_packages(f"foo\t1.0\t{sha}\t../etc\n")


def _sdist(tmp_path, name="foo", version="1.0"):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for rel, data in ((f"{name}-{version}/PKG-INFO", b"Name: foo\nVersion: 1.0\n"),
                          (f"{name}-{version}/k.cu", b"__global__ void k() {}\n"),
                          (f"{name}-{version}/third_party/test/t.cu", b"// vendored tests\n")):
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_fetch_extracts_a_cached_archive_with_the_pinned_hash_and_prunes(tmp_path, monkeypatch):
    data = _sdist(tmp_path)
    (tmp_path / "sdist").mkdir()
    (tmp_path / "sdist" / "foo-1.0.tar.gz").write_bytes(data)
    monkeypatch.setattr(fetch, "_pip", lambda *a, **k: pytest.fail("pip must not run for a cached archive"))
    pkg = fetch.Package("foo", "1.0", hashlib.sha256(data).hexdigest(), ("third_party/test",))
    assert fetch.fetch_all([pkg], str(tmp_path), log=lambda m: None) == []
    dest = tmp_path / "src" / "foo-1.0"
    assert (dest / "k.cu").read_bytes() == b"__global__ void k() {}\n"
    assert not (dest / "third_party" / "test").exists() and (dest / "third_party").is_dir()
    assert (tmp_path / "READY").exists()


def test_fetch_takes_the_tree_pip_unpacked_when_the_metadata_build_fails(tmp_path, monkeypatch):
    def fake_pip(pkg, download_dir, work, hashes=True):
        tree = os.path.join(work, "tmp", "pip-download-x1", "foo_0123")
        os.makedirs(tree)
        with open(os.path.join(tree, "PKG-INFO"), "w") as fh:
            fh.write("Metadata-Version: 2.1\nName: foo\nVersion: 1.0\n\nbody\n")
        with open(os.path.join(tree, "k.metal"), "w") as fh:
            fh.write("kernel void k() {}\n")

        class Proc:
            returncode, stdout, stderr = 1, "", "ModuleNotFoundError: No module named 'torch'"
        return Proc()

    monkeypatch.setattr(fetch, "_pip", fake_pip)
    dest = fetch.fetch(fetch.Package("foo", "1.0", "b" * 64), str(tmp_path), log=lambda m: None)
    assert open(os.path.join(dest, "k.metal")).read() == "kernel void k() {}\n"
    # another version in pip's tree is not taken
    with pytest.raises(RuntimeError, match="failed before unpacking"):
        fetch.fetch(fetch.Package("foo", "2.0", "b" * 64), str(tmp_path / "other"), log=lambda m: None)


def test_results_digest_follows_the_linted_sources_and_the_package_list(tmp_path):
    (tmp_path / "shaderlint" / "rules").mkdir(parents=True)
    (tmp_path / "shaderlint" / "rules" / "r.py").write_text("A = 1\n")
    pkg = fetch.Package("p", "1", "a" * 64)
    corpus = bench.Corpus(str(tmp_path), [pkg])
    first = bench.tree_digest(str(tmp_path), corpus)
    assert bench.tree_digest(str(tmp_path), corpus) == first
    (tmp_path / "shaderlint" / "rules" / "r.py").write_text("A = 2\n")
    second = bench.tree_digest(str(tmp_path), corpus)
    assert second != first
    assert bench.tree_digest(str(tmp_path), bench.Corpus(str(tmp_path), [pkg, fetch.Package("q", "1", "b" * 64)])) \
        != second


def test_lines_are_numbered_as_shaderlint_numbers_them(tmp_path):
    (tmp_path / "k.cu").write_bytes(b"a\r\nb\x0cc\rd\n\xffe\n")
    lines = bench.Lines(str(tmp_path))
    assert [lines.line("k.cu", n) for n in (1, 2, 3, 4, 5)] == ["a", "b\x0cc", "d", "\ufffde", ""]
    assert bench.excerpt(lines, "k.cu", 2, context=1).split("\n") == \
        ["      1 | a", ">     2 | b\x0cc", "      3 | d"]
