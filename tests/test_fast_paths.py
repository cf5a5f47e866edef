"""Fast paths that must answer exactly as the straightforward code they replace (pure speed changes):
the answers are compared with that code, kept here, on inputs chosen at the edges of each shortcut."""

from __future__ import annotations

import re

import pytest

from shaderlint.model.source import Source
from shaderlint.rules.sl203_half_literal_overflow import HALF_MAX, _BIG_NUMBER, _has_big_literal


def _line_starts_reference(data: bytes) -> list[int]:
    return [0] + [m.end() for m in re.finditer(rb"\r\n|\r|\n", data)]


@pytest.mark.parametrize("data", [
    b"", b"a", b"\n", b"\n\n", b"a\n", b"a\nb", b"a\nb\n", b"\n\n\nx\n", b"a\r\nb\rc\n", b"\r", b"\r\n\r\n",
    b"x\n" * 1000, "é\nü\n".encode(),
])
def test_line_starts_match_the_regex_split(data):
    assert Source("f.cu", data).line_starts == _line_starts_reference(data)


def _has_big_literal_reference(data: bytes) -> bool:
    for m in _BIG_NUMBER.finditer(data):
        text = m.group(0)
        if len(text) < 5 and b"e" not in text.lower():
            continue
        try:
            if abs(float(text)) > HALF_MAX:
                return True
        except ValueError:
            continue
    return False


@pytest.mark.parametrize("text, big", [
    ("x = 65504.0;", False),
    ("x = 65505;", True),
    ("x = 065505;", True),
    ("x = 1e5;", True),
    ("x = 1.e5;", True),
    ("x = .5e10;", True),
    ("x = 1E+5f;", True),
    ("x = 6.5e4;", False),
    # the digits after an exponent's sign are part of the literal, not one of their own (1e-70000 is 0)
    ("x = 1e-70000;", False),
    ("x = 1e+70000;", True),
    ("x = a70000;", False),  # part of a name
    ("x = a.70000;", False),  # after a `.`
    ("x = 1.2.70000;", False),
    ("x = 0x70000;", False),
    ("x = ..70000;", False),
    ("x = . 70000;", True),
    ("f(...); y = 70000.5;", True),
    ("x = 12345 + 1.000 + 99999e-9;", False),
    ("", False),
])
def test_big_literal_prefilter_matches_the_full_scan(text, big):
    data = text.encode()
    assert _has_big_literal_reference(data) == big
    assert _has_big_literal(data) == big


def test_big_literal_prefilter_on_mixed_numbers():
    # many short numbers and long ones around the limit, in every separator context
    parts = []
    for i, n in enumerate(("1", "12", "123.", ".5", "1234", "65504", "65504.9", "65505", "9e4", "1e-9", "0.00001")):
        for sep in (" ", "(", ",", ".", "x", "+", "-", "e"):
            parts.append(sep + n)
    for k in range(len(parts)):
        data = " ".join(parts[k:] + parts[:k]).encode()
        assert _has_big_literal(data) == _has_big_literal_reference(data)
        data = " ".join(p for p in parts[k:] if "655" not in p and "9e4" not in p).encode()
        assert _has_big_literal(data) == _has_big_literal_reference(data)


# A loop inside a loop: the outer loop's second round enters the inner loop with the threadgroup write
# made after the barrier in its first round. The barrier flow's loop memo must key on that entry state:
# reusing the first round's walk would find no threadgroup access before the barrier and report it.
_NESTED_LOOPS = b"""#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant int& n [[buffer(1)]],
              threadgroup float* s [[threadgroup(0)]], uint tid [[thread_position_in_threadgroup]]) {
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            out[j] += 1.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        s[tid] = out[i];
    }
}
"""


def test_barrier_flow_loop_memo_keys_on_the_entry_state():
    from shaderlint.config import Settings
    from shaderlint.engine import lint_source

    r = lint_source("k.metal", _NESTED_LOOPS, Settings(select=("SL402",)))
    assert not [d for d in r.diagnostics if d.code == "SL402"]
    # without the write after it, the barrier orders nothing and is reported (the test reads the flow)
    r = lint_source("k.metal", _NESTED_LOOPS.replace(b"s[tid] = out[i];", b"out[i] = 0.0f;"), Settings(select=("SL402",)))
    assert [d.code for d in r.diagnostics] == ["SL402"]
