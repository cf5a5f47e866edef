"""Fuzzing campaign: hostile and mutated inputs through the whole pipeline.

    python bench/fuzz.py --minutes 10 [--seed S] [--jobs N] [--out DIR]
    python bench/fuzz.py --server --minutes 3 [--seed S] [--jobs N]

Every input (random bytes, or a file from ``tests/fixtures/`` and ``examples/``
with grammar-aware mutations: deleted, duplicated and swapped tokens,
unbalanced brackets, truncation, splices from other files, deep nesting,
extreme literals, odd encodings and line endings, random ``// shaderlint: …``
annotations) is linted as Metal, CUDA and GLSL with random settings (built from
a random ``[tool.shaderlint]`` table; an invalid table must raise
``ConfigError`` and nothing else), then its fixes are applied (safe and
unsafe) and every formatter runs on the results.

A failure is any of:
- an exception anywhere (``lint_source`` must never raise);
- a diagnostic, related location or fix edit outside the file, or whose
  line/column disagree with its byte offset;
- an SL001 without a reason;
- JSON or SARIF output that is not strict JSON (``NaN`` counts as failure);
- a fix result with more parse errors than the input, one that turns valid
  UTF-8 into invalid UTF-8, or one that is not idempotent (``--fix`` a second
  time changes the file again);
- a lint that runs past its time budget plus a grace period (``hang``), or a
  worker that never returns (its in-flight input is saved);
- for a fifth of the lints, an edit inside a function body whose per-function
  lint (the language server's ``shaderlint.incremental``) answers something
  else than a whole-file lint of the edited text (``incremental``); and after
  15 % of the inputs, a chain of four such edits to a whole example or
  fixture (which, unlike most mutated inputs, parses outside its bodies), each
  linted on the outline the previous lint left, as the language server does
  while someone types.

A lint that stops at its budget with an SL001 "time budget" is what the
engine promises for input it cannot finish in time, so it is not a failure;
such inputs are counted ("budget hits") and saved too, since small inputs have
no business getting near the budget (so far: punctuation soup on which
tree-sitter's error recovery runs for minutes).

Memory: every lint's peak resident memory above what the process held before
it (Linux: the peak is reset per lint through ``/proc/self/clear_refs``) must
stay under ``MEMORY_PER_BYTE`` x the input's size + ``MEMORY_BASE``
(``memory``); 2 % of the rounds also lint a large input (seed files
concatenated to 100-400 kB) for this check.

``--server`` fuzzes the language server instead: sessions of ``python -m
shaderlint lsp`` fed framing garbage (random bytes, wrong, huge, negative or
missing ``Content-Length``, bodies shorter or longer than their length, bad
JSON, JSON that is not a message, invalid envelopes, mutated frames, messages
over ``--max-message-bytes``, large documents, random requests and
notifications, written in random pieces), each attack followed by a hover on a
small document that must get its normal answer within ``SERVER_TIMEOUT``
seconds (``server``); every session ends with ``shutdown`` (answered) and
``exit`` (exit code 0), and the server's stderr must hold no traceback
(``server-traceback``). Its peak memory is reported.

Failing inputs are written to ``--out`` (default ``.fuzz-failures/``) as
``<hash>.<ext>`` plus ``<hash>.json`` (language, settings, what failed, the
traceback). The module doubles as a library for ``tests/robustness/``.
"""

from __future__ import annotations

import argparse
import hashlib
import dataclasses
import json
import math
import multiprocessing
import os
import random
import re
import sys
import time
import traceback
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from shaderlint.config import ConfigError, Settings, settings_from_table  # noqa: E402
from shaderlint.deadline import Deadline, TimeBudgetExceeded  # noqa: E402
from shaderlint.engine import lint_source  # noqa: E402
from shaderlint.languages import language_for_path  # noqa: E402

LANGUAGES = ("metal", "cuda", "glsl")
EXTENSIONS = {
    "metal": (".metal",),
    "cuda": (".cu", ".cuh"),
    "glsl": (".comp", ".frag", ".vert", ".geom", ".tesc", ".tese", ".mesh", ".task", ".rgen", ".glsl"),
}
FORMATS = ("text", "json", "sarif", "github")
BUDGET = 5.0  # seconds per lint (the default Settings.time_budget)
GRACE = 2.0  # a lint may overrun its budget by this much (the watchdog's latency, a loaded machine)
HANG_AFTER = 120.0  # a worker still busy this long after the campaign's end is stuck (its input is saved)


# ---- seeds -------------------------------------------------------------------------------------------
def load_seed_files(root: str = ROOT) -> list[tuple[str, bytes]]:
    """(path, bytes) of every non-empty fixture and example."""
    out = []
    for top in ("tests/fixtures", "examples"):
        for d, _dirs, files in sorted(os.walk(os.path.join(root, top))):
            for name in sorted(files):
                path = os.path.join(d, name)
                if language_for_path(path) is None:
                    continue
                with open(path, "rb") as fh:
                    data = fh.read()
                if data:
                    out.append((path, data))
    return out


def load_seeds(root: str = ROOT) -> list[bytes]:
    return [data for _path, data in load_seed_files(root)]


# ---- mutations ------------------------------------------------------------------------------------------
_TOKEN = re.compile(
    rb"//[^\n]*|/\*.*?(?:\*/|\Z)|\"(?:\\.|[^\"\\\n])*\"?|'(?:\\.|[^'\\\n])*'?|[A-Za-z_]\w*|\d[\w.]*(?:[eE][+-]?\d+\w*)?"
    rb"|<<<|>>>|<<=|>>=|->|\+\+|--|&&|\|\||::|\[\[|\]\]|[<>=!+\-*/%&|^]=?|\s+|.",
    re.S,
)
_PUNCT = [b"{", b"}", b"(", b")", b"[", b"]", b";", b",", b"<", b">", b"<<<", b">>>", b"[[", b"]]", b"#",
          b"\\", b"\"", b"'", b"/*", b"*/", b"//", b"\n", b"::", b"?", b":", b"=", b"/", b"%", b"/=", b"&"]
_WORDS = [
    b"threadIdx.x", b"blockIdx.x", b"blockDim.x", b"gridDim.x", b"gl_GlobalInvocationID.x", b"gl_LocalInvocationIndex",
    b"gl_WorkGroupSize.x", b"gl_SubgroupSize", b"thread_position_in_grid", b"tid", b"lid", b"n", b"i",
    b"half", b"half4", b"float", b"float16_t", b"f16vec4", b"uint", b"uint2", b"ushort", b"char", b"uchar", b"int8_t",
    b"double", b"bool", b"void", b"auto", b"const", b"constexpr", b"static", b"volatile", b"unsigned", b"long",
    b"__shared__", b"__global__", b"__device__", b"__constant__", b"__launch_bounds__(256)", b"__restrict__",
    b"threadgroup", b"device", b"constant", b"thread", b"kernel", b"vertex", b"fragment", b"shared", b"buffer",
    b"uniform", b"layout(local_size_x = 13, local_size_y = 13) in;", b"layout(std430, binding = 0)",
    b"__syncthreads()", b"__syncwarp()", b"barrier()", b"memoryBarrierShared()", b"subgroupBarrier()",
    b"threadgroup_barrier(mem_flags::mem_threadgroup)", b"simdgroup_barrier(mem_flags::mem_none)",
    b"simd_sum(x)", b"subgroupAdd(x)", b"__shfl_down_sync(0xffffffff, v, 16)", b"atomicAdd(&a[0], 1)",
    b"select(a, b, c)", b"mix(a, b, t)", b"max(a, b)", b"sizeof(int)", b"tex.read(gid)", b"tex.sample(s, uv)",
    b"imageStore(img, p, v)", b"texture(s, uv)", b"[[thread_position_in_threadgroup]]",
    b"[[max_total_threads_per_threadgroup(1000)]]", b"[[early_fragment_tests]]", b"[[buffer(0)]]",
    b"return", b"break", b"continue", b"discard", b"goto", b"switch", b"case 1:", b"default:", b"for", b"while", b"do",
    b"if", b"else", b"template <typename T>", b"template <int N>", b"typename", b"struct", b"union", b"enum",
    b"typedef", b"using", b"namespace", b"operator", b"new", b"delete", b"this", b"nullptr", b"true", b"false",
    b"#define", b"#if 0", b"#endif", b"#include <metal_stdlib>", b"#pragma unroll", b"#version 450",
    b"<<<grid, block>>>", b"<<<n / 256, 256>>>", b"dim3(13, 13)", b"dim3 b(1024, 2);",
]
_NUMBERS = [b"0", b"-0", b"1", b"-1", b"2", b"3", b"7", b"31", b"32", b"33", b"64", b"169", b"256", b"1023", b"1024",
            b"1025", b"65504", b"65505", b"65536", b"2147483647", b"2147483648", b"4294967295", b"4294967296",
            b"0x7fffffff", b"0xffffffffffffffff", b"0xffffffffffffffffffffffffffffffff",
            b"99999999999999999999999999999999", b"1e308", b"1e309", b"1e999", b"-1e999", b"3.4e38f", b"1e-45f",
            b"0.5", b"0.5f", b"0.5h", b"0.5hf", b"65505.0h", b"70000.0", b"1.0e5h", b"1.", b".5", b"0x1p-3",
            b"0b101", b"017", b"08", b"1'000'000", b"1u", b"1ull", b"1.0lf", b"nan", b"INFINITY", b"1/0", b"0/0"]
