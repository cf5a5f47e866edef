"""The lint command in-process through ``main(argv)``: exact output and exit codes."""

from __future__ import annotations

import io
import json
import os
import sys

import pytest

from shaderlint.cli import main
from shaderlint.runner import Progress

DIV = (  # SL201 reports a division that a loop repeats with changing operands
    "__global__ void scale(int* a, int n) {\n"
    "    for (int i = threadIdx.x; i < n; i += blockDim.x)\n"
    "        a[i] = a[i] / n;\n"
    "}\n"
)
CLEAN = (
    "__global__ void fill(int* a, int n) {\n"
    "    for (int i = threadIdx.x; i < n; i += blockDim.x)\n"
    "        a[i] = i / 4;\n"
    "}\n"
)
MSG = "integer division by 'n', which is not a compile-time constant (int / is emulated in many instructions)"


@pytest.fixture(autouse=True)
def project(tmp_path, monkeypatch):
    """An isolated project: an empty config stops the upward search, a private cache."""
    (tmp_path / "shaderlint.toml").write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / ".cache"))
    monkeypatch.delenv("NO_COLOR", raising=False)
    return tmp_path


def run(capsys, *argv: str, stdin: bytes | None = None, monkeypatch=None) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_text_output_and_exit_code(project, capsys):
    write(project / "k.cu", DIV)
    code, out, err = run(capsys, "--select", "SL201", "k.cu")
    assert code == 1
    lines = out.splitlines()
    assert lines[:3] == [
        f"k.cu:3:21: SL201 [warning] {MSG}",
        "    3 |         a[i] = a[i] / n;",
        "      |                     ^",
    ]
    assert all(line.startswith("      = ") for line in lines[3:-1])  # impact estimate, fix, related
    assert lines[-1] == "Found 1 problem (0 errors, 1 warnings, 0 info) in 1 files."
    assert err == ""


def test_quiet_clean_and_fail_on(project, capsys):
    write(project / "k.cu", DIV)
    write(project / "ok.cu", CLEAN)
    assert run(capsys, "-q", "--select", "SL201", "k.cu") == (1, f"k.cu:3:21: SL201 [warning] {MSG}\n", "")
    assert run(capsys, "--select", "SL201", "ok.cu") == (0, "No problems found in 1 files.\n", "")
    assert run(capsys, "-q", "--select", "SL201", "--fail-on", "error", "k.cu")[0] == 0
    assert run(capsys, "-q", "--select", "SL201", "--fail-on", "never", "k.cu")[0] == 0
    assert run(capsys, "-q", "--select", "SL201", "--fail-on", "info", "k.cu")[0] == 1


def test_directory_walk_is_sorted_and_deterministic_across_jobs(project, capsys, monkeypatch):
    import shaderlint.runner as runner

    monkeypatch.setattr(runner, "POOL_MIN_BYTES", 0)  # use worker processes even for small files
    for i in range(12):
        write(project / "src" / f"d{i:02d}" / f"k{i}.cu", DIV if i % 3 else CLEAN)
    write(project / "src" / "notes.txt", "not a shader")
    outs = {}
    for jobs in ("1", "2", "4"):
        code, out, _ = run(capsys, "--no-cache", "-j", jobs, "--format", "json", "--select", "SL201", "src")
        assert code == 1
        outs[jobs] = out
    assert outs["1"] == outs["2"] == outs["4"]
    paths = [d["path"] for d in json.loads(outs["1"])]
    assert paths == sorted(paths) and len(paths) == 8


def test_output_file(project, capsys):
    write(project / "k.cu", DIV)
    code, out, err = run(capsys, "--format", "json", "--select", "SL201", "-o", "report.json", "k.cu")
    assert (code, out, err) == (1, "", "")
    data = json.loads((project / "report.json").read_text())
    assert [(d["code"], d["line"], d["column"]) for d in data] == [("SL201", 3, 21)]


def test_output_file_that_cannot_be_written(project, capsys):
    write(project / "k.cu", DIV)
    code, out, err = run(capsys, "-o", str(project / "missing" / "dir" / "r.txt"), "k.cu")
    assert code == 2 and out == "" and "cannot write" in err


def test_stdin_filename(project, capsys, monkeypatch):
    code, out, _ = run(capsys, "-q", "--select", "SL201", "--stdin-filename", "kernels/scale.cu",
                       stdin=DIV.encode(), monkeypatch=monkeypatch)
    assert (code, out) == (1, f"kernels/scale.cu:3:21: SL201 [warning] {MSG}\n")
    assert not (project / "kernels").exists()  # nothing is read from or written to disk
    assert not (project / ".cache").exists()


def test_stdin_filename_picks_language_and_config(project, capsys, monkeypatch):
    write(project / "sub" / "shaderlint.toml", 'per-file-ignores = { "*.cu" = ["SL201"] }\n')
    code, out, _ = run(capsys, "-q", "--select", "SL201", "--stdin-filename", "sub/scale.cu",
                       stdin=DIV.encode(), monkeypatch=monkeypatch)
    assert (code, out) == (0, "")
    code, out, _ = run(capsys, "-q", "--select", "SL201", "--stdin-filename", "scale.comp",
                       stdin=b"#version 450\nlayout(local_size_x = 64) in;\nvoid main() { }\n", monkeypatch=monkeypatch)
    assert (code, out) == (0, "")


