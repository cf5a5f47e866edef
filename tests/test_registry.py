"""The registry's contract: unique codes, complete docs, fixtures per claimed language, fresh pages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shaderlint.dev import render_docs
from shaderlint.rules.base import DOC_SECTIONS
from shaderlint.rules.registry import RULES
from tests.fixture_harness import FIXTURES, read_expectations

EXT = {"metal": (".metal",), "cuda": (".cu", ".cuh"), "glsl": (".comp", ".frag", ".vert", ".glsl", ".geom", ".mesh",
                                                            ".task", ".tesc", ".tese", ".rgen", ".rchit", ".rmiss")}


def test_codes_and_names_unique():
    assert len({r.code for r in RULES}) == len(RULES)
    assert len({r.name for r in RULES}) == len(RULES)
    for r in RULES:
        assert re.fullmatch(r"SL\d{3}", r.code), r.code
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.name), r.name
        assert not r.name.startswith(("avoid-", "prefer-", "use-")), r.name
        assert r.summary


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_docstring_sections(rule):
    sections = rule.sections()
    missing = [s for s in DOC_SECTIONS if s not in sections]
    if "cuda" in rule.languages and rule.code != "SL001":
        missing += [] if "Evidence" in sections else ["Evidence"]
    assert not missing, f"{rule.code} docstring lacks sections {missing}"
    assert rule.doc().splitlines()[0] == f"{rule.code} {rule.name}"
    for s in DOC_SECTIONS:
        assert "TODO" not in sections[s], f"{rule.code}: section {s!r} is a stub"


@pytest.mark.parametrize("rule", [r for r in RULES if r.code != "SL001"], ids=lambda r: r.code)
def test_fixtures_cover_each_language_with_positives_and_negatives(rule):
    for lang in sorted(rule.languages):
        files = [p for p in (FIXTURES / lang).rglob("*") if p.suffix in EXT[lang] and ".fixed." not in p.name]
        positives = negatives = 0
        for p in files:
            text = p.read_text(encoding="utf-8", errors="replace")
            exp = read_expectations(text)
            if exp.rules and rule.code not in exp.rules:
                continue
            pos_lines = sum(c[rule.code] for c in exp.expected.values())
            positives += pos_lines
            if exp.rules and rule.code in exp.rules:
                code_lines = [ln for ln in text.splitlines() if ln.strip() and not ln.strip().startswith(("//", "#"))]
                negatives += max(0, len(code_lines) - pos_lines)
        assert positives >= 2, f"{rule.code}: fewer than 2 positive fixture lines for {lang}"
        assert negatives >= 10, f"{rule.code}: no look-alike negatives scoped to it for {lang}"


def test_rule_pages_are_fresh():
    assert render_docs(check=True) == 0, "rules/ pages are stale: run `python -m shaderlint.dev docs`"
