"""``--fix`` never loses code: atomic writes that keep permissions, no write that would not parse,
read-only and concurrently changed files left alone with a message, symlinks followed, bytes
preserved through stdin, and a second ``--fix`` changes nothing."""

from __future__ import annotations

import glob
import io
import os
import shutil
import stat
import sys

import pytest

import shaderlint.fixes as fixes
from shaderlint.diagnostics import Applicability, Edit, Finding, Fix
from shaderlint.rules.sl201_variable_integer_division import VariableIntegerDivision
from tests.robustness.conftest import ROOT, run

# SL202 offers a fix: `0.5` -> `0.5h` (unsafe, as it moves the arithmetic to half precision: these tests
# are about how fixes are written, so they pass --unsafe-fixes).
METAL = b"""kernel void tone(device half* px [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    half v = px[i];
    px[i] = v * 0.5;
}
"""
FIXED = METAL.replace(b"v * 0.5;", b"v * 0.5h;")


def _fix(capsys, *argv: str) -> tuple[int, str]:
    code, _out, err = run(capsys, "--no-cache", "--fix", "--unsafe-fixes", *argv)
    return code, err


def test_fix_keeps_permissions_and_leaves_no_temp_files(project, capsys):
    p = project / "tone.metal"
    p.write_bytes(METAL)
    os.chmod(p, 0o640)
    _fix(capsys, "tone.metal")
    assert p.read_bytes() == FIXED
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640
    assert not [n for n in os.listdir(project) if n.startswith(".shaderlint-")]


def test_failed_write_leaves_the_file_untouched(project, capsys, monkeypatch):
    p = project / "tone.metal"
    p.write_bytes(METAL)

    def boom(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fixes.os, "replace", boom)
    code, err = _fix(capsys, "tone.metal")
    assert p.read_bytes() == METAL
    assert "could not write fixes: No space left on device" in err
    assert not [n for n in os.listdir(project) if n.startswith(".shaderlint-")]
    assert code in (0, 1)


def test_interrupted_write_leaves_the_file_untouched(project, capsys, monkeypatch):
    """Even a KeyboardInterrupt in the middle of writing leaves the old file (and no temporary)."""
    p = project / "tone.metal"
    p.write_bytes(METAL)
    real_fsync = os.fsync

    def interrupted(fd):
        real_fsync(fd)
        raise KeyboardInterrupt

    monkeypatch.setattr(fixes.os, "fsync", interrupted)
    code, _out, _err = run(capsys, "--no-cache", "--fix", "--unsafe-fixes", "tone.metal")
    assert code == 130
    assert p.read_bytes() == METAL
    assert not [n for n in os.listdir(project) if n.startswith(".shaderlint-")]


def test_read_only_file_is_left_alone(project, capsys):
    p = project / "tone.metal"
    p.write_bytes(METAL)
    os.chmod(p, 0o444)
    try:
        code, err = _fix(capsys, "tone.metal")
    finally:
        os.chmod(p, 0o644)
    assert p.read_bytes() == METAL
    assert "read-only" in err and code == 1  # the finding is still reported


