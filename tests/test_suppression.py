"""Inline suppressions and SL002 unused-suppression (shaderlint.suppression, engine hook, --show-unused-ignores)."""

from __future__ import annotations

import pytest

from shaderlint.cli import main
from shaderlint.config import Settings
from shaderlint.engine import lint_source
from shaderlint.fixes import apply_fixes

# A loop: SL201 reports a division only where a thread repeats it with changing operands.
HEAD = "__global__ void k(const int* in, int* out, int w, int n) {\n    for (int i = threadIdx.x; i < n; i += 32) {\n"


def cu(*lines: str) -> bytes:
    return (HEAD + "".join(f"    {ln}\n" for ln in lines) + "    }\n}\n").encode()


def lint(data: bytes, *select: str, path: str = "k.cu"):
    return lint_source(path, data, Settings(select=select or ("SL201",)))


def codes_by_line(result) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in result.diagnostics]


def test_unsuppressed_baseline():
    r = lint(cu("out[i] = in[i] / w;", "out[i] = in[i] % n;"))
    assert codes_by_line(r) == [(3, "SL201"), (4, "SL201")]


def test_end_of_line_covers_only_that_line():
    r = lint(cu("out[i] = in[i] / w;  // shaderlint: ignore[SL201]", "out[i] = in[i] % n;"))
    assert codes_by_line(r) == [(4, "SL201")]
    (s,) = r.suppressions
    assert s.used == {"SL201"} and s.line == 3 and not s.file_level


def test_line_above_covers_the_next_code_line_skipping_blanks_and_comments():
    r = lint(cu("// shaderlint: ignore[SL201]", "", "// why: w is a power of two at run time", "out[i] = in[i] / w;",
                "out[i] = in[i] % n;"))
    assert codes_by_line(r) == [(7, "SL201")]
    assert r.suppressions[0].line == 6


def test_block_comment_form():
    r = lint(cu("out[i] = in[i] / w;  /* shaderlint: ignore[SL201] */"))
    assert codes_by_line(r) == []


def test_file_level():
    data = b"// shaderlint: ignore-file[SL201]\n" + cu("out[i] = in[i] / w;", "out[i] = in[i] % n;")
    r = lint(data)
    assert codes_by_line(r) == []
    (s,) = r.suppressions
    assert s.file_level and s.line == 0 and s.used == {"SL201"}


@pytest.mark.parametrize("directive", ["ignore[SL2]", "ignore[sl201]", "ignore[SL101, SL201]", "ignore[ SL20 ]"])
def test_prefixes_case_and_lists(directive):
    r = lint(cu(f"out[i] = in[i] / w;  // shaderlint: {directive}"))
    assert codes_by_line(r) == []


def test_other_codes_do_not_cover():
    r = lint(cu("out[i] = in[i] / w;  // shaderlint: ignore[SL101, SL2010]"))
    assert codes_by_line(r) == [(3, "SL201")]


def test_bare_ignore_covers_every_rule_on_its_line():
    r = lint(cu("out[i] = in[i] / w;  // shaderlint: ignore"), "SL201", "SL101")
    assert codes_by_line(r) == []
    assert r.suppressions[0].codes == () and r.suppressions[0].used == {"SL201"}


# ---- SL002 ---------------------------------------------------------------------------------------
def test_unused_is_reported_only_when_sl002_is_enabled():
    data = cu("out[i] = in[i] / 16;  // shaderlint: ignore[SL201]")
    assert codes_by_line(lint(data)) == []
    r = lint(data, "SL201", "SL002")
    (d,) = r.diagnostics
    assert (d.code, d.line, d.severity.value) == ("SL002", 3, "info")
    assert "no SL201 finding on line 3" in d.message
    assert r.source.data[d.start:d.end] == b"shaderlint: ignore[SL201]"


def test_used_suppression_is_not_reported():
    r = lint(cu("out[i] = in[i] / w;  // shaderlint: ignore[SL201]"), "SL201", "SL002")
    assert r.diagnostics == []