_SIZES_OK = ["1", "32", "64", "256", "1024", "13x13", "16x16", "8x8x4", "1920x1080", "1x1x1", "32x1x1", "4096x4096"]
_SIZES_BAD = ["0", "-1", "0x0", "99999999999999999999", "abc", "16x", "x16", "1.5", "1e9", "65536x65536x65536",
              "16x16x16x16", "", " ", "16 x 16", "٣٢", "threads", "NaN"]
_CODES = ["SL001", "SL002", "SL101", "SL102", "SL103", "SL104", "SL105", "SL201", "SL202", "SL203", "SL204",
          "SL205", "SL301", "SL302", "SL303", "SL401", "SL402", "SL403", "SL404", "SL501", "SL502", "SL503",
          "SL504", "SL505", "SL506", "SL601", "SL701"]
_CODES_BAD = ["SL", "SL9", "SL999", "sl101", "SL1", "ALL", "X", "", " SL101 ", "SL101,", ",", "SL101 SL201", "*"]


def _annotation(rng: random.Random) -> bytes:
    def codes() -> str:
        pool = _CODES + _CODES_BAD
        return ", ".join(rng.choice(pool) for _ in range(rng.randint(0, 3)))

    kind = rng.randrange(9)
    if kind == 0:
        body = f"ignore[{codes()}]"
    elif kind == 1:
        body = "ignore"
    elif kind == 2:
        body = f"ignore-file[{codes()}]"
    elif kind == 3:
        body = rng.choice(["ignore-file", "ignore[", "ignore]", "ignore[SL101", "ignore-file[]", "ignore[]"])
    elif kind in (4, 5):
        key = rng.choice(["threadgroup-size", "grid-size"])
        body = f"{key}={rng.choice(_SIZES_OK if rng.random() < 0.6 else _SIZES_BAD)}"
    elif kind == 6:
        body = f"dispatch={rng.choice(['threads', 'threadgroups', 'grid', '', '1', 'threads;'])}"
    elif kind == 7:
        body = f"{rng.choice(['unknown-key', 'target', 'select', 'time-budget'])}={rng.choice(_SIZES_OK + _SIZES_BAD)}"
    else:
        body = "  ".join(f"threadgroup-size={rng.choice(_SIZES_OK)}" for _ in range(rng.randint(2, 3)))
    style = rng.randrange(3)
    if style == 0:
        return f"// shaderlint: {body}".encode()
    if style == 1:
        return f"/* shaderlint: {body} */".encode()
    return f"//shaderlint:{body}".encode()


def _tokens(data: bytes) -> list[bytes]:
    return _TOKEN.findall(data)


def _line_starts(data: bytes) -> list[int]:
    return [0] + [m.end() for m in re.finditer(rb"\n", data)]


def mutate(data: bytes, rng: random.Random, seeds: list[bytes]) -> bytes:
    """One to four grammar-aware mutations of ``data``."""
    for _ in range(rng.choice((1, 1, 2, 2, 3, 4))):
        data = _MUTATIONS[rng.randrange(len(_MUTATIONS))](data, rng, seeds)
    return data


def _m_delete(data, rng, seeds):
    toks = _tokens(data)
    if not toks:
        return data
    i = rng.randrange(len(toks))
    del toks[i:i + rng.randint(1, 6)]
    return b"".join(toks)


def _m_duplicate(data, rng, seeds):
    toks = _tokens(data)
    if not toks:
        return data
    i = rng.randrange(len(toks))
    span = toks[i:i + rng.randint(1, 30)]
    j = rng.randrange(len(toks) + 1)
    toks[j:j] = span * rng.choice((1, 1, 2, 5))
    return b"".join(toks)


def _m_swap(data, rng, seeds):
    toks = _tokens(data)
    if len(toks) < 2:
        return data
    for _ in range(rng.randint(1, 4)):
        i, j = rng.randrange(len(toks)), rng.randrange(len(toks))
        toks[i], toks[j] = toks[j], toks[i]
    return b"".join(toks)


def _m_punct(data, rng, seeds):
    toks = _tokens(data)
    for _ in range(rng.randint(1, 4)):
        toks.insert(rng.randrange(len(toks) + 1), rng.choice(_PUNCT))
    return b"".join(toks)


def _m_unbalance(data, rng, seeds):
    toks = _tokens(data)
    idx = [i for i, t in enumerate(toks) if t in (b"{", b"}", b"(", b")", b"[", b"]", b"<", b">")]
    if not idx:
        return data
    for i in sorted(rng.sample(idx, min(len(idx), rng.randint(1, 3))), reverse=True):
        del toks[i]
    return b"".join(toks)


def _m_truncate(data, rng, seeds):
    return data[:rng.randrange(len(data) + 1)]


def _m_splice(data, rng, seeds):
    other = rng.choice(seeds)
    lines, olines = data.splitlines(keepends=True), other.splitlines(keepends=True)
    if not olines:
        return data
    a = rng.randrange(len(olines))
    chunk = olines[a:a + rng.randint(1, 25)]
    at = rng.randrange(len(lines) + 1)
    lines[at:at] = chunk
    return b"".join(lines)


def _m_annotate(data, rng, seeds):
    lines = data.splitlines(keepends=True)
    for _ in range(rng.randint(1, 3)):
        ann = _annotation(rng)
        at = rng.randrange(len(lines) + 1)
        if at < len(lines) and rng.random() < 0.5:  # at the end of a line
            line = lines[at]
            body = line.rstrip(b"\r\n")
            lines[at] = body + b"  " + ann + line[len(body):]
        else:
            lines.insert(at, ann + b"\n")
    return b"".join(lines)


def _m_number(data, rng, seeds):
    toks = _tokens(data)
    idx = [i for i, t in enumerate(toks) if t[:1].isdigit()]
    for i in rng.sample(idx, min(len(idx), rng.randint(1, 3))):
        toks[i] = rng.choice(_NUMBERS)
    if not idx:
        toks.insert(rng.randrange(len(toks) + 1), rng.choice(_NUMBERS))
    return b"".join(toks)


def _m_word(data, rng, seeds):
    toks = _tokens(data)
    idx = [i for i, t in enumerate(toks) if t[:1].isalpha() or t[:1] == b"_"]
    for _ in range(rng.randint(1, 3)):
        w = rng.choice(_WORDS)
        if idx and rng.random() < 0.7:
            toks[rng.choice(idx)] = w
        else:
            toks.insert(rng.randrange(len(toks) + 1), b" " + w + b" ")
    return b"".join(toks)


def _m_nest(data, rng, seeds):
    toks = _tokens(data)
    depth = rng.choice((5, 30, 100, 300, 600))
    kind = rng.randrange(4)
    at = rng.randrange(len(toks) + 1)
    if kind == 0:
        piece = b"(" * depth + b"x" + b")" * depth
    elif kind == 1:
        piece = b"{" * depth + b"}" * depth
    elif kind == 2:
        piece = b"if (x) " * depth + b"y = 1;"
    else:
        piece = b"a" + b" + a" * depth + b" / n"
    toks.insert(at, piece)
    return b"".join(toks)