def test_read_only_directory(project, capsys, monkeypatch):
    """Where no temporary file can be created the fix is reported as not written."""
    p = project / "tone.metal"
    p.write_bytes(METAL)

    def no_temp(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(fixes.tempfile, "mkstemp", no_temp)
    code, err = _fix(capsys, "tone.metal")
    assert p.read_bytes() == METAL and "could not write fixes: Permission denied" in err


def test_file_changed_since_it_was_read_is_not_overwritten(project, capsys, monkeypatch):
    p = project / "tone.metal"
    p.write_bytes(METAL)
    real = fixes.fix_source

    def edit_meanwhile(*a, **k):
        out = real(*a, **k)
        p.write_bytes(METAL + b"// the user's newer edit\n")
        return out

    monkeypatch.setattr(fixes, "fix_source", edit_meanwhile)
    _code, err = _fix(capsys, "tone.metal")
    assert p.read_bytes() == METAL + b"// the user's newer edit\n"
    assert "changed while it was being linted" in err


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks")
def test_symlink_is_followed_not_replaced(project, capsys):
    (project / "real").mkdir()
    target = project / "real" / "tone.metal"
    target.write_bytes(METAL)
    os.symlink(target, project / "link.metal")
    _fix(capsys, "link.metal")
    assert os.path.islink(project / "link.metal")
    assert target.read_bytes() == FIXED


def test_fix_that_would_break_parsing_is_refused(project, capsys, monkeypatch):
    """A (buggy) fix that deletes a brace: the file is left as it was and the reason is printed."""
    src = b"__global__ void k(int* a, int n) {\n    a[0] = a[1] / n;\n}\n"
    p = project / "k.cu"
    p.write_bytes(src)

    def check(self, model, ctx):
        brace = model.source.data.rindex(b"}")
        yield Finding(brace, brace + 1, "test finding", fix=Fix("Delete the brace", Applicability.SAFE,
                                                                (Edit(brace, brace + 1, ""),)))

    monkeypatch.setattr(VariableIntegerDivision, "check", check)
    code, err = _fix(capsys, "k.cu")
    assert p.read_bytes() == src
    assert "would introduce a parse error" in err and code == 1


@pytest.mark.parametrize("text", [
    "x", "\udcff", "}", "/*", "\"", "\n#if 0\n", "\x00", "😀",
])
def test_no_fix_text_can_break_a_file(tmp_path, monkeypatch, text):
    """Whatever a fix inserts, apply_fixes never returns text with more parse errors than it was given."""
    src = b"__global__ void k(int* a, int n) {\n    a[0] = a[1] / n;\n}\n"
    at = src.index(b"/ n") + 2
    from shaderlint.engine import lint_source

    def check(self, model, ctx):
        yield Finding(at, at + 1, "test", fix=Fix("t", Applicability.SAFE, (Edit(at, at + 1, text),)))

    monkeypatch.setattr(VariableIntegerDivision, "check", check)
    r = lint_source("k.cu", src)
    try:
        new, _n = fixes.apply_fixes("k.cu", src, r.diagnostics, unsafe=True)
    except UnicodeEncodeError:
        pytest.fail("a fix text that cannot be encoded crashed apply_fixes")
    assert fixes.parse_error_count("k.cu", new, "cuda") <= fixes.parse_error_count("k.cu", src, "cuda")


@pytest.mark.parametrize("data,fixed", [
    # invalid UTF-8 and CRLF: fixed, every other byte as it was
    (b"// caf\xe9\r\n" + METAL.replace(b"\n", b"\r\n") + b"// \xff\r\n",
     (b"// caf\xe9\r\n" + FIXED.replace(b"\n", b"\r\n") + b"// \xff\r\n")),
    # NUL bytes and invalid UTF-8 make it "binary": not analysed, echoed unchanged
    (METAL + b"// \x00 \xff\n", METAL + b"// \x00 \xff\n"),
    (b"\xff\xfe" + METAL.decode().encode("utf-16-le"), b"\xff\xfe" + METAL.decode().encode("utf-16-le")),
])
def test_stdin_fix_keeps_every_byte(project, capsys, monkeypatch, data, fixed):
    """Through stdin the (fixed) source comes back byte for byte."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    buf = io.BytesIO()
    out = io.TextIOWrapper(buf, encoding="utf-8", newline="")
    monkeypatch.setattr(sys, "stdout", out)
    from shaderlint.cli import main

    assert main(["--stdin-filename", "tone.metal", "--fix", "--unsafe-fixes"]) == 0
    out.flush()
    assert buf.getvalue() == fixed


def _fixture_copies(tmp_path) -> list[tuple[str, bytes]]:
    """Every fixture that has a .fixed sibling, copied (with its directory's name) into ``tmp_path``."""
    out = []
    for fixed in sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", "*", "*", "*.fixed.*"))):
        src = fixed.replace(".fixed.", ".")
        if not os.path.exists(src):
            continue
        rel = os.path.relpath(src, os.path.join(ROOT, "tests", "fixtures"))
        dst = tmp_path / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        with open(fixed, "rb") as fh:
            out.append((str(dst), fh.read()))
    return out


def test_fix_is_idempotent_on_every_fixture(project, capsys):
    """``--fix --unsafe-fixes`` gives each fixture its .fixed text; a second run changes nothing."""
    copies = _fixture_copies(project / "fx")
    assert copies
    run(capsys, "--no-cache", "--fix", "--unsafe-fixes", "--select", "ALL", "fx")
    first = {p: open(p, "rb").read() for p, _ in copies}
    code, _out, err = run(capsys, "--no-cache", "--fix", "--unsafe-fixes", "--select", "ALL", "fx")
    second = {p: open(p, "rb").read() for p, _ in copies}
    changed = [os.path.relpath(p, project) for p in first if first[p] != second[p]]
    assert not changed, (changed, err)
    assert "fixed" not in err or "fixed 0 problems" in err
