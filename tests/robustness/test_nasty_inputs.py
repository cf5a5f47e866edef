"""A standing corpus of hostile inputs, each linted through the CLI next to a normal file.

For every input: the exit code is 0 or 1 (2 is for usage and internal errors, never for bad
input), the normal file in the same run is still reported, every SL001 carries a reason (and
none is a caught crash), and every position lies inside its file. Big inputs are generated at
test time.
"""

from __future__ import annotations

import re
import struct
import time
import zlib

import pytest

from shaderlint.config import Settings
from shaderlint.engine import lint_source
from shaderlint.model.source import Source
from tests.robustness.conftest import GOOD, GOOD_AT, SENTINEL_CONFIG, SENTINEL_RULES, run, run_json

CRASH = re.compile(r"failed on this file|could not analyse this file: [A-Z]\w*(Error|Exception)\b|Traceback")


def _png() -> bytes:
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    body = zlib.compress(b"\x00\xff\x00\x00")

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", body) + chunk(b"IEND", b"")


K = b"__global__ void k(int* a) { a[0] = %s / a[2]; }\n"
M = b"kernel void k(device int* a [[buffer(0)]]) { a[0] = %s / a[2]; }\n"
G = b"#version 450\nlayout(local_size_x = 64) in;\nlayout(std430, binding = 0) buffer B { int a[]; };\n" \
    b"void main() { a[0] = %s / a[2]; }\n"

NASTY: dict[str, tuple[str, bytes]] = {
    "nul_bytes": ("k.cu", b"__global__ void k(int* a)\x00 { a[0] = a[1] / a[2]; }\n\x00\x00"),
    "nul_only": ("k.metal", b"\x00" * 4096),
    "invalid_utf8": ("k.cu", b"// caf\xe9 \xff\xfe\xc3\n" + K % b"a[1] \xed\xa0\x80"),
    "overlong_and_surrogates": ("k.comp", G % b"a[1] /* \xc0\xaf \xed\xbf\xbf \xf4\x90\x80\x80 */"),
    "utf16_le_bom": ("k.cu", b"\xff\xfe" + GOOD.encode("utf-16-le")),
    "utf16_be_bom": ("k.metal", b"\xfe\xff" + (M % b"a[1]").decode().encode("utf-16-be")),
    "utf16_le_no_bom": ("k.cu", GOOD.encode("utf-16-le")),
    "utf32_bom": ("k.comp", b"\xff\xfe\x00\x00" + (G % b"a[1]").decode().encode("utf-32-le")),
    "deep_parens": ("k.cu", K % (b"(" * 10_000 + b"a[1]" + b")" * 10_000)),
    "deep_parens_metal": ("k.metal", M % (b"(" * 10_000 + b"a[1]" + b")" * 10_000)),
    "deep_parens_glsl": ("k.comp", G % (b"(" * 10_000 + b"a[1]" + b")" * 10_000)),
    "deep_braces": ("k.cu", b"__global__ void k(int* a) {" + b"{" * 10_000 + b"a[0] = a[1] / a[2];"
                    + b"}" * 10_000 + b"}\n"),
    "deep_braces_unbalanced": ("k.metal", b"kernel void k() {" + b"{" * 10_000 + b"\n"),
    "deep_closers": ("k.comp", b"}" * 10_000 + b")" * 10_000 + b"]" * 10_000),
    "deep_unary": ("k.cu", K % (b"-" * 10_000 + b"a[1]")),
    "deep_ifs": ("k.comp", b"#version 450\nlayout(local_size_x = 64) in;\nvoid main() { int x = 0;"
                 + b"if (x > 0) " * 2_000 + b"x = 1; }\n"),
    "long_line": ("k.cu", b"__global__ void k(float* a) { float x = 0.0f" + b" + a[1]" * 16_000 + b"; a[0] = x; }\n"),
    "long_line_no_newline": ("k.metal", b"// " + b"x" * 100_000),
    "long_identifier": ("k.cu", K % (b"v" * 100_000)),
    "long_literal": ("k.cu", K % (b"9" * 100_000)),
    "unterminated_block_comment": ("k.cu", GOOD.encode() + b"/* never closed\n__global__ void z() {}\n"),
    "unterminated_string": ("k.metal", b"kernel void k(device int* a [[buffer(0)]]) { const char* s = \"abc\n"
                            b"a[0] = 1; }\n"),
    "unterminated_char": ("k.cu", b"__global__ void k(char* a) { a[0] = 'x; }\n"),
    "unterminated_raw_string": ("k.cu", b"const char* s = R\"(never\n__global__ void k() {}\n"),
    "unterminated_attribute": ("k.metal", b"kernel void k(device int* a [[buffer(0) { a[0] = 1; }\n"),
    "unterminated_layout": ("k.comp", b"#version 450\nlayout(local_size_x = 64\nvoid main() {}\n"),
    "macro_unbalanced_braces": ("k.cu", b"#define OPEN {\n#define CLOSE }\n__global__ void k(int* a) OPEN "
                                b"a[0] = a[1] / a[2]; CLOSE\n" + GOOD.encode()),
    "macro_defines_kernels": ("k.metal", b"#define K(name) kernel void name(device int* a [[buffer(0)]]) {\n"
                              b"K(one) a[0] = 1; }\nK(two\n"),
    "macro_continuations": ("k.comp", b"#define A \\\n  { \\\n\n" + G % b"a[1]"),
    "png_as_metal": ("image.metal", _png()),
    "python_as_comp": ("script.comp", b"#!/usr/bin/env python3\nimport sys\n\n\ndef main():\n"
                       b"    print('hello', sys.argv[1:])\n\n\nif __name__ == '__main__':\n    main()\n"),
    "json_as_cu": ("data.cu", b'{"a": [1, 2, {"b": null}], "c": "\\u0000"}\n'),
    "empty": ("empty.frag", b""),
    "whitespace_only": ("blank.vert", b"  \n\t\n\r\n"),
    "single_newline": ("nl.metal", b"\n"),
    "crlf_only": ("k.cu", b"\r\n" * 1000),
    "lone_cr_only": ("k.metal", b"\r" * 1000),
    "form_feeds_and_controls": ("k.cu", b"\f\v\x1b[31m" + K % b"a[1]" + b"\x07\x08"),
    "bidi_and_zero_width": ("k.cu", ("// \u202eevil\u202c \u200b\n" + GOOD).encode()),
    "annotation_garbage": ("k.cu", b"// shaderlint: threadgroup-size=0x0 grid-size=99999999999999999999999x1\n"
                           b"// shaderlint: dispatch=nope ignore[ ignore-file[SL9 ignore[,,]\n" + GOOD.encode()),
}