def _m_encoding(data, rng, seeds):
    kind = rng.randrange(9)
    if kind == 0:
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    if kind == 1:
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r")
    if kind == 2:
        return b"\xef\xbb\xbf" + data
    if kind == 3:
        at = rng.randrange(len(data) + 1)
        return data[:at] + b"\x00" * rng.randint(1, 3) + data[at:]
    if kind == 4:
        at = rng.randrange(len(data) + 1)
        return data[:at] + rng.choice([b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"]) + data[at:]
    if kind == 5:
        at = rng.randrange(len(data) + 1)
        return data[:at] + rng.choice(["é", "日本語", "𝔵", "😀", "\u200b", "\u2028", "ﬁ"]).encode() + data[at:]
    if kind == 6:
        text = data.decode("utf-8", "replace")
        return (b"\xff\xfe" + text.encode("utf-16-le")) if rng.random() < 0.5 else (b"\xfe\xff" + text.encode("utf-16-be"))
    if kind == 7:
        if not data:
            return data
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    return data.replace(b"\n", b"\\\n", rng.randint(1, 5))  # line continuations


def _m_macro(data, rng, seeds):
    piece = rng.choice([
        b"#define OPEN {\n#define CLOSE }\nvoid f() OPEN int x = 1; \n",
        b"#define BODY(n) { int a[n]; a[0] = n; }\n#define K(name) __global__ void name() BODY(4)\nK(k1)\nK(k2\n",
        b"#define DEFINE_KERNEL(T, s) kernel void k_##s(device T* a [[buffer(0)]]) { a[0] = 0; }\n"
        b"DEFINE_KERNEL(float, f32)\nDEFINE_KERNEL(half, f16\n",
        b"#define X (\n#define Y )\nint z = X 1 Y;\n",
        b"#if 1\nvoid f() {\n#else\nvoid g() {\n#endif\n}\n",
        b"#define N 0\nint q = 4 / N;\n",
        b"#define REC REC\n#define A B\n#define B A\nint v = A / REC;\n",
    ])
    lines = data.splitlines(keepends=True)
    lines.insert(rng.randrange(len(lines) + 1), piece)
    return b"".join(lines)


def _m_unterminated(data, rng, seeds):
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice([b"/*", b"\"", b"'", b"R\"(", b"#if 1\n", b"//\\\n", b"<<<"]) + data[at:]


_MUTATIONS = [_m_delete, _m_duplicate, _m_swap, _m_punct, _m_unbalance, _m_truncate, _m_splice, _m_annotate,
              _m_number, _m_word, _m_nest, _m_encoding, _m_macro, _m_unterminated]


def random_bytes(rng: random.Random) -> bytes:
    n = rng.choice((0, 1, 2, 16, 100, 1000, 4000))
    kind = rng.randrange(3)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(n))
    if kind == 1:
        return bytes(rng.randrange(32, 127) for _ in range(n))
    alphabet = b"{}()[];,<>=+-*/%&|^!~?:.#\"'\\ \n\tabcxyz0123456789_"
    return bytes(rng.choice(alphabet) for _ in range(n))


def generate(rng: random.Random, seeds: list[bytes]) -> bytes:
    """8% random bytes, 4% a seed as it is, 68% a window of 3-60 lines of a seed (one kernel or so:
    small inputs are cheap and find most bugs) and 20% a whole seed, both mutated."""
    r = rng.random()
    if r < 0.08 or not seeds:
        return random_bytes(rng)
    data = rng.choice(seeds)
    if r < 0.12:
        return data
    if r < 0.80:
        lines = data.splitlines(keepends=True)
        a = rng.randrange(len(lines))
        data = b"".join(lines[a:a + rng.randint(3, 60)])
    return mutate(data, rng, seeds)


# ---- random configuration -----------------------------------------------------------------------------
def random_table(rng: random.Random) -> dict:
    """A random ``[tool.shaderlint]`` table, valid more often than not."""
    from shaderlint.estimate.targets import target_names

    def anything():
        return rng.choice([1, 0, -1, 1.5, float("nan"), float("inf"), True, "x", "", [], ["SL101"], {}, {"a": 1},
                           [1, 2], ["**"], "SL101"])

    def codes():
        pool = _CODES + (_CODES_BAD if rng.random() < 0.2 else [])
        return [rng.choice(pool) for _ in range(rng.randint(0, 4))]

    t: dict = {}
    if rng.random() < 0.3:
        t["select"] = codes() if rng.random() < 0.9 else anything()
    if rng.random() < 0.3:
        t["ignore"] = codes() if rng.random() < 0.9 else anything()
    if rng.random() < 0.2:
        t["extend-select"] = codes()
    if rng.random() < 0.2:
        t["per-file-ignores"] = {rng.choice(["*.cu", "**", "fuzz*", "[", "*.{metal}", "x/**"]): codes()}
    if rng.random() < 0.4:
        t["target"] = rng.choice(target_names() + ["sm_00", "", "APPLE-M1"]) if rng.random() < 0.95 else anything()
    if rng.random() < 0.2:
        t["occupancy-threshold"] = rng.choice([0, 0.25, 0.5, 1, 1.01, -0.1, float("nan")])
    if rng.random() < 0.05:
        t["time-budget"] = rng.choice([0.5, 5, 0, -1, float("inf"), "5"])
    if rng.random() < 0.1:
        t["exclude"] = rng.choice([["build"], ["**/*.cu"], [""], "build", [1]])
    for key in ("threadgroup-size", "grid-size"):
        if rng.random() < 0.15:
            t[key] = rng.choice(_SIZES_OK + _SIZES_BAD + [32, 0, -5, 1.5, True])
    if rng.random() < 0.1:
        t["dispatch"] = rng.choice(["threads", "threadgroups", "grid", 1])
    if rng.random() < 0.1:
        t["facts"] = {rng.choice(["*.metal", "**", "fuzz.cu"]): {
            rng.choice(["threadgroup-size", "grid-size", "dispatch", "bogus"]): rng.choice(_SIZES_OK + _SIZES_BAD)}}
    if rng.random() < 0.03:
        t[rng.choice(["selct", "unknown", "Target"])] = anything()
    return t


def settings_from_random(rng: random.Random) -> tuple[dict, Settings]:
    """A random table and the settings it gives (the defaults when it is invalid). Only
    :class:`ConfigError` may come out of an invalid table."""
    table = random_table(rng)
    try:
        s = settings_from_table(table, "fuzz.toml")
    except ConfigError:
        s = Settings()
    if s.time_budget > BUDGET:  # the campaign's timing check assumes the default budget
        s = dataclasses.replace(s, time_budget=BUDGET)
    return table, s


# ---- checking one input -------------------------------------------------------------------------------
@dataclass
class Failure:
    kind: str
    detail: str
    language: str | None = None
    path: str | None = None
    table: dict = field(default_factory=dict)


_RULE_CRASH = re.compile(r"^rule SL\d+ failed on this file")  # the engine caught a rule's exception
_MODEL_CRASH = re.compile(r"^could not analyse this file: [A-Z]\w*(Error|Exception)\b")  # ... or the model's


def _strict_json(text: str):
    def bad(name):
        raise ValueError(f"non-JSON constant {name}")
    return json.loads(text, parse_constant=bad)


def check_positions(source, diagnostics) -> list[str]:
    """Problems with the positions of ``diagnostics`` against ``source`` (empty: all fine)."""
    problems = []
    n = len(source.data)
    nlines = len(source.line_starts)

    def span(what, start, end):
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= n):
            problems.append(f"{what}: byte range {start}..{end} outside 0..{n}")
            return False
        return True

    for d in diagnostics:
        if span(f"{d.code} {d.message[:60]!r}", d.start, d.end):
            if (d.line, d.column) != source.position(d.start) or (d.end_line, d.end_column) != source.position(d.end):
                problems.append(f"{d.code}: line/column {d.line}:{d.column}-{d.end_line}:{d.end_column} disagree "
                                f"with bytes {d.start}..{d.end}")
        if not 1 <= d.line <= nlines or d.column < 1 or not 1 <= d.end_line <= nlines:
            problems.append(f"{d.code}: line {d.line} column {d.column} outside the file ({nlines} lines)")
        if d.code == "SL001" and not d.message.strip():
            problems.append("SL001 without a reason")
        for r in d.related:
            if span(f"{d.code} related", r.start, r.end) and (r.line, r.column) != source.position(r.start):
                problems.append(f"{d.code}: related line/column disagree with bytes")
        if d.fix is not None:
            for e in d.fix.edits:
                span(f"{d.code} fix edit", e.start, e.end)
                if not isinstance(e.text, str):
                    problems.append(f"{d.code}: fix edit text is {type(e.text).__name__}")
    return problems


