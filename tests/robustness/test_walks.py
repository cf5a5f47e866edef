"""Walking directories: loops, unreadable and vanishing entries, odd names. The run always ends,
reports every readable file once, and never turns a bad entry into exit code 2."""

from __future__ import annotations

import errno
import json
import os
import sys

import pytest

import shaderlint.discovery as discovery
import shaderlint.runner as runner
from shaderlint.discovery import GitIgnore, discover
from tests.robustness.conftest import GOOD, run, run_json

needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink") or sys.platform == "win32", reason="symlinks")


def write(path, text: str = GOOD) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def names(items: list[dict]) -> list[str]:
    return sorted(os.path.relpath(d["path"]).replace(os.sep, "/") for d in items)


@needs_symlinks
def test_symlink_loops(project, capsys):
    write(project / "src" / "a" / "k.cu")
    os.symlink("..", project / "src" / "a" / "up")  # a -> src -> a -> ...
    os.symlink(".", project / "src" / "self")
    os.symlink(project / "src", project / "src" / "a" / "abs")
    os.symlink("loop2", project / "src" / "loop1")  # a symlink cycle that resolves to nothing
    os.symlink("loop1", project / "src" / "loop2")
    os.symlink("missing.cu", project / "src" / "dangling.cu")  # a dangling link with a shader name
    code, items, err = run_json(capsys, "--no-cache", "src")
    assert code == 1, err
    assert names(items) == ["src/a/k.cu"]  # once, whatever the number of ways to reach it


@needs_symlinks
def test_symlinked_file_and_directory_are_linted_once(project, capsys):
    write(project / "real" / "k.cu")
    os.symlink(project / "real", project / "alias")
    os.symlink(project / "real" / "k.cu", project / "link.cu")
    code, items, _ = run_json(capsys, "--no-cache", ".")
    assert code == 1
    # The directory is walked once (by inode); the file link is a distinct path to the same file.
    assert len([n for n in names(items) if os.path.basename(n) == "k.cu"]) == 1
    assert "link.cu" in names(items)


def test_directory_named_like_a_shader(project, capsys):
    write(project / "foo.metal" / "inner.cu")
    write(project / "bar.cu" / "deeper.comp" / "k.cu")
    code, items, err = run_json(capsys, "--no-cache", ".")
    assert code == 1, err
    assert names(items) == ["bar.cu/deeper.comp/k.cu", "foo.metal/inner.cu"]
    code, items, err = run_json(capsys, "--no-cache", "foo.metal")  # named on the command line: walked
    assert code == 1 and names(items) == ["foo.metal/inner.cu"], err


def test_spaces_and_non_ascii_names(project, capsys):
    for name in ("with space.cu", "ünïcödé/kérnel.cu", "日本語/カーネル.metal", "emoji 😀/k.comp", "tab\tname.cu"):
        text = GOOD if name.endswith(".cu") else (
            "kernel void k(device int* a [[buffer(0)]], constant int& n [[buffer(1)]]) {\n"
            "    for (int i = 0; i < n; ++i) a[i] = a[i] / n;\n}\n"
            if name.endswith(".metal") else
            "#version 450\nlayout(local_size_x = 64) in;\nlayout(std430, binding = 0) buffer B { int a[]; };\n"
            "layout(push_constant) uniform P { int n; };\nvoid main() { for (int i = 0; i < n; ++i) a[i] = a[i] / n; }\n")
        write(project / name, text)
    code, items, err = run_json(capsys, "--no-cache", ".")
    assert code == 1, err
    assert len({d["path"] for d in items if d["code"] == "SL201"}) == 5
    for fmt in ("text", "sarif", "github"):
        code, out, err = run(capsys, "--no-cache", "--format", fmt, ".")
        assert code == 1, err
    code, out, _ = run(capsys, "--no-cache", "--format", "sarif", ".")
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in json.loads(out)["runs"][0]["results"]}
    assert "with%20space.cu" in uris and all(" " not in u for u in uris)


def test_unreadable_file(project, capsys, monkeypatch):
    """A file that cannot be read is an SL001 with the reason; the others are reported."""
    write(project / "good.cu")
    write(project / "secret.cu")
    real = runner._read

    def read(path: str) -> bytes:
        if path.endswith("secret.cu"):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(runner, "_read", read)
    code, items, err = run_json(capsys, "--no-cache", ".")
    assert code == 1, err
    by = {os.path.basename(d["path"]): d for d in items}
    assert by["good.cu"]["code"] == "SL201"
    assert by["secret.cu"]["code"] == "SL001" and "Permission denied" in by["secret.cu"]["message"]


def test_unreadable_file_for_real(project, capsys):
    write(project / "good.cu")
    write(project / "secret.cu")
    os.chmod(project / "secret.cu", 0)
    try:
        code, items, _ = run_json(capsys, "--no-cache", ".")
        readable = os.access(project / "secret.cu", os.R_OK)  # root reads anyway
    finally:
        os.chmod(project / "secret.cu", 0o644)
    assert code == 1
    by = {os.path.basename(d["path"]): d["code"] for d in items}
    assert by["good.cu"] == "SL201"
    assert by["secret.cu"] == ("SL201" if readable else "SL001")


def test_unreadable_directory(project, capsys, monkeypatch):
    write(project / "ok" / "good.cu")
    write(project / "locked" / "hidden.cu")
    real = os.scandir

    def scandir(path="."):
        if os.path.basename(os.fspath(path)) == "locked":
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(discovery.os, "scandir", scandir)
    code, items, err = run_json(capsys, "--no-cache", ".")
    assert code == 2  # files that could not be read fail the run; the others are still reported
    assert names(items) == ["ok/good.cu"]
    assert "locked: Permission denied" in err


