"""Small reproductions of what fuzzing and the nasty-input corpus found, one per defect: crashes,
endless loops, super-linear time and non-idempotent fixes. Each must stay fast and quiet."""

from __future__ import annotations

import re
import time

import pytest

from shaderlint.config import Settings, settings_from_table
from shaderlint.engine import lint_source
from shaderlint.fixes import apply_fixes
from tests.robustness.conftest import SENTINEL_RULES

CRASH = re.compile(r"failed on this file|could not analyse this file: [A-Z]\w*(Error|Exception)\b")


def lint(path: str, text: str | bytes, settings: Settings | None = None, limit: float = 3.0):
    data = text.encode() if isinstance(text, str) else text
    t0 = time.process_time()  # CPU: a quadratic regression shows there; a busy machine's wall clock does not matter
    r = lint_source(path, data, settings or Settings(extend_select=SENTINEL_RULES, time_budget=limit + 2))
    elapsed = time.process_time() - t0
    sl001 = [d.message for d in r.diagnostics if d.code == "SL001"]
    assert not any(CRASH.search(m) or "time budget" in m for m in sl001), sl001
    assert elapsed < limit, f"{elapsed:.1f} s"
    return r


def test_paren_with_comment_in_a_launch():
    """SL503's _strip and dispatch.follow looped forever on `(g /* c */)`: unparen cannot see through it."""
    lint("k.cu", "__global__ void k(float* a) { a[threadIdx.x] = 0; }\n"
                 "void h(float* a, int n) { int g = (n /* items */); k<<<(g /* c */) / 256, 256>>>(a); }\n")


def test_grid_stride_search_is_not_exponential():
    terms = 30
    chain = ["int v0 = n;"] + [f"int v{i} = {' + '.join([f'v{i - 1}'] * terms)};" for i in range(1, 6)]
    src = ("__global__ void k(float* a, int n) {\n" + "\n".join(chain) +
           f"\nfor (int i = 0; i < n; i += {' + '.join(['v5'] * terms)}) a[i] = 0;\n}}\n")
    lint("k.cu", src)


def test_low_occupancy_advice_with_absurd_resources():
    """SL505 searched its advice one register / one allocation unit at a time from a runaway estimate."""
    lint("k.cu", "__global__ void __launch_bounds__(256) k(float* a) {\n"
                 "  __shared__ float s[0x7fffffff];\n  s[threadIdx.x] = a[0];\n  __syncthreads();\n"
                 "  a[1] = s[threadIdx.x + 1];\n}\n")
    lint("k.comp", "#version 450\nlayout(local_size_x = 64) in;\nshared float partial[0x7fffffff];\n"
                   "void main() { partial[gl_LocalInvocationIndex] = 0.0; barrier(); }\n")


def test_empty_brackets_suppression_fix_is_idempotent():
    src = b"__global__ void k(int* a, int n) { for (int i = 0; i < n; ++i) a[i] = a[i] / n; }  // shaderlint: ignore-file[]\n"
    s = settings_from_table({"extend-select": ["SL002", "SL201"]})
    r = lint_source("k.cu", src, s)
    once, n = apply_fixes("k.cu", src, r.diagnostics, unsafe=True, settings=s)
    assert n == 1 and b"ignore-file[SL201]" in once
    again, m = apply_fixes("k.cu", once, lint_source("k.cu", once, s).diagnostics, unsafe=True, settings=s)
    assert (again, m) == (once, 0)


def test_no_fix_into_an_unreadable_kernel():
    """SL506 inserted __launch_bounds__ into a kernel that did not parse, once per pass, forever."""
    src = (b"__global__ char void warp_only(float* out) { out[threadIdx.x] = 0; }\n"
           b"void h(float* o) { warp_only<<<1, 32>>>(o); }\n")
    r = lint("k.cu", src, Settings(select=("ALL",)))
    assert not [d for d in r.diagnostics if d.code != "SL001"]
    new, n = apply_fixes("k.cu", src, r.diagnostics, unsafe=True)
    assert (new, n) == (src, 0)