def check_formatters(results, rng: random.Random | None = None) -> list[str]:
    """Run every formatter on ``results`` (random ``quiet``/``color`` options); JSON and SARIF must
    be strict JSON."""
    from shaderlint.formatters import get_formatter

    rng = rng or random.Random(0)
    problems = []
    for name in FORMATS:
        options = {"quiet": rng.random() < 0.5, "files": len(results), "color": rng.random() < 0.5, "root": ROOT}
        text = get_formatter(name)(results, options)
        if not isinstance(text, str):
            problems.append(f"{name} formatter returned {type(text).__name__}")
            continue
        if name in ("json", "sarif"):
            try:
                _strict_json(text)
            except ValueError as e:
                problems.append(f"{name} output is not JSON: {e}")
    return problems


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _errors(parsed) -> int:
    """``shaderlint.fixes.parse_error_count`` on a parse we already have."""
    from shaderlint.fixes import tree_error_count

    return tree_error_count(parsed.tree.root_node)


def check_fixes(path: str, data: bytes, result, settings: Settings, language: str) -> list[str]:
    """``apply_fixes`` (safe and unsafe) on ``result``: no new parse errors, UTF-8 stays UTF-8, the fixed
    text lints cleanly position-wise, and fixing it again changes nothing."""
    from shaderlint.fixes import apply_fixes, fix_source, parse_error_count

    problems = []
    if not any(d.fix is not None for d in result.diagnostics):
        return problems
    outcome = fix_source(path, data, settings, True, language, result.diagnostics)  # what apply_fixes does
    new = outcome.data
    if not isinstance(new, bytes):
        return [f"apply_fixes returned {type(new).__name__}"]
    if new == data:
        return problems
    before = _errors(result.parsed) if result.parsed is not None else parse_error_count(path, data, language)
    after = (_errors(outcome.result.parsed) if outcome.result is not None and outcome.result.parsed is not None
             else parse_error_count(path, new, language))
    if after > before:
        problems.append(f"fixes introduced parse errors ({before} -> {after})")
    if _valid_utf8(data) and not _valid_utf8(new):
        problems.append("fixes turned valid UTF-8 into invalid UTF-8")
    again = outcome.result if outcome.result is not None else lint_source(path, new, settings, language)
    problems += [f"after fixes: {p}" for p in check_positions(again.source, again.diagnostics)]
    new2, applied2 = apply_fixes(path, new, again.diagnostics, unsafe=True, settings=settings, language=language)
    if new2 != new:
        problems.append(f"fixes are not idempotent: a second pass applied {applied2} more")
    return problems


#: Share of lints followed by an edit inside a function body, linted per function and compared with a
#: whole-file lint (the language server's incremental path, shaderlint.incremental).
INCREMENTAL_SHARE = 0.2
_EDIT_SNIPPETS = (b" ", b"\n", b"", b"x", b"(", b"}", b"{", b"/*", b";", b"int q = 1;", b"[[", b"\"", b"0.5",
                  b"__syncthreads();", b"// shaderlint: ignore\n", b"#define Z 1\n")


def _diag_key(d):
    return (d.code, d.start, d.end, d.line, d.column, d.end_line, d.end_column, d.message, d.kernel,
            d.fingerprint, d.related, d.fix, d.impact)


def _compare(part, full, what: str) -> list[str]:
    got, want = [_diag_key(d) for d in part.result.diagnostics], [_diag_key(d) for d in full.diagnostics]
    if got != want:
        extra = [g for g in got if g not in want][:2]
        missing = [w for w in want if w not in got][:2]
        return [f"per-function lint after {what} differs from a whole-file lint: only per-function {extra}, "
                f"only whole-file {missing}"]
    return []


def _body_edit(outline, data: bytes, rng: random.Random, seeds: list[bytes] | None = None):
    """(start, end, text) of a random edit inside a random function body of ``outline``, or None."""
    span = rng.choice(outline.spans)
    a, b = span.body_start + 1, span.body_end - 1
    if b < a:
        return None
    start = rng.randint(a, b)
    end = min(b, start + rng.choice((0, 0, 1, 3, 12)))
    r = rng.random()
    if r < 0.6 or not seeds:
        text = rng.choice(_EDIT_SNIPPETS)
    elif r < 0.8:
        text = rng.choice(_WORDS)
    else:  # a line of another file: statements, declarations, closing braces, directives
        lines = rng.choice(seeds).splitlines(keepends=True)
        text = rng.choice(lines) if lines else b""
    return start, end, text


def check_incremental(path: str, data: bytes, result, settings: Settings, language: str,
                      rng: random.Random) -> list[str]:
    """An edit inside a function body: the per-function lint, when it answers, equals a whole-file lint."""
    from shaderlint.incremental import build_outline, partial_lint
    from shaderlint.languages import FRONT_ENDS
    from shaderlint.model.source import Source

    outline = build_outline(result, settings)
    if outline is None or not outline.spans:
        return []
    edit = _body_edit(outline, data, rng)
    if edit is None:
        return []
    start, end, text = edit
    new = data[:start] + text + data[end:]
    outline.edit(start, end, len(text))
    part = partial_lint(path, new, settings, language, outline, max_share=1.0,
                        whole_parse=lambda patches: FRONT_ENDS[language].parse(Source(path, new)).tree)
    if part is None:
        return []
    full = lint_source(path, new, settings, language)
    if full.timed_out:
        return []
    return _compare(part, full, f"inserting {text!r} at {start} (replacing {end - start} bytes)")


#: Share of inputs followed by a chain of edits to a whole, valid seed file (mutated inputs seldom parse
#: outside their bodies, so seldom reach the per-function path: a real file always does).
CHAIN_SHARE = 0.15
CHAIN_EDITS = 4


def check_edit_chain(path: str, data: bytes, settings: Settings, rng: random.Random,
                     seeds: list[bytes], edits: int = CHAIN_EDITS) -> list[str]:
    """What the language server does while someone types into ``data``: ``edits`` successive edits
    inside function bodies, each linted per function on the outline the previous lint left (the
    per-function one when it answered, else a whole-file one's, or the outline carried over a broken
    whole-file lint) and compared with a whole-file lint of the same text."""
    from shaderlint.incremental import build_outline, carry_outline, partial_lint
    from shaderlint.languages import FRONT_ENDS
    from shaderlint.model.source import Source

    language = language_for_path(path)
    result = lint_source(path, data, settings, language)
    outline = build_outline(result, settings)
    done: list[str] = []
    for _ in range(edits):
        if outline is None or not outline.spans or result.timed_out:
            return []
        edit = _body_edit(outline, data, rng, seeds)
        if edit is None:
            return []
        start, end, text = edit
        done.append(f"{text!r} at {start} replacing {end - start} bytes")
        new = data[:start] + text + data[end:]
        outline.edit(start, end, len(text))
        part = partial_lint(path, new, settings, language, outline, max_share=1.0,
                            whole_parse=lambda patches, new=new: FRONT_ENDS[language].parse(Source(path, new)).tree)
        full = lint_source(path, new, settings, language)
        if full.timed_out:
            return []
        if part is not None:
            problems = _compare(part, full, f"the edits {'; '.join(done)} to {os.path.relpath(path, ROOT)}")
            if problems:
                return problems
            result, outline = part.result, part.outline
        else:
            result = full
            outline = build_outline(full, settings) or carry_outline(outline, full, settings)
        data = new
    return []


def check_chain(path: str, data: bytes, rng: random.Random, seeds: list[bytes],
                budget: float = BUDGET) -> list["Failure"]:
    """:func:`check_edit_chain` with random settings, as failures."""
    language = language_for_path(path)
    table: dict = {}
    try:
        table, settings = settings_from_random(rng)
    except Exception:
        settings = Settings()
    try:
        with Deadline(budget * (2 * CHAIN_EDITS + 2)):
            return [Failure("incremental", p, language, os.path.basename(path), table)
                    for p in check_edit_chain(path, data, settings, rng, seeds)]
    except TimeBudgetExceeded:
        return [Failure("hang", "an edit chain took longer than its budget", language, os.path.basename(path), table)]
    except Exception:
        return [Failure("incremental-exception", traceback.format_exc(), language, os.path.basename(path), table)]


