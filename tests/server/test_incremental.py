"""Incremental re-parsing (in process): edits through ``Document`` give what a fresh lint gives.

Random edits, addressed in UTF-16 positions as a client sends them, include the
ones that move the front ends' masks outside the edited bytes (``[[``, ``//``,
``/*``, address-space words): the server must notice and parse from scratch.
"""

from __future__ import annotations

from pathlib import Path

import hypothesis.strategies as st
from hypothesis import HealthCheck, given, settings
from lsprotocol import types

from shaderlint.config import Settings
from shaderlint.engine import lint_source
from shaderlint.server.convert import UTF16, PositionMap
from shaderlint.server.diagnostics import Document

METAL = """\
#include <metal_stdlib>
using namespace metal;

struct Params { uint n; float scale; };

kernel void blur(device const float *in [[buffer(0)]],
                 device float *out [[buffer(1)]],
                 constant Params &p [[buffer(2)]],
                 uint gid [[thread_position_in_grid]])
{
    float taps[5];
    for (uint k = 0; k < 5; ++k) taps[k] = in[gid + k] * p.scale;
    uint j = gid % p.n;  // wraps
    out[gid] = taps[j % 5] / 5.0;
}
"""
CUDA = """\
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) rows(float *out, const float *in, int n, int width)
{
    __shared__ float tile[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= n) return;
    tile[threadIdx.x] = in[i];
    __syncthreads();
    int col = i % width;  /* per row */
    out[i] = tile[(threadIdx.x + 1) % BLOCK] * col;
}
"""
SNIPPETS = ["[[", "]]", "//", "/*", "*/", "\n", "\r\n", " device ", " kernel ", "x", "(", ")", "{", "}", ";",
            " / n", "😀", "漢", '"', "[[buffer(3)]]", "int q = i / width;\n", "#define W 4\n", " ", ""]
SETTINGS = Settings()


def _fresh(path: str, data: bytes, language: str, settings: Settings = SETTINGS):
    return lint_source(path, data, settings, language=language)


def _key(result) -> list[tuple]:
    return [(d.code, d.start, d.end, d.message) for d in result.diagnostics]


def _position(data: bytes, fraction: float) -> types.Position:
    return PositionMap(data, UTF16).position(int(len(data) * fraction))


edit = st.tuples(st.floats(0, 1), st.floats(0, 1), st.sampled_from(SNIPPETS))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=st.sampled_from([("k.metal", METAL, "metal"), ("k.cu", CUDA, "cuda")]),
       steps=st.lists(st.lists(edit, min_size=1, max_size=4), min_size=1, max_size=4))
def test_incremental_lint_matches_a_fresh_lint(source, steps):
    path, text, language = source
    doc = Document("file:///" + path, "/" + path, language, language, 1, text.encode())
    doc.lint(SETTINGS)
    for changes in steps:
        for a, b, snippet in changes:
            lo, hi = sorted((a, b))
            rng = types.Range(start=_position(doc.data, lo), end=_position(doc.data, hi))
            doc.apply_change(types.TextDocumentContentChangePartial(range=rng, text=snippet))
        incremental = doc.lint(SETTINGS)  # per function (shaderlint.incremental) when it can, else a whole file
        fresh = _fresh(doc.path, doc.data, language)
        if not fresh.parsed.tree.root_node.has_error:
            # Error recovery may legitimately differ between an incremental and a fresh parse; valid code may not.
            assert _key(incremental) == _key(fresh)
            if not incremental.partial:
                assert str(incremental.parsed.tree.root_node) == str(fresh.parsed.tree.root_node)
        if not incremental.partial:
            assert incremental.parsed.parse_bytes == fresh.parsed.parse_bytes
        elif doc.mid_edit:  # a function mid-edit (see shaderlint.incremental._mid_edit): text that does not parse
            assert fresh.parsed.tree.root_node.has_error
        else:
            assert _key(incremental) == _key(fresh)


def test_edits_that_move_masks_fall_back_to_a_full_parse():
    doc = Document("file:///k.metal", "/k.metal", "metal", "metal", 1, METAL.encode())
    doc.lint(SETTINGS)
    # Typing `//` before `kernel` comments out the qualifier mask (and everything after it on that line).
    line = METAL.splitlines().index(next(x for x in METAL.splitlines() if x.startswith("kernel")))
    at = types.Position(line=line, character=0)
    doc.apply_change(types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text="//"))
    result = doc.lint(SETTINGS)
    assert doc.stats["mask_fallback"] == 1
    assert _key(result) == _key(_fresh(doc.path, doc.data, "metal"))
    # An edit that leaves the masks alone stays incremental.
    at = types.Position(line=line + 6, character=4)
    doc.apply_change(types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text="\n"))
    doc.lint(SETTINGS, full=True)
    assert {k: doc.stats[k] for k in ("incremental", "full", "mask_fallback")} == \
        {"incremental": 1, "full": 2, "mask_fallback": 1}