@pytest.mark.parametrize("path,src", [
    ("k.cu", "__global__ void __launch_bounds__(-1) k(int* a) { a[0] = 1; }\n"),
    ("k.cu", "__global__ void __launch_bounds__(0, -3) k(int* a) { __syncthreads(); a[0] = 1; }\n"),
    ("k.comp", "#version 450\nlayout(local_size_x = 0, local_size_y = -2) in;\nvoid main() { barrier(); }\n"),
    ("k.comp", "#version 450\nlayout(local_size_x = 1e999) in;\nvoid main() { barrier(); }\n"),
    ("k.metal", "[[max_total_threads_per_threadgroup(-64)]] kernel void k(device int* a [[buffer(0)]]) "
                "{ threadgroup_barrier(mem_flags::mem_threadgroup); a[0] = 1; }\n"),
    ("k.cu", "__global__ void k(int* a) { for (int i = 0; i < 1e999; i += 0.0 / 0.0) a[i] = 1; }\n"),
    ("k.cu", "__global__ void k(int* a) {\n#pragma unroll 99999999999999999999999\n"
             "for (int i = 0; i < 4; i++) a[i] = 1; }\n"),
    ("k.cu", "#define N 1e999\n__global__ void k(int* a) {\n#pragma unroll N\nfor (int i = 0; i < 4; i++) a[i] = 1; }\n"),
    ("k.cu", "__global__ void k(int* a) { int t[0x" + "f" * 5000 + "]; t[a[0]] = 1; a[1] = t[a[2]]; }\n"),
    ("k.cu", "#define N " + "9" * 5000 + "\n__global__ void k(int* a) { a[0] = a[1] / N; }\n"),
    ("k.cu", "#define M0 0xffffffffffffffff\n" + "".join(f"#define M{i} (M{i - 1}*M{i - 1})\n" for i in range(1, 40))
     + "__global__ void k(int* a) { a[0] = a[1] / M39; }\n"),
    ("k.cu", "#define N " + "-" * 5000 + "1\n__global__ void k(int* a) { a[0] = a[1] / N; }\n"),
    ("k.cu", "// shaderlint: threadgroup-size=" + "9" * 5000 + "\n__global__ void k(int* a) { __syncthreads(); }\n"),
    # private arrays of 2^40 elements (the estimator listed every element) and of more than float range
    ("k.cu", "__global__ void k(float* a, int j) { float t[1099511627776]; t[0] = a[0]; a[1] = t[j]; }\n"),
    ("k.comp", "#version 450\nlayout(local_size_x = 64) in;\nlayout(std430, binding = 0) buffer B { float a[]; };\n"
               "void main() { float t[0xffffffffffffffff][0xffffffffffffffff][0xffffffffffffffff]"
               "[0xffffffffffffffff][0xffffffffffffffff]; t[0][0][0][0][0] = a[0]; a[1] = t[0][0][0][0][int(a[2])]; }\n"),
    ("k.cu", b"__global__ void k(float* a) { __align__(\xff\xfe) float t[4]; a[0] = t[0]; }\n"),  # not UTF-8
])
def test_out_of_range_numbers(path, src):
    """Negative, zero, infinite, NaN and 5,000-digit sizes and constants are unknown, not crashes."""
    lint(path, src)


@pytest.mark.parametrize("path,piece", [
    ("k.metal", b"[["), ("k.metal", b"["), ("k.metal", b"kernel "), ("k.metal", b"device "),
    ("k.comp", b"9"), ("k.comp", b"1.5"), ("k.cu", b"[[a("),
])
def test_linear_time_front_ends(path, piece):
    """Regexes and mask bookkeeping that were quadratic on long runs of one token."""
    lint(path, piece * (200_000 // len(piece)), limit=4.0)


def test_eof_parse_error_stays_inside_the_file():
    data = b"__global__ void k(int* a) { a[0] = 1; }\n\x01"
    r = lint_source("k.cu", data)
    assert all(0 <= d.start <= d.end <= len(data) for d in r.diagnostics)


def test_long_expressions_are_linear():
    """Access writes and control conditions were found by walking up from every node (O(depth) per
    step in tree-sitter): quadratic and cubic on 16,000-term sums and 10,000 nested blocks."""
    lint("k.cu", "__global__ void k(float* a) { float x = 0.0f" + " + a[1]" * 16_000 + "; a[0] = x; }\n", limit=4.0)
    lint("k.metal", "kernel void k(device int* a [[buffer(0)]]) {" + "{" * 10_000 + "a[0] = a[1] / a[2];"
         + "}" * 10_000 + "}\n", limit=6.0)
