"""A short, deterministic fuzzing run for CI (the long campaign is ``bench/fuzz.py --minutes N``).

Inputs come from hypothesis (derandomized: the same examples every run) through the campaign's own
generators and checks: every input is linted as Metal, CUDA and GLSL with random settings, fixed
(safe and unsafe) and formatted in every format; see ``bench/fuzz.py`` for what counts as a failure.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shaderlint.config import ConfigError, Settings, settings_from_table
from tests.robustness.conftest import SENTINEL_CONFIG, load_fuzz

fuzz = load_fuzz()
SEEDS = fuzz.load_seeds()
COMMON = dict(deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                                     HealthCheck.function_scoped_fixture])


def _explain(data: bytes, failures) -> str:
    return "\n".join(f"{f.kind} [{f.language} {f.path} {f.table}]: {f.detail}" for f in failures) + \
        f"\ninput ({len(data)} bytes): {data[:400]!r}"


@settings(max_examples=300, **COMMON)
@given(st.integers(min_value=0, max_value=2**32))
def test_mutated_fixtures(n):
    rng = random.Random(n)
    data = fuzz.generate(rng, SEEDS)
    failures = fuzz.real_failures(fuzz.check_input(data, rng))
    assert not failures, _explain(data, failures)


SEED_FILES = fuzz.load_seed_files()


@settings(max_examples=40, **COMMON)
@given(st.integers(min_value=0, max_value=2**32))
def test_edit_chains_per_function_equal_whole_file(n):
    """Typing into a whole example or fixture: each edit's per-function lint equals a whole-file lint."""
    rng = random.Random(n)
    path, data = rng.choice(SEED_FILES)
    failures = fuzz.check_chain(path, data, rng, SEEDS)
    assert not failures, _explain(data, failures)


@settings(max_examples=150, **COMMON)
@given(st.binary(max_size=3000), st.integers(min_value=0, max_value=2**32))
def test_random_bytes(data, n):
    failures = fuzz.real_failures(fuzz.check_input(data, random.Random(n)))
    assert not failures, _explain(data, failures)


_TOKENS = [t for t in fuzz._PUNCT + fuzz._WORDS + fuzz._NUMBERS + [b" ", b"\n", b"x", b"i", b"a[i]", b"+", b"*"]]


@settings(max_examples=150, **COMMON)
@given(st.lists(st.sampled_from(_TOKENS), max_size=300), st.integers(min_value=0, max_value=2**32))
def test_token_soup(tokens, n):
    data = b" ".join(tokens)
    failures = fuzz.real_failures(fuzz.check_input(data, random.Random(n)))
    assert not failures, _explain(data, failures)


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
    | st.sampled_from(["SL101", "SL2", "ALL", "sm_80", "apple-m1", "16x16", "threads", "**", "*.cu"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_KEYS = st.sampled_from(["select", "ignore", "extend-select", "per-file-ignores", "target", "occupancy-threshold",
                         "exclude", "facts", "threadgroup-size", "grid-size", "dispatch", "time-budget", "bogus"])


@settings(max_examples=400, **COMMON)
@given(st.dictionaries(_KEYS, _VALUES, max_size=5))
def test_random_configuration_tables(table):
    """An invalid ``[tool.shaderlint]`` table raises ConfigError (exit 2 with a message), nothing else;
    a valid one gives settings the engine can use."""
    try:
        s = settings_from_table(table, "fuzz.toml")
    except ConfigError as e:
        assert str(e).startswith("fuzz.toml")
        return
    assert isinstance(s, Settings)
    s.key()
    s.facts_for("x/k.cu")
    s.ignored_for("x/k.cu")
    s.is_excluded("x/k.cu")


@settings(max_examples=200, **COMMON)
@given(st.text(max_size=400))
def test_random_toml_text(project, text):
    """Any configuration file text: exit 0/1 with a valid file, 2 with a message otherwise; never a crash."""
    from shaderlint.cli import main

    (project / "shaderlint.toml").write_text(SENTINEL_CONFIG + text, encoding="utf-8", errors="surrogatepass")
    (project / "k.cu").write_text("__global__ void k(int* a, int n) { a[0] = a[1] / n; }\n")
    assert main(["--no-cache", "-q", "k.cu"]) in (0, 1, 2)


def test_campaign_runs_and_reports(tmp_path, capsys):
    """``bench/fuzz.py`` itself: a few seconds' campaign prints its figures and finds nothing."""
    code = fuzz.main(["--minutes", "0.03", "--jobs", "1", "--seed", "7", "--out", str(tmp_path / "failures")])
    out = capsys.readouterr().out
    assert "inputs tried:" in out and "inputs/s:" in out and "failing inputs: 0" in out
    assert code == 0


@pytest.mark.parametrize("mutation", fuzz._MUTATIONS, ids=lambda m: m.__name__)
def test_every_mutation(mutation):
    """Each mutation on its own, on a few seeds, so that none of them is left out by chance."""
    rng = random.Random(mutation.__name__)
    for data in SEEDS[::17]:
        mutated = mutation(data, rng, SEEDS)
        failures = fuzz.real_failures(fuzz.check_input(mutated, rng))
        assert not failures, _explain(mutated, failures)