def test_statistics_text(project, capsys):
    write(project / "a.cu", DIV)
    write(project / "b.cu", DIV + DIV.replace("scale", "scale2"))
    code, out, _ = run(capsys, "--statistics", "--select", "SL201", ".")
    assert code == 1
    assert out == (
        "     3  SL201  variable-integer-division  [warning]\n"
        "     3  total\n"
    )
    code, out, _ = run(capsys, "--statistics", "--select", "SL201", "--fail-on", "never", "--no-cache",
                       "a.cu", "-o", "stats.txt")
    assert (code, out) == (0, "")
    assert (project / "stats.txt").read_text().startswith("     1  SL201")


def test_statistics_json_github_sarif(project, capsys):
    write(project / "a.cu", DIV)
    _, out, _ = run(capsys, "--statistics", "--format", "json", "--select", "SL201", "a.cu")
    assert json.loads(out) == [{"code": "SL201", "name": "variable-integer-division", "severity": "warning",
                                "count": 1, "fixable": 0}]
    _, out, _ = run(capsys, "--statistics", "--format", "github", "--select", "SL201", "a.cu")
    lines = out.splitlines()
    assert lines[0].startswith("::warning file=a.cu,line=3,")
    assert lines[1:] == ["     1  SL201  variable-integer-division  [warning]", "     1  total"]
    _, out, _ = run(capsys, "--statistics", "--format", "sarif", "--select", "SL201", "a.cu")
    log = json.loads(out)
    assert log["runs"][0]["properties"]["statistics"][0]["count"] == 1
    assert len(log["runs"][0]["results"]) == 1


def test_statistics_when_clean(project, capsys):
    write(project / "ok.cu", CLEAN)
    assert run(capsys, "--statistics", "ok.cu") == (0, "No problems found.\n", "")
    assert run(capsys, "--statistics", "--format", "json", "ok.cu") == (0, "[]\n", "")


def test_usage_errors_exit_2(project, capsys):
    write(project / "k.cu", DIV)
    code, _, err = run(capsys, "--select", "SL9999", "k.cu")
    assert code == 2 and "SL9999" in err
    code, _, err = run(capsys, "--select", "SL999", "k.cu")
    assert code == 2 and "matches no rule" in err
    code, _, err = run(capsys, "--target", "gtx480", "k.cu")
    assert code == 2 and "'gtx480' is not a known target" in err
    code, _, err = run(capsys, "-j", "-1", "k.cu")
    assert code == 2 and "--jobs" in err
    code, _, err = run(capsys, "--occupancy-threshold", "2", "k.cu")
    assert code == 2
    code, _, err = run(capsys, "does-not-exist.cu")
    assert code == 2 and "does-not-exist.cu: no such file or directory" in err


def test_target_alias_and_case(project, capsys):
    write(project / "k.cu", DIV)
    assert run(capsys, "-q", "--target", "SM_90", "--select", "SL201", "k.cu")[0] == 1


def test_unreadable_file_is_sl001_not_a_crash(project, capsys, monkeypatch):
    import shaderlint.runner as runner

    write(project / "secret.cu", DIV)
    write(project / "ok.cu", CLEAN)
    real = runner._read

    def deny(path):
        if path.endswith("secret.cu"):
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(runner, "_read", deny)
    code, out, _ = run(capsys, "-q", "secret.cu", "ok.cu")
    assert code == 1 and out == "secret.cu:1:1: SL001 [error] could not read file: Permission denied\n"


def test_cli_select_ignore_layer_over_config(project, capsys):
    (project / "shaderlint.toml").write_text('ignore = ["SL201"]\n')
    write(project / "k.cu", DIV)
    assert run(capsys, "-q", "k.cu") == (0, "", "")  # config ignores it
    assert run(capsys, "-q", "--select", "SL201", "k.cu")[0] == 1  # --select replaces the selection
    assert run(capsys, "-q", "--extend-select", "SL201", "k.cu")[0] == 1  # a later layer
    (project / "shaderlint.toml").write_text('select = ["SL2"]\n')
    assert run(capsys, "-q", "k.cu")[0] == 1
    assert run(capsys, "-q", "--ignore", "SL201", "k.cu") == (0, "", "")  # --ignore adds to the config


def test_github_format_via_cli(project, capsys):
    write(project / "k.cu", DIV)
    code, out, _ = run(capsys, "--format", "github", "--select", "SL201", "k.cu")
    assert code == 1
    assert out == (f"::warning file=k.cu,line=3,endLine=3,col=21,endColumn=22,"
                   f"title=SL201 variable-integer-division::{MSG}\n")


def test_progress_bar_only_on_a_tty_after_the_delay():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    quiet = Tty()
    p = Progress(10, stream=quiet, delay=60)
    for _ in range(10):
        p.advance()
    p.close()
    assert quiet.getvalue() == ""  # a fast run draws nothing

    shown = Tty()
    p = Progress(4, stream=shown, delay=0)
    for _ in range(4):
        p.advance()
    p.close()
    text = shown.getvalue()
    assert "4/4 files" in text and text.endswith("\r\x1b[K")

    pipe = io.StringIO()  # not a terminal
    p = Progress(4, stream=pipe, delay=0)
    p.advance(4)
    p.close()
    assert pipe.getvalue() == ""