def _check_positions(path, data: bytes, items: list[dict]) -> None:
    src = Source(str(path), data)
    lines = len(src.line_starts)
    for d in items:
        assert 1 <= d["line"] <= d["end_line"] <= lines, d
        for ln, col in ((d["line"], d["column"]), (d["end_line"], d["end_column"])):
            assert 1 <= col <= len(src.line_text(ln)) + 2, d  # +1 for 1-based, +1 for a position at a line break
        if d["code"] == "SL001":
            assert d["message"].strip() and not CRASH.search(d["message"]), d["message"]


@pytest.mark.parametrize("case", sorted(NASTY))
def test_nasty_file_next_to_a_good_one(project, capsys, case):
    name, data = NASTY[case]
    (project / "shaderlint.toml").write_text(SENTINEL_CONFIG + "time-budget = 2\n")  # what cannot be read in 2 s is an SL001
    (project / name).write_bytes(data)
    (project / "good.cu").write_text(GOOD)
    t0 = time.monotonic()
    code, items, err = run_json(capsys, "-j", "1", ".")
    assert time.monotonic() - t0 < 20
    assert code in (0, 1), err
    assert "internal error" not in err and "Traceback" not in err
    good = [(d["code"], d["line"], d["column"]) for d in items if d["path"].endswith("good.cu")]
    assert ("SL201", *GOOD_AT) in good
    _check_positions(project / name, data, [d for d in items if d["path"].endswith(name)])
    # Every format copes with whatever came out (the results come from the cache now).
    for fmt in ("text", "sarif", "github"):
        code2, _out, err2 = run(capsys, "-j", "1", "--format", fmt, ".")
        assert code2 == code, (fmt, err2)


