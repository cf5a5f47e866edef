"""One parametrized test runs every fixture under tests/fixtures (see fixture_harness)."""

from __future__ import annotations

import pytest

from tests.fixture_harness import FIXTURES, check_fixture, fixture_files, needs_missing_compiler, read_expectations

FILES = fixture_files()


def test_fixtures_exist():
    assert len(FILES) >= 6


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FIXTURES)) for p in FILES])
def test_fixture(path):
    if needs_missing_compiler(read_expectations(path.read_text(errors="replace"))):
        pytest.skip("the fixture's figures come from nvcc, which is not installed")
    problems = check_fixture(path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", [p for p in FILES if any(p.parent.glob(p.stem + ".fixed" + p.suffix))],
                         ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_fix(path):
    from shaderlint.config import Settings
    from shaderlint.engine import lint_source
    from shaderlint.fixes import apply_fixes
    from tests.fixture_harness import fixture_settings

    data = path.read_bytes()
    exp = read_expectations(data.decode())
    if needs_missing_compiler(exp):
        pytest.skip("the fixture's figures come from nvcc, which is not installed")
    settings = fixture_settings(exp)
    fixed_path = path.parent / (path.stem + ".fixed" + path.suffix)
    result = lint_source(str(path), data, settings)
    new, applied = apply_fixes(str(path), data, result.diagnostics, unsafe=True)
    assert new.decode() == fixed_path.read_text(), f"fix result differs from {fixed_path.name}"
    again = lint_source(str(path), new, settings)
    new2, applied2 = apply_fixes(str(path), new, again.diagnostics, unsafe=True)
    assert new2 == new and not applied2, "applying fixes a second time changed the file"