def test_bare_ignore_is_reported_even_when_used_and_fixed_to_name_its_codes():
    data = cu("out[i] = in[i] / w;  // shaderlint: ignore")
    r = lint(data, "SL201", "SL002")
    (d,) = r.diagnostics
    assert d.code == "SL002" and "bare" in d.message and "ignore[SL201]" in d.message
    new, n = apply_fixes("k.cu", data, r.diagnostics)
    assert n == 1 and b"// shaderlint: ignore[SL201]\n" in new
    assert lint(new, "SL201", "SL002").diagnostics == []


def test_unused_bare_ignore():
    r = lint(cu("out[i] = in[i];  // shaderlint: ignore"), "SL201", "SL002")
    assert [d.code for d in r.diagnostics] == ["SL002"] and "unused bare" in r.diagnostics[0].message


def test_code_of_a_rule_that_did_not_run_is_left_alone():
    r = lint(cu("out[i] = in[i];  // shaderlint: ignore[SL101]"), "SL201", "SL002")
    assert r.diagnostics == []


def test_unknown_code_is_reported_and_removed_from_the_list():
    data = cu("out[i] = in[i] / w;  // shaderlint: ignore[SL201, SL999]")
    r = lint(data, "SL201", "SL002")
    (d,) = r.diagnostics
    assert "unknown rule code SL999" in d.message
    new, _ = apply_fixes("k.cu", data, r.diagnostics)
    assert b"// shaderlint: ignore[SL201]\n" in new


def test_partly_unused_list_keeps_the_used_code():
    data = cu("out[i] = in[i] / w;  // shaderlint: ignore[SL201, SL101]")
    r = lint(data, "SL201", "SL101", "SL002")
    (d,) = r.diagnostics
    assert d.code == "SL002" and "no SL101 finding" in d.message
    new, _ = apply_fixes("k.cu", data, r.diagnostics)
    assert b"// shaderlint: ignore[SL201]\n" in new


def test_unused_file_level():
    data = b"// shaderlint: ignore-file[SL201]\n" + cu("out[i] = in[i];")
    (d,) = lint(data, "SL201", "SL002").diagnostics
    assert d.line == 1 and "in this file" in d.message


def test_fix_removes_an_own_line_directive_with_its_line():
    data = cu("// shaderlint: ignore[SL201]", "out[i] = in[i] / 16;")
    r = lint(data, "SL201", "SL002")
    new, n = apply_fixes("k.cu", data, r.diagnostics)
    assert n == 1 and new == cu("out[i] = in[i] / 16;")


def test_fix_removes_an_end_of_line_directive_and_its_blanks():
    data = cu("out[i] = in[i] / 16;   // shaderlint: ignore[SL201]")
    new, _ = apply_fixes("k.cu", data, lint(data, "SL201", "SL002").diagnostics)
    assert new == cu("out[i] = in[i] / 16;")


def test_a_directive_sharing_its_comment_with_a_reason_is_reported_but_not_removed():
    data = cu("out[i] = in[i] / 16;  // shaderlint: ignore[SL201] -- hot loop, see #12")
    r = lint(data, "SL201", "SL002")
    assert [d.code for d in r.diagnostics] == ["SL002"] and r.diagnostics[0].fix is None


def test_sl002_is_suppressed_only_by_a_directive_that_names_it():
    data = cu("out[i] = in[i] / 16;  // shaderlint: ignore[SL201]")
    assert [d.code for d in lint(b"// shaderlint: ignore-file[SL002]\n" + data, "SL201", "SL002").diagnostics] == []
    bare = cu("out[i] = in[i];  // shaderlint: ignore")
    assert [d.code for d in lint(bare, "SL201", "SL002").diagnostics] == ["SL002"]


def test_show_unused_ignores_flag(tmp_path, capsys):
    p = tmp_path / "k.cu"
    p.write_bytes(cu("out[i] = in[i] / 16;  // shaderlint: ignore[SL201]"))
    assert main([str(p), "--no-cache", "-q", "--extend-select", "SL201"]) == 0
    assert "SL002" not in capsys.readouterr().out
    assert main([str(p), "--no-cache", "-q", "--extend-select", "SL201", "--show-unused-ignores"]) == 0  # info: below --fail-on warning
    out = capsys.readouterr().out
    assert "SL002" in out and ":3:" in out