# ---- memory ceiling -------------------------------------------------------------------------------------
#: A lint may add at most MEMORY_PER_BYTE x the input's size + MEMORY_BASE bytes to the process's peak
#: resident memory: the linter's own documented per-file bound (shaderlint.engine.memory_bound; its base
#: covers grammars, rule tables and modules a first lint loads, allocator slack, and the walks of a file
#: at the size limit), so the campaign checks the bound the product promises, not a second one.
from shaderlint.engine import MEMORY_BASE, MEMORY_PER_BYTE  # noqa: E402
#: Share of the rounds that also lint a large input (seed files concatenated) for the memory ceiling.
LARGE_SHARE = 0.02
LARGE_SIZES = (100_000, 400_000)


def memory_bound(size: int) -> int:
    return MEMORY_PER_BYTE * size + MEMORY_BASE


def _status_kb(field_name: str, pid: str = "self") -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            m = re.search(rf"^{field_name}:\s+(\d+) kB", fh.read(), re.M)
    except OSError:
        return None
    return int(m.group(1)) if m else None


class PeakMemory:
    """``with PeakMemory() as m: ...``; then ``m.growth``: the block's peak resident memory above the
    process's resident memory at its start, in bytes (None where the peak cannot be reset: not Linux)."""

    def __enter__(self) -> "PeakMemory":
        self.growth: int | None = None
        self.start = None
        try:
            with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
                fh.write("5")  # resets the peak (VmHWM) to the current resident size
            self.start = _status_kb("VmRSS")
        except OSError:
            pass
        return self

    def __exit__(self, *exc) -> None:
        peak = _status_kb("VmHWM") if self.start is not None else None
        if peak is not None and self.start is not None:
            self.growth = max(0, peak - self.start) * 1024


def check_memory(path: str, data: bytes, settings: Settings, language: str | None = None) -> tuple[list[str], int | None]:
    """Lint ``data`` once under the memory ceiling: (problems, peak growth in bytes or None)."""
    with PeakMemory() as m:
        lint_source(path, data, settings, language=language)
    if m.growth is not None and m.growth > memory_bound(len(data)):
        return [f"peak memory grew by {m.growth / 2**20:.0f} MiB linting {len(data):,} bytes (bound "
                f"{MEMORY_PER_BYTE} x size + {MEMORY_BASE // 2**20} MiB = {memory_bound(len(data)) / 2**20:.0f} MiB)"], m.growth
    return [], m.growth


def large_input(rng: random.Random, seed_files: list[tuple[str, bytes]]) -> tuple[str, bytes]:
    """A large file of one language: its seed files, again and again, up to 100-400 kB."""
    path, _ = rng.choice(seed_files)
    language = language_for_path(path)
    same = [d for p, d in seed_files if language_for_path(p) == language]
    size = rng.randint(*LARGE_SIZES)
    parts, total = [], 0
    while total < size:
        d = rng.choice(same)
        parts.append(d)
        total += len(d) + 1
    return "large" + os.path.splitext(path)[1], b"\n".join(parts)


def check_input(data: bytes, rng: random.Random, budget: float = BUDGET,
                languages: tuple[str, ...] = LANGUAGES, memory: bool = False) -> list[Failure]:
    """Lint ``data`` in every language (random extension and settings), check positions, fixes and
    formatters; ``memory``: each lint under the memory ceiling too. Returns the failures (empty: the
    input passed)."""
    failures: list[Failure] = []
    results = []
    for language in languages:
        path = "fuzz" + rng.choice(EXTENSIONS[language])
        table: dict = {}
        try:
            table, settings = settings_from_random(rng)
        except Exception:
            failures.append(Failure("config", traceback.format_exc(), language, path, table))
            settings = Settings()
        t0 = time.perf_counter()
        try:
            with PeakMemory() if memory else _NO_MEMORY as peak:
                r = lint_source(path, data, settings)
        except BaseException as e:  # noqa: BLE001 - lint_source must never raise
            if isinstance(e, KeyboardInterrupt):
                raise
            failures.append(Failure("exception", traceback.format_exc(), language, path, table))
            continue
        elapsed = time.perf_counter() - t0
        if memory and peak.growth is not None and peak.growth > memory_bound(len(data)):
            failures.append(Failure("memory", f"peak memory grew by {peak.growth / 2**20:.0f} MiB linting "
                                              f"{len(data):,} bytes (bound {memory_bound(len(data)) / 2**20:.0f} MiB)",
                                    language, path, table))
        if elapsed > settings.budget_for(data) + GRACE:
            failures.append(Failure("hang", f"lint took {elapsed:.1f} s (budget {settings.budget_for(data):.3g} s)",
                                    language, path, table))
        if any(d.code == "SL001" and "time budget" in d.message for d in r.diagnostics):
            failures.append(Failure("slow", f"time budget exceeded after {elapsed:.1f} s", language, path, table))
        for d in r.diagnostics:
            if d.code == "SL001" and (_RULE_CRASH.search(d.message) or _MODEL_CRASH.search(d.message)):
                failures.append(Failure("crash", d.message, language, path, table))
        if r.language != language:
            failures.append(Failure("language", f"linted as {r.language}", language, path, table))
        for p in check_positions(r.source, r.diagnostics):
            failures.append(Failure("position", p, language, path, table))
        try:
            with Deadline(budget * 4):
                for p in check_fixes(path, data, r, settings, language):
                    failures.append(Failure("fix", p, language, path, table))
        except TimeBudgetExceeded:
            failures.append(Failure("hang", "applying fixes took longer than 4 budgets", language, path, table))
        except Exception:
            failures.append(Failure("fix-exception", traceback.format_exc(), language, path, table))
        results.append(r)
        if rng.random() < INCREMENTAL_SHARE:
            try:
                with Deadline(budget * 3):
                    for p in check_incremental(path, data, r, settings, language, rng):
                        failures.append(Failure("incremental", p, language, path, table))
            except TimeBudgetExceeded:
                failures.append(Failure("hang", "the incremental check took longer than 3 budgets", language, path, table))
            except Exception:
                failures.append(Failure("incremental-exception", traceback.format_exc(), language, path, table))
    try:
        with Deadline(budget):
            for p in check_formatters(results, rng):
                failures.append(Failure("format", p))
    except TimeBudgetExceeded:
        failures.append(Failure("hang", "formatting took longer than the budget"))
    except Exception:
        failures.append(Failure("format-exception", traceback.format_exc()))
    return failures


class _NoMemory:
    growth = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


_NO_MEMORY = _NoMemory()

#: Kinds recorded and saved but not counted as failures (see the module docstring).
NOT_FAILURES = frozenset({"slow"})


def real_failures(failures: list[Failure]) -> list[Failure]:
    return [f for f in failures if f.kind not in NOT_FAILURES]


def save_failure(out_dir: str, data: bytes, failures: list[Failure]) -> str:
    os.makedirs(out_dir, exist_ok=True)
    h = hashlib.sha1(data).hexdigest()[:16]
    lang = failures[0].language or "cuda"
    ext = (failures[0].path and os.path.splitext(failures[0].path)[1]) or EXTENSIONS[lang][0]
    with open(os.path.join(out_dir, h + ext), "wb") as fh:
        fh.write(data)
    with open(os.path.join(out_dir, h + ".json"), "w", encoding="utf-8") as fh:
        json.dump([f.__dict__ for f in failures], fh, indent=2, default=repr)
    return h