@pytest.mark.parametrize("language,ext", [("metal", ".metal"), ("cuda", ".cu"), ("glsl", ".comp")])
def test_nasty_inputs_in_every_language(language, ext):
    """Each input also goes through the engine as each language (the front ends differ)."""
    for case, (_name, data) in sorted(NASTY.items()):
        r = lint_source("x" + ext, data, Settings(extend_select=SENTINEL_RULES, time_budget=2.0))
        assert r.language == language
        n = len(data)
        for d in r.diagnostics:
            assert 0 <= d.start <= d.end <= n, (case, d)
            assert (d.line, d.column) == r.source.position(d.start), (case, d)
            if d.code == "SL001":
                assert d.message.strip() and not CRASH.search(d.message), (case, d.message)


def test_encodings_get_a_reason(project, capsys):
    for name, data in (("le.cu", b"\xff\xfe" + GOOD.encode("utf-16-le")),
                       ("be.cu", b"\xfe\xff" + GOOD.encode("utf-16-be")),
                       ("image.metal", _png())):
        (project / name).write_bytes(data)
    code, items, _ = run_json(capsys, "--no-cache", ".")
    assert code == 1
    by_path = {d["path"].rsplit("/", 1)[-1]: d for d in items}
    assert "UTF-16 (little-endian)" in by_path["le.cu"]["message"]
    assert "UTF-16 (big-endian)" in by_path["be.cu"]["message"]
    assert "binary" in by_path["image.metal"]["message"]
    assert all(d["code"] == "SL001" and (d["line"], d["column"]) == (1, 1) for d in by_path.values())


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r", b"\n\r"])
def test_line_endings_keep_positions(project, capsys, newline):
    """CRLF, lone CR (old Mac) and LF CR all count one line break per line; columns are unaffected."""
    data = GOOD.encode().replace(b"\n", newline)
    (project / "k.cu").write_bytes(data)
    code, items, _ = run_json(capsys, "--no-cache", "k.cu")
    lines = GOOD_AT[0] if newline != b"\n\r" else 5  # LF CR is two breaks
    assert code == 1 and [(d["code"], d["line"], d["column"]) for d in items] == [("SL201", lines, GOOD_AT[1])]


def test_utf8_bom_keeps_positions(project, capsys):
    (project / "k.cu").write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    code, items, _ = run_json(capsys, "--no-cache", "k.cu")
    assert [(d["code"], d["line"], d["column"]) for d in items] == [("SL201", *GOOD_AT)]


def test_multibyte_columns_count_characters(project, capsys):
    text = GOOD.replace("        a[i] = ", "/*é漢😀*/    a[i] = ")
    assert text != GOOD
    (project / "k.cu").write_text(text, encoding="utf-8")
    _code, items, _ = run_json(capsys, "--no-cache", "k.cu")
    (d,) = items
    line = text.splitlines()[2]
    assert (d["line"], d["column"]) == (3, line.index("/ n") + 1)


def test_twenty_megabytes_end_within_the_budget(project, capsys):
    """A 20 MB file finishes inside its time budget or is reported as over it, in seconds, not minutes;
    the other files of the run are still reported."""
    (project / "shaderlint.toml").write_text(SENTINEL_CONFIG + "time-budget = 1\n")  # 4 s: a long file gets up to 4x
    unit = GOOD.encode().replace(b"scale", b"scale_%07d")
    big = b"".join(unit.replace(b"%07d", b"%07d" % i) for i in range(20_000_000 // len(unit) + 1))
    (project / "big.cu").write_bytes(big)
    (project / "good.cu").write_text(GOOD)
    t0 = time.monotonic()
    code, items, err = run_json(capsys, "-j", "1", ".")
    elapsed = time.monotonic() - t0
    assert code == 1, err
    assert elapsed < 15, elapsed  # budget 4 s; reading, hashing and the parse's last chunk come on top
    big_items = [d for d in items if d["path"].endswith("big.cu")]
    assert any(d["code"] == "SL001" and "time budget" in d["message"] for d in big_items) or big_items
    assert ("SL201", *GOOD_AT) in [(d["code"], d["line"], d["column"]) for d in items if d["path"].endswith("good.cu")]


def test_time_budget_message_names_the_budget(project, capsys):
    (project / "shaderlint.toml").write_text(SENTINEL_CONFIG + "time-budget = 0.001\n")
    unit = GOOD.replace("scale", "scale_%d")
    (project / "many.cu").write_text("".join(unit % i for i in range(1000)))  # 4,000 lines: not scaled
    code, items, _ = run_json(capsys, "--no-cache", "-j", "1", "many.cu")
    assert code == 1
    assert any(d["code"] == "SL001" and "time budget of 0.001 s" in d["message"] for d in items)