def test_unreadable_directory_for_real(project, capsys):
    write(project / "ok" / "good.cu")
    write(project / "locked" / "hidden.cu")
    os.chmod(project / "locked", 0)
    try:
        code, items, err = run_json(capsys, "--no-cache", ".")
        readable = os.access(project / "locked", os.R_OK | os.X_OK)
    finally:
        os.chmod(project / "locked", 0o755)
    assert code == (1 if readable else 2)
    assert "ok/good.cu" in names(items)
    if not readable:
        assert "Permission denied" in err


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_file_vanishes_between_walk_and_read(project, capsys, monkeypatch, jobs):
    for i in range(4):
        write(project / f"k{i}.cu")
    write(project / "gone.cu")
    real = discovery.discover

    def walk_then_delete(*a, **k):
        found = list(real(*a, **k))
        os.unlink(project / "gone.cu")
        return iter(found)

    import shaderlint.cli as cli
    monkeypatch.setattr(cli, "discover", walk_then_delete)
    monkeypatch.setattr(runner, "POOL_MIN_BYTES", 0, raising=False)
    code, items, err = run_json(capsys, "--no-cache", "-j", jobs, ".")
    assert code == 1, err
    by = {os.path.basename(d["path"]): d for d in items}
    assert by["gone.cu"]["code"] == "SL001" and "No such file" in by["gone.cu"]["message"]
    assert all(by[f"k{i}.cu"]["code"] == "SL201" for i in range(4))


def test_read_raises_other_os_errors(project, capsys, monkeypatch):
    write(project / "good.cu")
    write(project / "io.cu")
    write(project / "big.cu")
    real = runner._read
    errors = {"io.cu": OSError(errno.EIO, "Input/output error"), "big.cu": IsADirectoryError(errno.EISDIR, "Is a directory")}

    def read(path: str) -> bytes:
        e = errors.get(os.path.basename(path))
        if e is not None:
            raise e
        return real(path)

    monkeypatch.setattr(runner, "_read", read)
    code, items, _ = run_json(capsys, "--no-cache", ".")
    assert code == 1
    msgs = {os.path.basename(d["path"]): d["message"] for d in items}
    assert "Input/output error" in msgs["io.cu"] and "Is a directory" in msgs["big.cu"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_fifo_with_a_shader_name_is_not_read(project, capsys):
    """Reading a FIFO would block forever: the walk skips anything that is not a regular file."""
    write(project / "good.cu")
    os.mkfifo(project / "pipe.cu")
    code, items, _ = run_json(capsys, "--no-cache", ".")
    assert code == 1 and names(items) == ["good.cu"]


def test_missing_path_next_to_a_good_one(project, capsys):
    write(project / "good.cu")
    code, items, err = run_json(capsys, "--no-cache", "good.cu", "nope.cu")
    assert code == 2 and names(items) == ["good.cu"]  # a typo in a CI command must not pass
    assert "nope.cu: no such file or directory" in err
    code, out, err = run(capsys, "--no-cache", "nope.cu")  # nothing to lint at all: a usage error
    assert code == 2


def test_deep_directory_tree(project, capsys):
    deep = project
    for _ in range(200):
        deep = deep / "d"
    write(deep / "k.cu")
    code, items, _ = run_json(capsys, "--no-cache", ".")
    assert code == 1 and len(items) == 1


@pytest.mark.parametrize("pattern", ["a[]b", "[z-a].cu", "[]-]", "[\\]", "[[:alpha:]]", "x\\", "[", "**/", "!",
                                     "\\!", "/", "[!]", "?" * 300])
def test_hostile_gitignore_patterns(project, capsys, pattern):
    (project / ".git").mkdir()
    (project / ".gitignore").write_text(pattern + "\nignored.cu\n")
    write(project / "good.cu")
    write(project / "ignored.cu")
    code, items, err = run_json(capsys, "--no-cache", ".")
    assert code == 1, err
    assert "good.cu" in names(items) and "ignored.cu" not in names(items)


def test_gitignore_sets_are_literal():
    gi = GitIgnore("/x", ["g[o]od.cu", "b[!x]d.cu", "[[]y.cu"])
    assert gi.ignored("good.cu", False) and gi.ignored("bad.cu", False) and gi.ignored("[y.cu", False)
    assert gi.ignored("bxd.cu", False) is None


def test_binary_gitignore(project, capsys):
    (project / ".git").mkdir()
    (project / ".gitignore").write_bytes(b"\x00\xff\xfe[\n\x89PNG\r\n" + bytes(range(256)))
    write(project / "good.cu")
    code, items, _ = run_json(capsys, "--no-cache", ".")
    assert code == 1 and names(items) == ["good.cu"]


def test_discover_records_errors_and_goes_on(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x.cu").write_text(GOOD)
    (tmp_path / "b" / "y.cu").write_text(GOOD)
    real = os.scandir

    def scandir(path="."):
        if os.path.basename(os.fspath(path)) == "a":
            raise OSError(errno.EIO, "Input/output error")
        return real(path)

    monkeypatch.setattr(discovery.os, "scandir", scandir)
    errors: list[tuple[str, str]] = []
    found = list(discover([str(tmp_path), str(tmp_path / "missing")], (), errors))
    assert [os.path.basename(p) for p in found] == ["y.cu"]
    assert sorted(r for _, r in errors) == ["Input/output error", "no such file or directory"]
