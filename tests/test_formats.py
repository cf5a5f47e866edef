"""SARIF 2.1.0 (validated against the official schema) and GitHub annotations."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shaderlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Impact, RelatedLocation, Severity
from shaderlint.engine import FileResult, lint_source
from shaderlint.formatters import FORMATS, get_formatter
from shaderlint.formatters.json import dumps
from shaderlint.formatters.github import escape_data, escape_property, format_github
from shaderlint.formatters.sarif import format_sarif
from shaderlint.formatters.statistics import format_statistics_text, statistics
from shaderlint.model.source import Source
from shaderlint.rules.registry import RULES

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


def validate(log: dict) -> None:
    jsonschema.Draft4Validator(SCHEMA).validate(log)


def diag(path: str, **kw) -> Diagnostic:
    base = dict(path=path, code="SL201", name="variable-integer-division", severity=Severity.WARNING,
                message="integer division by 'n'", start=10, end=11, line=3, column=5, end_line=3, end_column=6,
                kernel="k", fingerprint="0123456789abcdef")
    base.update(kw)
    return Diagnostic(**base)


def result(path: str, *diags: Diagnostic) -> FileResult:
    return FileResult(path, Source(path, b""), "cuda", list(diags))


def test_sarif_of_real_results_is_valid(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    results = []
    for p in sorted((ROOT / "tests" / "fixtures").rglob("*")):
        if p.is_file() and ".fixed." not in p.name:
            results.append(lint_source(str(p.relative_to(ROOT)), p.read_bytes()))
    log = json.loads(format_sarif(results, {"root": str(ROOT)}))
    validate(log)
    run = log["runs"][0]
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    driver = run["tool"]["driver"]
    assert driver["name"] == "shaderlint" and driver["version"] and driver["informationUri"].startswith("https://")
    assert [r["id"] for r in driver["rules"]] == [r.code for r in RULES]
    for rd, rule in zip(driver["rules"], RULES):
        assert rd["name"] == rule.name
        assert rd["shortDescription"]["text"] and rd["fullDescription"]["text"] and rd["help"]["text"]
        assert rd["help"]["markdown"] == rule.markdown() and rd["helpUri"] == rule.url()
        assert rd["defaultConfiguration"]["level"] in ("error", "warning", "note")
    assert run["results"], "the fixtures have findings"
    total = sum(len(r.diagnostics) for r in results)
    assert len(run["results"]) == total
    for res in run["results"]:
        assert driver["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert loc["artifactLocation"]["uri"].startswith("tests/fixtures/")
        assert set(loc["region"]) == {"startLine", "startColumn", "endLine", "endColumn"}
        assert len(res["partialFingerprints"]["shaderlint/v1"]) == 16
    assert any("relatedLocations" in r for r in run["results"])
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == ROOT.as_uri() + "/"


def test_sarif_fixes_related_impact_levels_and_outside_paths(tmp_path):
    inside = str(tmp_path / "src" / "a b.cu")
    outside = "/elsewhere/k.metal"
    d1 = diag(inside, related=(RelatedLocation(inside, 7, 2, "used here", 40, 41),),
              fix=Fix("Suffix the literal with h", Applicability.SAFE, (Edit(10, 13, "0.5h"),)),
              fix_ranges=((3, 5, 3, 8),), impact=Impact("sm_80", registers=-2, occupancy_before=0.5,
                                                        occupancy_after=0.75),
              message="multi\nline % message: ünïcode")
    d2 = diag(outside, code="SL001", name="parse-error", severity=Severity.ERROR, kernel=None)
    d3 = diag(inside, code="SL301", name="wide-thread-id", severity=Severity.INFO, start=0, end=0,
              line=1, column=1, end_line=2, end_column=1)
    log = json.loads(format_sarif([result(inside, d1, d3), result(outside, d2)], {"root": str(tmp_path)}))
    validate(log)
    r1, r3, r2 = log["runs"][0]["results"]
    assert r1["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "src/a%20b.cu",
                                                                          "uriBaseId": "%SRCROOT%"}
    assert r1["message"]["text"] == "multi\nline % message: ünïcode"
    assert r1["relatedLocations"][0]["physicalLocation"]["region"] == {"startLine": 7, "startColumn": 2}
    assert r1["relatedLocations"][0]["message"]["text"] == "used here"
    [fix] = r1["fixes"]
    assert fix["description"]["text"] == "Suffix the literal with h (safe fix)"
    [rep] = fix["artifactChanges"][0]["replacements"]
    assert rep == {"deletedRegion": {"startLine": 3, "startColumn": 5, "endLine": 3, "endColumn": 8},
                   "insertedContent": {"text": "0.5h"}}
    assert r1["properties"]["impact"]["registers"] == -2 and r1["properties"]["kernel"] == "k"
    assert r2["level"] == "error" and r2["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "file:///elsewhere/k.metal"}
    assert r3["level"] == "note"
    assert log["runs"][0]["columnKind"] == "unicodeCodePoints"


def test_sarif_with_no_results_is_valid(tmp_path):
    log = json.loads(format_sarif([], {"root": str(tmp_path)}))
    validate(log)
    assert log["runs"][0]["results"] == []


def test_github_escaping():
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_data("a: b, c") == "a: b, c"
    assert escape_property("dir:x,y%z\n") == "dir%3Ax%2Cy%25z%0A"


def test_github_annotations(tmp_path):
    a = str(tmp_path / "k,1:odd.cu")
    diags = [
        diag(a, message="100% of lanes: idle,\nreally"),
        diag(a, code="SL101", name="dynamic-stack-array", line=4, column=3, end_line=6, end_column=2),
        diag(a, code="SL001", name="parse-error", severity=Severity.ERROR),
        diag(a, code="SL303", name="float-texture-read", severity=Severity.INFO),
    ]
    out = format_github([result(a, *diags)], {"root": str(tmp_path)}).splitlines()
    assert out == [
        "::warning file=k%2C1%3Aodd.cu,line=3,endLine=3,col=5,endColumn=6,"
        "title=SL201 variable-integer-division::100%25 of lanes: idle,%0Areally",
        "::warning file=k%2C1%3Aodd.cu,line=4,endLine=6,title=SL101 dynamic-stack-array::integer division by 'n'",
        "::error file=k%2C1%3Aodd.cu,line=3,endLine=3,col=5,endColumn=6,title=SL001 parse-error::"
        "integer division by 'n'",
        "::notice file=k%2C1%3Aodd.cu,line=3,endLine=3,col=5,endColumn=6,title=SL303 float-texture-read::"
        "integer division by 'n'",
    ]
    assert format_github([], {"root": str(tmp_path)}) == ""


def test_statistics_rows_and_table(tmp_path):
    """``fixable`` counts what --fix would fix: safe fixes, unsafe ones only with --unsafe-fixes."""
    a = str(tmp_path / "a.cu")
    unsafe = Fix("x", Applicability.UNSAFE, (Edit(0, 1, "y"),))
    safe = Fix("x", Applicability.SAFE, (Edit(2, 3, "y"),))
    results = [result(a, diag(a), diag(a), diag(a, code="SL101", name="dynamic-stack-array", fix=unsafe),
                      diag(a, code="SL202", name="float-literal-in-half-math", fix=safe),
                      diag(a, code="SL202", name="float-literal-in-half-math"))]
    rows = statistics(results)
    assert rows == [
        {"code": "SL201", "name": "variable-integer-division", "severity": "warning", "count": 2, "fixable": 0},
        {"code": "SL202", "name": "float-literal-in-half-math", "severity": "warning", "count": 2, "fixable": 1},
        {"code": "SL101", "name": "dynamic-stack-array", "severity": "warning", "count": 1, "fixable": 0},
    ]
    assert format_statistics_text(rows) == (
        "     2  SL201      variable-integer-division   [warning]\n"
        "     2  SL202  [*] float-literal-in-half-math  [warning]  (1 fixable)\n"
        "     1  SL101      dynamic-stack-array         [warning]\n"
        "     5  total\n"
    )
    assert [r["fixable"] for r in statistics(results, unsafe=True)] == [0, 1, 1]
    assert format_statistics_text(statistics(results[:0])) == "No problems found.\n"


@pytest.mark.parametrize("name", FORMATS)
def test_every_format_handles_an_empty_run(name):
    assert isinstance(get_formatter(name)([], {"root": "."}), str)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_json_writer_matches_the_standard_library(value):
    assert dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_json_format_of_real_results_is_unchanged(monkeypatch):
    monkeypatch.chdir(ROOT)
    results = [lint_source(str(p.relative_to(ROOT)), p.read_bytes()) for p in sorted((ROOT / "examples").iterdir())
               if p.is_file()]
    items = [d.to_json() for r in results for d in r.diagnostics]
    assert items
    assert get_formatter("json")(results, {}) == json.dumps(items, indent=2, ensure_ascii=False) + "\n"


# ---- text: impact lines, plurals, percentages, control characters -------------------------------
def test_text_impact_lines_show_only_what_changes():
    from shaderlint.formatters.text import format_text

    def impact_line(**kw) -> list[str]:
        d = diag("k.cu", impact=Impact(target="sm_80", **kw))
        out = format_text([result("k.cu", d)], {"files": 1})
        return [line for line in out.splitlines() if "impact" in line]

    assert impact_line(registers=0, stack_bytes=0, occupancy_before=1.0, occupancy_after=1.0) == []
    assert impact_line(registers=None, occupancy_before=0.5) == []
    assert impact_line(registers=-2, stack_bytes=0, occupancy_before=0.125, occupancy_after=0.125) == [
        "      = impact if fixed (estimate, sm_80): registers -2"]
    assert impact_line(stack_bytes=-64, occupancy_before=0.125, occupancy_after=0.9375) == [
        "      = impact if fixed (estimate, sm_80): stack -64 B, occupancy 12.5% → 93.8%"]


def test_text_summary_counts_in_words():
    from shaderlint.formatters.text import format_text

    one = [result("k.cu", diag("k.cu"))]
    assert format_text(one, {"files": 1, "quiet": False}).splitlines()[-1] == "Found 1 problem (1 warning) in 1 file."
    many = [result("k.cu", diag("k.cu"), diag("k.cu", severity=Severity.ERROR), diag("k.cu", severity=Severity.INFO),
                   diag("k.cu", severity=Severity.INFO))]
    assert format_text(many, {"files": 3}).splitlines()[-1] == \
        "Found 4 problems (1 error, 1 warning, 2 info) in 3 files."
    assert format_text([], {"files": 0}) == "No problems found in 0 files.\n"


def test_text_shows_control_characters_as_pictures_keeping_the_caret_aligned():
    from shaderlint.formatters.text import format_text, printable

    data = b"int a;\nint b;\n\x1b]0;x\x07 q = a / b;\n"
    src = Source("k.cu", data)
    d = diag("k.cu\x1b", line=3, column=16, end_line=3, end_column=17, message="by 'b\x9b'")
    out = format_text([FileResult("k.cu", src, "cuda", [d])], {"files": 1}).splitlines()
    assert out[0] == "k.cu␛:3:16: SL201 [warning] by 'b\ufffd'"
    assert out[1] == "    3 | ␛]0;x␇ q = a / b;"
    assert out[2] == "      |                ^"
    assert out[1].index("b;") == out[2].index("^")  # the caret is under the divisor
    assert printable("plain text") == "plain text" and printable("\x7f\x00") == "\u2421\u2400"


def test_sarif_marks_a_run_with_paths_it_could_not_lint_unsuccessful(tmp_path):
    log = json.loads(format_sarif([], {"root": str(tmp_path), "failed_paths": [("nope.cu", "no such file or directory")]}))
    validate(log)
    inv = log["runs"][0]["invocations"][0]
    assert inv == {"executionSuccessful": False, "toolExecutionNotifications": [
        {"level": "error", "message": {"text": "nope.cu: no such file or directory"}}]}
    assert json.loads(format_sarif([], {"root": str(tmp_path)}))["runs"][0]["invocations"] == [
        {"executionSuccessful": True}]