def replay(path: str, out=sys.stdout) -> None:
    """Re-run a saved input outside the engine's safety nets, printing tracebacks (for debugging)."""
    from shaderlint.engine import resolve_target
    from shaderlint.languages import FRONT_ENDS
    from shaderlint.model.build import build_model
    from shaderlint.model.source import Source
    from shaderlint.rules.base import RuleContext
    from shaderlint.rules.registry import RULES

    with open(path, "rb") as fh:
        data = fh.read()
    runs = [(language, "replay" + EXTENSIONS[language][0], {}) for language in LANGUAGES]
    sidecar = os.path.splitext(path)[0] + ".json"
    if os.path.exists(sidecar):  # the failing runs, with their settings
        with open(sidecar, encoding="utf-8") as fh:
            runs = [(f["language"], f["path"], f["table"]) for f in json.load(fh) if f.get("language")] or runs
    for language, name, table in runs:
        try:
            settings = settings_from_table(table, "fuzz.toml")
        except ConfigError:
            settings = Settings()
        print(f"== {language} {name} {table}", file=out)
        try:
            model = build_model(FRONT_ENDS[language].parse(Source(name, data)))
        except Exception:
            traceback.print_exc(file=out)
            continue
        ctx = RuleContext(settings=settings, target=resolve_target(settings, language), facts=settings.facts_for(name))
        for rule in RULES:
            if language in rule.languages:
                try:
                    list(rule().check(model, ctx))
                except Exception:
                    print(f"-- {rule.code}", file=out)
                    traceback.print_exc(file=out)
        r = lint_source(name, data, settings)
        for d in r.diagnostics:
            if d.code == "SL001":
                print(f"   SL001 {d.line}:{d.column} {d.message[:200]}", file=out)
        for problem in check_positions(r.source, r.diagnostics) + check_fixes(name, data, r, settings, language):
            print(f"   {problem}", file=out)


# ---- the language server -----------------------------------------------------------------------------
#: Seconds within which the hover after an attack must be answered.
SERVER_TIMEOUT = 30.0
#: Attacks per server session (then shutdown, exit, a new server).
SERVER_ROUNDS = 40
#: The fuzzed servers run with this --max-message-bytes, so that messages over the limit are cheap to send.
SERVER_MAX_MESSAGE = 4 * 1024 * 1024
# (the division repeats with a changing operand, a load in a block-stride loop: SL201 reports it)
_CHECK_KERNEL = ("__global__ void scale(int* a, int n) {\n    for (int i = threadIdx.x; i < n; i += blockDim.x)\n"
                 "        a[i] = a[i] / n;\n}\n")
_CHECK_URI = "file:///fuzz/check.cu"
_CHECK_POS = (2, _CHECK_KERNEL.splitlines()[2].index("/ n"))
_METHODS = ("textDocument/hover", "textDocument/codeAction", "textDocument/codeLens", "textDocument/diagnostic",
            "codeAction/resolve", "textDocument/documentSymbol", "no/such/method", "$/noSuchRequest", "initialize")
_NOTIFICATIONS = ("textDocument/didOpen", "textDocument/didChange", "textDocument/didClose", "textDocument/didSave",
                  "$/cancelRequest", "workspace/didChangeConfiguration", "$/setTrace", "no/such/notification",
                  "initialized")


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _json(obj) -> bytes:
    return json.dumps(obj).encode()


def _garbage_uri(rng: random.Random) -> str:
    return f"file:///fuzz/g{rng.randrange(6)}" + rng.choice([".cu", ".metal", ".comp", ".txt", ""])


def _random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 1, 2**31, -2**63, 2**70, 1.5, float("1e308")])
    if kind == 3:
        return rng.choice(["", "x", "file:///fuzz/g1.cu", "\udcff", "😀" * 3, "a" * 1000])
    if kind in (4, 5):
        return {"line": rng.choice([0, 1, -1, 2**31]), "character": rng.choice([0, 5, -3, 2**40])}
    if kind == 6:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {k: _random_value(rng, depth + 1) for k in rng.sample(
        ["textDocument", "position", "range", "uri", "text", "version", "contentChanges", "context", "id", "start",
         "end", "settings", "languageId"], rng.randrange(1, 4))}


def _random_params(rng: random.Random, method: str, seeds: list[bytes]):
    uri = _garbage_uri(rng)
    pos = {"line": rng.randrange(-2, 40), "character": rng.randrange(-2, 80)}
    if rng.random() < 0.3:
        return _random_value(rng)
    if method == "textDocument/didOpen":
        text = rng.choice(seeds).decode("utf-8", "replace") if rng.random() < 0.7 else \
            random_bytes(rng).decode("utf-8", "replace")
        return {"textDocument": {"uri": uri, "languageId": rng.choice(["cuda-cpp", "metal", "glsl", "comp", "x"]),
                                 "version": rng.randrange(100), "text": text}}
    if method == "textDocument/didChange":
        change = {"text": rng.choice(["", "x", "}\n", "{", "/*", "__syncthreads();\n"])}
        if rng.random() < 0.8:
            change["range"] = {"start": pos, "end": {"line": pos["line"] + rng.randrange(3), "character": 0}}
        return {"textDocument": {"uri": uri, "version": rng.randrange(1000)}, "contentChanges": [change]}
    if method == "$/cancelRequest":
        return {"id": rng.choice([1, "g1", 10**9])}
    if method == "workspace/didChangeConfiguration":
        # (settings that keep the check document's SL201 and its analysis: the hover checks them)
        return {"settings": {"shaderlint": {"select": rng.choice([["SL2"], "SL201", [], None, 5]),
                                            "maxDocumentBytes": rng.choice([0, 2**20, 2**21, -1, "x"]),
                                            "debounce": rng.choice([0, 150, -5, 1e9])}}}
    return {"textDocument": {"uri": uri}, "position": pos,
            "range": {"start": pos, "end": pos}, "context": {"diagnostics": []}}