def test_examples_reparse_incrementally_to_the_same_diagnostics():
    """Every example kernel: one-character edits at a third and two thirds of the file, linted incrementally."""
    from shaderlint.languages import language_for_path

    checked = 0
    for path in sorted((Path(__file__).parents[2] / "examples").glob("*.*")):
        language = language_for_path(str(path))
        if language is None:
            continue
        doc = Document(path.as_uri(), str(path), language, language, 1, path.read_bytes())
        doc.lint(SETTINGS)
        for third in (2, 1):
            pos = _position(doc.data, third / 3)
            doc.apply_change(types.TextDocumentContentChangePartial(range=types.Range(start=pos, end=pos), text=" "))
        result = doc.lint(SETTINGS)
        fresh = _fresh(doc.path, doc.data, language)
        if not fresh.parsed.tree.root_node.has_error:
            assert _key(result) == _key(fresh), path.name
            checked += 1
    assert checked >= 10


def test_edits_inside_one_function_relint_only_that_function():
    """Per-function linting: an edit inside a kernel body re-lints its component; the tree edits keep
    accumulating, so the next whole-file lint still parses incrementally, to the same diagnostics."""
    units = "".join(CUDA.replace("rows", f"rows{i}") for i in range(6))
    doc = Document("file:///u.cu", "/u.cu", "cuda", "cuda", 1, units.encode())
    doc.lint(SETTINGS)
    lines = units.splitlines()
    line = [i for i, x in enumerate(lines) if "int col" in x][3]
    for text in ("int q = i / width; ", "\n", " "):
        at = types.Position(line=line, character=4)
        doc.apply_change(types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text=text))
        result = doc.lint(SETTINGS)
        assert result.partial and result.model is None
        assert _key(result) == _key(_fresh(doc.path, doc.data, "cuda"))
    assert doc.stats["partial"] == 3
    whole = doc.lint(SETTINGS, full=True)
    assert not whole.partial and whole.model is not None and doc.stats["incremental"] >= 1
    assert _key(whole) == _key(_fresh(doc.path, doc.data, "cuda"))
    # An edit outside every body (before the first template) is a whole-file lint.
    doc.apply_change(types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
        text="// top\n"))
    assert not doc.lint(SETTINGS).partial


def test_typing_that_breaks_a_body_for_a_moment_stays_per_function():
    """While a statement is being typed the body does not parse; the partial lint checks the whole
    file's (incremental) parse reads that body the same way and still lints only its component."""
    units = "".join(CUDA.replace("rows", f"rows{i}") for i in range(6))
    doc = Document("file:///u.cu", "/u.cu", "cuda", "cuda", 1, units.encode())
    doc.lint(SETTINGS)
    line = [i for i, x in enumerate(units.splitlines()) if "int col" in x][2]
    for k, ch in enumerate("float w = col;"):
        at = types.Position(line=line, character=4 + k)
        doc.apply_change(types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text=ch))
        result = doc.lint(SETTINGS)
        assert _key(result) == _key(_fresh(doc.path, doc.data, "cuda")), repr(ch)
    assert doc.stats["partial"] == len("float w = col;")
    assert doc.stats["full"] == 1  # the open


def test_a_message_interrupts_the_confirming_whole_file_lint(caplog):
    """1.5 s after the last edit the server lints the whole file to confirm the per-function result;
    a message arriving meanwhile (the reader thread calls ``interrupt``) stops it, the per-function
    result stays, and the confirmation is tried again later."""
    import time

    from shaderlint.server.diagnostics import Linter
    from shaderlint.server.transport import Reader

    class Loop:  # the reader hands frames to the event loop: here, nowhere
        def call_soon_threadsafe(self, fn, *args):
            pass

    published = []
    linter = Linter(lambda d: (SETTINGS, None), published.append, lambda: UTF16, lambda: None)
    units = "".join(CUDA.replace("rows", f"rows{i}") for i in range(4))
    doc = Document("file:///c.cu", "/c.cu", "cuda", "cuda", 1, units.encode())
    linter.documents[doc.uri] = doc
    linter.ensure(doc)
    at = types.Position(line=[i for i, x in enumerate(units.splitlines()) if "int col" in x][1], character=4)
    doc.apply_change(types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text=" "))
    linter.ensure(doc)
    assert doc.result.partial
    partial_lsp = doc.lsp
    whole_lint = doc.lint

    def slow_whole_lint(settings, error=None, full=False, **kw):
        reader = Reader(__import__("io").BytesIO(b"Content-Length: 2\r\n\r\n{}"), Loop(), print, linter.interrupt)
        reader._run()  # a message arrives (on the reader thread; here, this one)
        t = time.monotonic()
        while time.monotonic() - t < 10:  # a long lint, interrupted within the watchdog's reaction time
            time.sleep(0.001)
        return whole_lint(settings, error, full, **kw)

    doc.lint = slow_whole_lint
    t = time.monotonic()
    linter._confirm(doc.uri, doc)
    assert time.monotonic() - t < 5
    assert doc.stats["interrupted"] == 1 and doc.result.partial and doc.lsp is partial_lsp
    assert "failed" not in caplog.text  # an interruption, not a lint that failed (it logged a traceback)
    doc.lint = whole_lint
    linter._confirm(doc.uri, doc)
    assert doc.stats["confirmed"] == 1 and doc.stats["mismatch"] == 0 and not doc.result.partial
    assert doc.result.model is not None and published == []  # the same diagnostics: nothing republished