def server_attack(rng: random.Random, seeds: list[bytes], n: int) -> tuple[str, bytes]:
    """(what, bytes): one thing a broken or hostile client may write."""
    k = rng.randrange(22)
    ok = _json({"jsonrpc": "2.0", "id": f"g{n}", "method": "textDocument/hover", "params": {
        "textDocument": {"uri": _garbage_uri(rng)}, "position": {"line": 0, "character": 0}}})
    if k == 0:
        return "random bytes", random_bytes(rng)[:rng.randrange(1, 300)]
    if k == 1:
        value = rng.choice([b"-1", b"-99999", b"abc", b"", b"1.5", b"0x10", b"+5", b"1e3", b"99999999999999999999999",
                            b"\xff", b" 12 ", b"12 34"])
        return "bad Content-Length", b"Content-Length: " + value + b"\r\n\r\n" + ok
    if k == 2:
        return "huge Content-Length", b"Content-Length: %d\r\n\r\n" % rng.choice(
            [SERVER_MAX_MESSAGE + 1, 2**31, 2**63, 99999999999]) + ok[:rng.randrange(len(ok))]
    if k == 3:
        return "no Content-Length", rng.choice([b"Content-Type: x\r\n\r\n", b"\r\n\r\n", b"X: 1\r\n\r\n"]) + ok
    if k == 4:
        return "body shorter than its length", b"Content-Length: %d\r\n\r\n" % (len(ok) + rng.randrange(1, 5000)) + ok
    if k == 5:
        cut = rng.randrange(len(ok))
        return "body longer than its length", b"Content-Length: %d\r\n\r\n" % cut + ok
    if k == 6:
        return "bad JSON", _frame(ok[:rng.randrange(len(ok))] + rng.choice([b"", b"}", b",", b"\x00", b"\xff"]))
    if k == 7:
        return "JSON that is not a message", _frame(rng.choice([b"[]", b"5", b"null", b"\"x\"", b"[1,2]", b"{}", b"true"]))
    if k == 8:
        env = {"jsonrpc": rng.choice(["2.0", "1.0", None, 2]), "id": rng.choice([f"g{n}", None, [1], {"a": 1}, True, 1.5]),
               "method": rng.choice(["textDocument/hover", 5, None, ""])}
        return "invalid envelope", _frame(_json({k2: v for k2, v in env.items() if rng.random() < 0.8}))
    if k == 9:
        return "nested JSON", _frame(b"[" * rng.choice([100, 5000, 200_000]) + b"]" * rng.choice([0, 100, 5000]))
    if k == 10:
        data = bytearray(_frame(ok))
        for _ in range(rng.randrange(1, 4)):
            i = rng.randrange(len(data))
            op = rng.randrange(3)
            if op == 0:
                data[i] = rng.randrange(256)
            elif op == 1:
                del data[i]
            else:
                data.insert(i, rng.choice(b"\r\n{}:0123456789 C"))
        return "mutated frame", bytes(data)
    if k == 11:
        return "header line too long", b"X-Pad: " + b"a" * rng.choice([5000, 100_000]) + b"\r\n\r\n" + ok
    if k == 12:
        return "too many header lines", b"X: 1\r\n" * rng.choice([33, 1000]) + b"\r\n" + ok
    if k == 13:
        return "message over --max-message-bytes", _frame(_json({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": _garbage_uri(rng), "languageId": "cuda-cpp", "version": 1,
                             "text": "// x\n" * (SERVER_MAX_MESSAGE // 5 + 10)}}}))
    if k == 14:
        text = "int x;\n" * rng.choice([300_000, 500_000])  # 2.1-3.5 MB: over maxDocumentBytes
        return "document over maxDocumentBytes", _frame(_json({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": _garbage_uri(rng), "languageId": "cuda-cpp", "version": 1, "text": text}}}))
    if k == 15:
        seed = rng.choice(seeds).decode("utf-8", "replace")
        text = (seed + "\n") * max(1, rng.randrange(260_000, 700_000) // max(1, len(seed)))
        return "large document", _frame(_json({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": _garbage_uri(rng), "languageId": rng.choice(["cuda-cpp", "metal", "glsl"]),
                             "version": 1, "text": text}}}))
    if k in (16, 17, 18):
        method = rng.choice(_METHODS)
        return f"request {method}", _frame(_json({"jsonrpc": "2.0", "id": f"g{n}", "method": method,
                                                  "params": _random_params(rng, method, seeds)}))
    if k == 19:
        return "blank lines", rng.choice([b"\r\n", b"\n", b"\r\n" * 50])
    method = rng.choice(_NOTIFICATIONS)
    return f"notification {method}", _frame(_json({"jsonrpc": "2.0", "method": method,
                                                   "params": _random_params(rng, method, seeds)}))


def _write_in_pieces(server, data: bytes, rng: random.Random) -> None:
    if len(data) < 2 or rng.random() < 0.7:
        server.send(data)
        return
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randrange(1, 5))))
    for a, b in zip([0] + cuts, cuts + [len(data)]):
        server.send(data[a:b])
        time.sleep(rng.choice([0, 0, 0.001, 0.05]))


_TRACEBACK = re.compile(rb"Traceback \(most recent call last\):(?:(?!\nshaderlint-lsp ).)*", re.S)


def server_session(rng: random.Random, seeds: list[bytes], rounds: int = SERVER_ROUNDS) -> dict:
    """One server: ``rounds`` attacks, each followed by a hover that must be answered; then shutdown and
    exit. Returns the stats and failures (as :class:`Failure`, with the attack bytes)."""
    sys.path.insert(0, ROOT)
    from tests.server.raw_client import RawServer, did_open, hover

    out = {"rounds": 0, "failures": [], "latencies": [], "attacks": {}, "peak_rss": 0}
    server = RawServer(ROOT, args=("--max-message-bytes", str(SERVER_MAX_MESSAGE)))
    try:
        server.send(did_open(_CHECK_URI, _CHECK_KERNEL))
        for n in range(rounds):
            pieces = [server_attack(rng, seeds, n * 10 + j) for j in range(rng.randrange(1, 4))]
            what = " + ".join(w for w, _ in pieces)
            data = b"".join(b for _, b in pieces)
            for w, _ in pieces:
                out["attacks"][w.split(" ")[0] if w.startswith(("request", "notification")) else w] = \
                    out["attacks"].get(w.split(" ")[0] if w.startswith(("request", "notification")) else w, 0) + 1
            rid = 10_000_000 + n
            t0 = time.monotonic()
            try:
                _write_in_pieces(server, data + hover(rid, _CHECK_URI, *_CHECK_POS), rng)
                answer = server.response(rid, SERVER_TIMEOUT)
                if "SL201" not in json.dumps(answer.get("result")):
                    raise AssertionError(f"a wrong answer: {json.dumps(answer)[:300]}")
            except (AssertionError, OSError) as exc:
                slow = b"\n".join(re.findall(rb"^.*(?:after a message arrived|took [0-9.]+ s).*$", server.stderr, re.M))
                out["failures"].append((Failure("server", f"after {what}: {exc}"[:4000]
                                                + (f"\nslow steps: {slow.decode('utf-8', 'replace')[-2000:]}" if slow else "")),
                                        data))
                return out
            out["latencies"].append(time.monotonic() - t0)
            out["rounds"] += 1
            server.received.clear()
        rss = _status_kb("VmHWM", str(server.p.pid))
        out["peak_rss"] = (rss or 0) * 1024
        try:
            code = server.stop(SERVER_TIMEOUT)
            if code != 0:
                out["failures"].append((Failure("server", f"exit after shutdown: exit code {code}"), b""))
        except (AssertionError, OSError, Exception) as exc:  # noqa: BLE001
            out["failures"].append((Failure("server", f"shutdown/exit: {exc}"[:4000]), b""))
        time.sleep(0.2)
        for tb in _TRACEBACK.findall(server.stderr):
            if b"TimeBudgetExceeded" not in tb:  # a background lint stopped by a message: expected
                out["failures"].append((Failure("server-traceback", tb.decode("utf-8", "replace")[-4000:]), b""))
    finally:
        server.kill()
    return out


def _server_worker(args) -> dict:
    index, seed, seconds, out_dir = args
    rng = random.Random(f"server:{seed}:{index}")
    seeds = load_seeds()
    stats = {"sessions": 0, "rounds": 0, "failures": 0, "kinds": {}, "saved": [], "latencies": [], "attacks": {},
             "peak_rss": 0}
    cpu0 = time.process_time()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        s = server_session(rng, seeds)
        stats["sessions"] += 1
        stats["rounds"] += s["rounds"]
        stats["latencies"] += s["latencies"]
        stats["peak_rss"] = max(stats["peak_rss"], s["peak_rss"])
        for k, v in s["attacks"].items():
            stats["attacks"][k] = stats["attacks"].get(k, 0) + v
        for f, data in s["failures"]:
            stats["failures"] += 1
            stats["kinds"][f.kind] = stats["kinds"].get(f.kind, 0) + 1
            if len(stats["saved"]) < 50:
                f.path = "attack.bin"
                stats["saved"].append(save_failure(out_dir, data or f.detail.encode(), [f]))
    stats["cpu"] = time.process_time() - cpu0
    return stats


def server_campaign(minutes: float, seed: int, jobs: int, out_dir: str) -> dict:
    tasks = [(i, seed, minutes * 60, out_dir) for i in range(jobs)]
    t0 = time.monotonic()
    if jobs == 1:
        parts = [_server_worker(tasks[0])]
    else:
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            parts = pool.map(_server_worker, tasks)
    total = {"sessions": 0, "rounds": 0, "failures": 0, "kinds": {}, "saved": [], "latencies": [], "attacks": {},
             "peak_rss": 0, "cpu": 0.0}
    for p in parts:
        for k in ("sessions", "rounds", "failures", "cpu"):
            total[k] += p[k]
        total["latencies"] += p["latencies"]
        total["saved"] += p["saved"]
        total["peak_rss"] = max(total["peak_rss"], p["peak_rss"])
        for key in ("kinds", "attacks"):
            for k, v in p[key].items():
                total[key][k] = total[key].get(k, 0) + v
    total["seconds"] = time.monotonic() - t0
    return total


def report_server(t: dict, args) -> int:
    lat = sorted(t["latencies"]) or [math.nan]
    print(f"server sessions: {t['sessions']} ({SERVER_ROUNDS} attack rounds each, then shutdown and exit)")
    print(f"attack rounds:   {t['rounds']} (1-3 attacks each, then a hover that must be answered within "
          f"{SERVER_TIMEOUT:g} s)")
    print("attacks:         " + ", ".join(f"{k} {v}" for k, v in sorted(t["attacks"].items(), key=lambda kv: -kv[1])))
    print(f"failures:        {t['failures']}" + (" (" + ", ".join(f"{k} {v}" for k, v in sorted(t["kinds"].items())) + ")"
                                                 if t["kinds"] else ""))
    print(f"hover latency:   median {lat[len(lat) // 2] * 1000:.0f} ms, p95 {lat[int(len(lat) * 0.95)] * 1000:.0f} ms, "
          f"max {lat[-1] * 1000:.0f} ms (after the attack bytes were written; wall clock)")
    print(f"server peak RSS: {t['peak_rss'] / 2**20:.0f} MiB (largest over the sessions)")
    print(f"wall time:       {t['seconds']:.0f} s; client CPU {t['cpu']:.0f} s")
    if t["saved"]:
        print(f"saved to {args.out}/ ({len(t['saved'])}): {' '.join(t['saved'][:10])}")
    return 1 if t["failures"] else 0


# ---- campaign -------------------------------------------------------------------------------------------
def _worker(args) -> dict:
    index, seed, seconds, out_dir, budget = args
    rng = random.Random(f"{seed}:{index}")
    seed_files = load_seed_files()
    seeds = [d for _p, d in seed_files]
    stats = {"chains": 0, "inputs": 0, "failing_inputs": 0, "failures": 0, "kinds": {}, "saved": [], "slowest": 0.0,
             "budget_hits": 0, "large": 0, "memory_max_ratio": 0.0, "memory_max": 0}
    cpu0 = time.process_time()
    end = time.monotonic() + seconds
    os.makedirs(out_dir, exist_ok=True)
    inflight = os.path.join(out_dir, f"inflight-{index}.bin")  # what a worker that never returns was doing
    while time.monotonic() < end:
        data = generate(rng, seeds)
        with open(inflight, "wb") as fh:
            fh.write(data)
        t0 = time.perf_counter()
        fails = check_input(data, rng, budget, memory=True)
        stats["slowest"] = max(stats["slowest"], time.perf_counter() - t0)
        if rng.random() < LARGE_SHARE:  # a large input, for the memory ceiling
            path, big = large_input(rng, seed_files)
            with open(inflight, "wb") as fh:
                fh.write(big)
            problems, growth = check_memory(path, big, Settings(time_budget=budget))
            stats["large"] += 1
            if growth is not None:
                stats["memory_max"] = max(stats["memory_max"], growth)
                stats["memory_max_ratio"] = max(stats["memory_max_ratio"], max(0, growth - MEMORY_BASE) / len(big))
            if problems:
                stats["failing_inputs"] += 1
                stats["failures"] += 1
                stats["kinds"]["memory"] = stats["kinds"].get("memory", 0) + 1
                if len(stats["saved"]) < 200:
                    stats["saved"].append(save_failure(out_dir, big, [Failure("memory", problems[0], None, path)]))
        stats["inputs"] += 1
        if fails:
            real = real_failures(fails)
            stats["failing_inputs"] += bool(real)
            stats["failures"] += len(real)
            stats["budget_hits"] += len(fails) - len(real)
            for f in fails:
                stats["kinds"][f.kind] = stats["kinds"].get(f.kind, 0) + 1
            if len(stats["saved"]) < 200:
                stats["saved"].append(save_failure(out_dir, data, fails))
        if rng.random() < CHAIN_SHARE:
            path, data = rng.choice(seed_files)
            with open(inflight, "wb") as fh:
                fh.write(data)
            fails = check_chain(path, data, rng, seeds, budget)
            stats["chains"] += 1
            if fails:
                stats["failing_inputs"] += 1
                stats["failures"] += len(fails)
                for f in fails:
                    stats["kinds"][f.kind] = stats["kinds"].get(f.kind, 0) + 1
                if len(stats["saved"]) < 200:
                    stats["saved"].append(save_failure(out_dir, data, fails))
    stats["cpu"] = time.process_time() - cpu0
    os.unlink(inflight)
    return stats


def campaign(minutes: float, seed: int, jobs: int, out_dir: str, budget: float = BUDGET) -> dict:
    seconds = minutes * 60
    t0 = time.monotonic()
    tasks = [(i, seed, seconds, out_dir, budget) for i in range(jobs)]
    hung: list[str] = []
    if jobs == 1:
        parts = [_worker(tasks[0])]
    else:
        pool = multiprocessing.get_context("spawn").Pool(jobs)
        pending = pool.map_async(_worker, tasks)
        try:
            parts = pending.get(timeout=seconds + HANG_AFTER)
        except multiprocessing.TimeoutError:  # a worker is stuck where no budget reaches: that is a failure
            parts = []
            for i in range(jobs):
                path = os.path.join(out_dir, f"inflight-{i}.bin")
                if os.path.exists(path):
                    with open(path, "rb") as fh:
                        data = fh.read()
                    hung.append(save_failure(out_dir, data, [Failure(
                        "hang", f"worker {i} did not return {HANG_AFTER:g} s after the campaign's end")]))
        finally:
            pool.terminate()
            pool.join()
    wall = time.monotonic() - t0
    total = {"chains": 0, "inputs": 0, "failing_inputs": 0, "failures": 0, "kinds": {}, "saved": [], "slowest": 0.0, "cpu": 0.0,
             "budget_hits": 0, "large": 0, "memory_max_ratio": 0.0, "memory_max": 0}
    for p in parts:
        for k in ("chains", "inputs", "failing_inputs", "failures", "cpu", "budget_hits", "large"):
            total[k] += p[k]
        for k in ("memory_max_ratio", "memory_max"):
            total[k] = max(total[k], p[k])
        for k, v in p["kinds"].items():
            total["kinds"][k] = total["kinds"].get(k, 0) + v
        total["saved"] += p["saved"]
        total["slowest"] = max(total["slowest"], p["slowest"])
    if hung:
        total["failures"] += len(hung)
        total["failing_inputs"] += len(hung)
        total["kinds"]["hang"] = total["kinds"].get("hang", 0) + len(hung)
        total["saved"] += hung
        total["hung_workers"] = len(hung)
    total["seconds"] = wall
    total["rate"] = total["inputs"] / wall if wall else math.nan
    return total


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: all cores)")
    p.add_argument("--out", default=os.path.join(ROOT, ".fuzz-failures"), help="directory for failing inputs")
    p.add_argument("--budget", type=float, default=BUDGET, help="seconds per lint")
    p.add_argument("--replay", nargs="+", metavar="FILE", help="re-run saved inputs and print tracebacks")
    p.add_argument("--server", action="store_true", help="fuzz the language server's framing and size limits instead")
    args = p.parse_args(argv)
    if args.server:
        print(f"fuzzing the language server for {args.minutes:g} min with {args.jobs} client(s), seed {args.seed}",
              flush=True)
        return report_server(server_campaign(args.minutes, args.seed, max(1, args.jobs), args.out), args)
    if args.replay:
        for path in args.replay:
            print(f"### {path}")
            replay(path)
        return 0
    print(f"fuzzing for {args.minutes:g} min with {args.jobs} process(es), seed {args.seed}; "
          f"each input is linted as {', '.join(LANGUAGES)}, fixed and formatted ({', '.join(FORMATS)})",
          flush=True)
    t = campaign(args.minutes, args.seed, max(1, args.jobs), args.out, args.budget)
    if t.get("hung_workers"):
        print(f"STUCK WORKERS:  {t['hung_workers']} (their inputs are saved; figures exclude them)")
    print(f"inputs tried:   {t['inputs']}")
    print(f"lint runs:      {t['inputs'] * len(LANGUAGES)}")
    print(f"edit chains:    {t['chains']} ({CHAIN_EDITS} edits inside bodies of a whole example or fixture, each "
          f"linted per function and as a whole file)")
    kinds = {k: v for k, v in t["kinds"].items() if k not in NOT_FAILURES}
    print(f"failing inputs: {t['failing_inputs']} ({t['failures']} failures"
          + (": " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) if kinds else "") + ")")
    print(f"budget hits:    {t['budget_hits']} (lints that stopped at the time budget with an SL001; saved, "
          f"not failures)")
    print(f"inputs/s:       {t['rate']:.1f} over {t['seconds']:.0f} s")
    per_cpu = t["inputs"] / t["cpu"] if t["cpu"] else math.nan
    print(f"CPU time:       {t['cpu']:.0f} s in {args.jobs} process(es): {per_cpu:.1f} inputs per CPU-second, "
          f"{t['cpu'] / max(1, t['inputs']) * 1000:.1f} ms per input (load average {os.getloadavg()[0]:.1f})")
    print(f"slowest input:  {t['slowest'] * 1000:.0f} ms")
    print(f"memory:         every lint under {MEMORY_PER_BYTE} x size + {MEMORY_BASE // 2**20} MiB of peak growth; "
          f"{t['large']} large inputs ({LARGE_SIZES[0] // 1000}-{LARGE_SIZES[1] // 1000} kB): largest growth "
          f"{t['memory_max'] / 2**20:.0f} MiB, {t['memory_max_ratio']:.1f} bytes per input byte above the base")
    if t["saved"]:
        print(f"inputs saved to {args.out}/ ({len(t['saved'])}): {' '.join(t['saved'][:10])}")
    return 1 if t["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