def test_a_function_mid_edit_is_linted_per_function_and_not_confirmed():
    """`int t =` typed in front of a `for` loop: the whole file's error recovery reads the file as one
    ERROR (one SL001 at line 1). Each keystroke is still linted per function (the error in the edited
    function, the other findings kept), no confirming whole-file lint replaces that while the function
    is mid-edit; a request that needs the model (hover) gets it without changing the diagnostics shown;
    once the statement is complete the per-function result is confirmed by a whole-file lint."""
    from shaderlint.server.diagnostics import Linter

    unit = ("__global__ void hist{i}(const float *v, int n, int *counts)\n{{\n"
            "    extern __shared__ int local[];\n"
            "    for (int b = threadIdx.x; b < 64; b += blockDim.x) {{\n        local[b] = 0;\n    }}\n"
            "    __syncthreads();\n"
            "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {{\n"
            "        atomicAdd(&local[(int)v[i] & 63], 1);\n    }}\n"
            "    __syncthreads();\n"
            "    for (int b = threadIdx.x; b < 64; b += blockDim.x) {{\n"
            "        atomicAdd(&counts[b], local[b] / n);\n    }}\n}}\n\n")
    text = "".join(unit.format(i=i) for i in range(4))
    published = []
    with_opt_in = Settings(extend_select=("SL001", "SL201"))  # opt-in: the error in the edited function, the divisions
    linter = Linter(lambda d: (with_opt_in, None), published.append, lambda: UTF16, lambda: None)
    doc = Document("file:///h.cu", "/h.cu", "cuda", "cuda", 1, text.encode())
    linter.documents[doc.uri] = doc
    linter.ensure(doc)
    line = [i for i, x in enumerate(text.splitlines()) if "__syncthreads" in x][2]  # in hist1
    col = len("    __syncthreads();")
    for k, ch in enumerate(" int t ="):
        at = types.Position(line=line, character=col + k)
        doc.apply_change(types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text=ch))
        linter.ensure(doc)
    assert doc.mid_edit and doc.result.partial and doc.stats["full"] == 1  # only the open was a whole-file lint
    assert _fresh(doc.path, doc.data, "cuda").parsed.tree.root_node.is_error
    errors = [d for d in doc.lsp if d.code == "SL001"]
    assert errors and all(16 <= d.range.start.line <= 31 for d in errors)  # in hist1
    # The other kernels' findings stay; hist1 does not parse, so it is not analysed (as in a whole-file
    # lint while `int t` reads as an error inside it).
    assert [d.range.start.line for d in doc.lsp if d.code == "SL201"] == [12, 44, 60]
    linter._confirm(doc.uri, doc)  # a pause: nothing to confirm
    assert doc.result.partial and doc.stats["confirmed"] == 0
    lsp = doc.lsp
    linter.ensure(doc, full=True)  # hover: the whole file's model, the same diagnostics shown
    assert doc.result.model is not None and doc.lsp is lsp and doc.stats["mismatch"] == 0
    assert [d.code for d in doc.result.diagnostics] == [d.code for d in lsp] and published == []
    for k, ch in enumerate(" 0;"):
        at = types.Position(line=line, character=col + len(" int t =") + k)
        doc.apply_change(types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text=ch))
        linter.ensure(doc)
    assert doc.result.partial and not doc.mid_edit and doc.stats["full"] == 1
    assert _key(doc.result) == _key(_fresh(doc.path, doc.data, "cuda", with_opt_in))
    linter._confirm(doc.uri, doc)
    assert doc.stats["confirmed"] == 1 and doc.stats["mismatch"] == 0 and not doc.result.partial
