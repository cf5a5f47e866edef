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
    (tmp_path / "shaderlint.toml").write_text('extend-select = ["SL201"]\n')  # opt-in; the tests read it
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
    assert lines[-1] == "Found 1 problem (1 warning) in 1 file."
    assert err == ""


def test_quiet_clean_and_fail_on(project, capsys):
    write(project / "k.cu", DIV)
    write(project / "ok.cu", CLEAN)
    assert run(capsys, "-q", "--select", "SL201", "k.cu") == (1, f"k.cu:3:21: SL201 [warning] {MSG}\n", "")
    assert run(capsys, "--select", "SL201", "ok.cu") == (0, "No problems found in 1 file.\n", "")
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
    assert run(capsys, "-q", "k.cu") == (0, "", "")  # a prefix does not enable an opt-in rule (SL201)
    (project / "shaderlint.toml").write_text('select = ["SL2", "SL201"]\n')
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


# ---- paths that cannot be linted fail the run (issue 19 item 1, issue 17 item 6) -------------------
def test_a_missing_path_fails_the_run_after_linting_the_others(project, capsys):
    write(project / "ok.cu", CLEAN)
    code, out, err = run(capsys, "nope.cu", "ok.cu")
    assert code == 2
    assert out == "No problems found in 1 file.\n"  # the others are still linted and reported
    assert err == "shaderlint: nope.cu: no such file or directory\n"
    # Not a finding: nothing that filters findings makes it pass.
    for flags in (["--exit-zero"], ["--fail-on", "never"], ["--format", "json"]):
        assert run(capsys, *flags, "nope.cu", "ok.cu")[0] == 2
    code, out, _ = run(capsys, "--format", "sarif", "nope.cu", "ok.cu")
    assert code == 2 and json.loads(out)["runs"][0]["invocations"][0]["executionSuccessful"] is False


def test_check_is_the_default_command(project, capsys):
    write(project / "src" / "k.cu", DIV)
    code, out, err = run(capsys, "check", "-q", "--select", "SL201", "src/")
    assert (code, out, err) == (1, f"src/k.cu:3:21: SL201 [warning] {MSG}\n", "")
    assert run(capsys, "check", "-q", "--select", "SL201")[:2] == (1, f"src/k.cu:3:21: SL201 [warning] {MSG}\n")
    code, _, err = run(capsys, "check", "nope/")
    assert code == 2 and err == "shaderlint: nope/: no such file or directory\n"


def test_special_files_named_on_the_command_line_exit_2_without_being_opened(project, capsys):
    write(project / "ok.cu", CLEAN)
    os.mkfifo(project / "pipe.comp")  # opening it would block the run forever
    os.symlink("/dev/zero", project / "y.metal")  # reading it would never end
    code, out, err = run(capsys, "pipe.comp", "y.metal", "ok.cu")
    assert code == 2 and out == "No problems found in 1 file.\n"
    assert err.splitlines() == [
        "shaderlint: pipe.comp: not a file or directory: it is a FIFO (named pipe); not linted",
        "shaderlint: y.metal: not a file or directory: it is a character device; not linted",
    ]
    # Found by walking a directory, they are skipped like any other non-file.
    assert run(capsys, "-q", ".") == (0, "", "")


# ---- --force-exclude (issue 19 item 2) --------------------------------------------------------------
def test_force_exclude_applies_exclude_and_gitignore_to_named_files(project, capsys, monkeypatch):
    (project / ".git").mkdir()
    (project / "shaderlint.toml").write_text('exclude = ["third_party/**"]\n')
    write(project / ".gitignore", "generated/\n")
    for p in ("third_party/v.cu", "generated/g.cu", "src/k.cu"):
        write(project / p, DIV)
    named = ("third_party/v.cu", "generated/g.cu", "src/k.cu")
    code, out, _ = run(capsys, "-q", "--select", "SL201", *named)
    assert code == 1 and len(out.splitlines()) == 3  # named files are linted whatever the exclusions
    code, out, err = run(capsys, "-q", "--select", "SL201", "--force-exclude", *named)
    assert (code, out, err) == (1, f"src/k.cu:3:21: SL201 [warning] {MSG}\n", "")
    code, out, err = run(capsys, "--force-exclude", "third_party/v.cu", "generated/g.cu")
    assert (code, out) == (0, "No problems found in 0 files.\n")
    assert err == "shaderlint: warning: no shader files found under the given paths\n"
    # --extend-exclude adds globs from the command line; --force-exclude applies them to named files.
    code, out, _ = run(capsys, "-q", "--select", "SL201", "--extend-exclude", "src", "--force-exclude", "src/k.cu")
    assert (code, out) == (0, "")
    assert run(capsys, "--extend-exclude", "src/**", "--show-files", ".")[:2] == (0, "")
    # Standard input under an excluded name passes through untouched with --fix.
    code, out, _ = run(capsys, "--force-exclude", "--fix", "--stdin-filename", "third_party/v.cu",
                       stdin=DIV.encode(), monkeypatch=monkeypatch)
    assert (code, out) == (0, DIV)


# ---- nothing linted (issue 19 item 4) ---------------------------------------------------------------
def test_named_files_of_unknown_language_are_warned_about(project, capsys, monkeypatch):
    write(project / "k.h", DIV)
    write(project / "tool.py", "print(1)\n")
    code, out, err = run(capsys, "k.h", "tool.py")
    assert (code, out) == (0, "No problems found in 0 files.\n")
    assert err.splitlines() == [
        'shaderlint: warning: k.h: not linted: no language for .h files (map it in the configuration, '
        'e.g. extension = { ".h" = "cuda" })',
        'shaderlint: warning: tool.py: not linted: no language for .py files (map it in the configuration, '
        'e.g. extension = { ".py" = "cuda" })',
    ]
    code, _, err = run(capsys, "--stdin-filename", "foo.txt", stdin=DIV.encode(), monkeypatch=monkeypatch)
    assert code == 0 and "foo.txt: not linted: no language for .txt files" in err
    code, out, err = run(capsys, "empty_dir_that_exists" if (project / "sub").mkdir() else "sub")
    assert (code, out) == (0, "No problems found in 0 files.\n")
    assert err == "shaderlint: warning: no shader files found under the given paths\n"


def test_extension_setting_maps_extensions_to_languages(project, capsys, monkeypatch):
    (project / "shaderlint.toml").write_text('extension = { ".h" = "cuda", "fs" = "glsl" }\n')
    write(project / "inc" / "k.h", DIV)
    write(project / "inc" / "blur.fs", "#version 450\nlayout(local_size_x = 13) in;\nvoid main() { }\n")
    code, out, err = run(capsys, "-q", "--select", "SL201,SL501", "inc")  # discovery walks them
    assert code == 1 and err == ""
    assert [line.split(": ")[1].split()[0] for line in out.splitlines()] == ["SL501", "SL201"]
    assert out.splitlines()[0].startswith("inc/blur.fs:2:")
    code, out, _ = run(capsys, "-q", "--select", "SL201", "--stdin-filename", "x.h", stdin=DIV.encode(),
                       monkeypatch=monkeypatch)
    assert (code, out) == (1, f"x.h:3:21: SL201 [warning] {MSG}\n")
    code, _, err = run(capsys, "--config", 'extension = { ".h" = "hlsl" }', "inc")
    assert code == 2 and "'.h' maps to 'hlsl'; languages are metal, cuda, glsl" in err


# ---- ./ prefixes and git apply (issue 19 item 5) ------------------------------------------------------
METAL_FIXABLE = (
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void k(device float* a [[buffer(0)]], uint tid [[thread_position_in_threadgroup]]) {\n"
    "    a[tid] = 1.0f; // shaderlint: ignore[SL201]\n"
    "}\n"
)


def test_paths_have_no_dot_slash_prefix_and_the_diff_applies_with_git(project, capsys):
    import shutil
    import subprocess

    write(project / "x.cu", DIV)
    write(project / "m.metal", METAL_FIXABLE)
    (project / "shaderlint.toml").write_text('extend-select = ["SL301"]\n')  # SL301 is opt-in
    _, out, _ = run(capsys, "--format", "json", "--select", "SL201")
    assert [d["path"] for d in json.loads(out)] == ["x.cu"]
    _, out, _ = run(capsys, "-q", "--select", "SL201", "./x.cu", ".")
    assert out == f"x.cu:3:21: SL201 [warning] {MSG}\n"  # and once: ./x.cu and x.cu are one file
    code, diff, _ = run(capsys, "--diff", "--unsafe-fixes", "--show-unused-ignores", str(project / "m.metal"))
    assert code == 1 and diff.startswith("--- a/m.metal\n+++ b/m.metal\n")
    code, diff, _ = run(capsys, "--diff", "--unsafe-fixes", "--show-unused-ignores")
    assert code == 1 and diff.startswith("--- a/m.metal\n+++ b/m.metal\n")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    (project / "d.patch").write_text(diff)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    check = subprocess.run(["git", "apply", "--check", "d.patch"], cwd=project, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    subprocess.run(["git", "apply", "d.patch"], cwd=project, check=True)
    assert "ushort tid" in (project / "m.metal").read_text()


# ---- fixable marks (issue 19 item 6) ------------------------------------------------------------------
def test_fixable_findings_are_marked_and_counted_as_fix_would_fix(project, capsys):
    write(project / "m.metal", METAL_FIXABLE)
    (project / "shaderlint.toml").write_text('extend-select = ["SL201", "SL301"]\n')  # both opt-in
    code, out, _ = run(capsys, "--show-unused-ignores", "--output-format", "concise", "m.metal")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("m.metal:3:46: SL301 [warning] 'tid'")  # unsafe fix: no mark
    assert lines[1].startswith("m.metal:4:23: SL002 [info] [*] unused suppression")  # safe fix
    assert lines[2:] == ["Found 2 problems (1 warning, 1 info) in 1 file.",
                         "[*] 1 fixable with --fix (1 more with --unsafe-fixes)."]
    _, out, _ = run(capsys, "--show-unused-ignores", "--unsafe-fixes", "--format", "concise", "m.metal")
    assert out.splitlines()[0].startswith("m.metal:3:46: SL301 [warning] [*] 'tid'")
    assert out.splitlines()[-1] == "[*] 2 fixable with --fix."
    _, out, _ = run(capsys, "--select", "SL301", "--format", "concise", "m.metal")
    assert out.splitlines()[-1] == "No fixes available with --fix (1 with --unsafe-fixes)."
    _, out, _ = run(capsys, "--show-unused-ignores", "--statistics", "--format", "json", "m.metal")
    assert {r["code"]: r["fixable"] for r in json.loads(out)} == {"SL002": 1, "SL301": 0}
    _, out, _ = run(capsys, "--show-unused-ignores", "--statistics", "--unsafe-fixes", "--format", "json", "m.metal")
    assert {r["code"]: r["fixable"] for r in json.loads(out)} == {"SL002": 1, "SL301": 1}


def test_exit_non_zero_on_fix_and_exit_zero(project, capsys):
    write(project / "m.metal", METAL_FIXABLE)
    code, out, _ = run(capsys, "--show-unused-ignores", "--ignore", "SL301", "--fix", "m.metal")
    assert (code, out) == (0, "No problems found in 1 file.\n")  # fixed: nothing remains
    assert "ignore" not in (project / "m.metal").read_text()
    write(project / "m.metal", METAL_FIXABLE)
    code, _, _ = run(capsys, "--show-unused-ignores", "--ignore", "SL301", "--fix", "--exit-non-zero-on-fix",
                     "m.metal")
    assert code == 1
    assert run(capsys, "--show-unused-ignores", "--ignore", "SL301", "--fix", "--exit-non-zero-on-fix",
               "m.metal")[0] == 0  # nothing left to fix
    write(project / "k.cu", DIV)
    assert run(capsys, "-q", "--exit-zero", "--select", "SL201", "k.cu") == (0, f"k.cu:3:21: SL201 [warning] {MSG}\n", "")


# ---- rule pages (issue 19 item 9) ---------------------------------------------------------------------
def test_rule_prints_the_page_without_the_generated_comment(capsys):
    from shaderlint.rules.registry import get_rule

    code, out, _ = run(capsys, "rule", "sl201")
    page = get_rule("SL201").markdown()
    assert code == 0 and "Generated" not in out and "<!--" not in out
    assert out.startswith("# SL201 variable-integer-division\n\n| code | name |")
    assert out.splitlines() == [line for line in page.splitlines() if not line.startswith("<!--")][:1] \
        + page.splitlines()[3:]
    assert run(capsys, "rule", "variable-integer-division")[1] == out
    assert run(capsys, "rule")[0] == 2
    assert run(capsys, "rule", "SL999")[0] == 2


def test_hover_shows_the_summary_why_and_fix_with_a_link():
    from shaderlint.rules.registry import RULES, get_rule
    from shaderlint.server.hover import rule_hover

    text = rule_hover(get_rule("SL201"))
    sections = get_rule("SL201").sections()
    assert text.startswith("### SL201 variable-integer-division\n\nwarning — integer division")
    assert sections["Why is this bad?"] in text and sections["Use instead"] in text
    assert sections["Evidence"] not in text and "Generated" not in text and "| code |" not in text
    assert text.endswith("[Full documentation of SL201](https://github.com/shaderlint/shaderlint/blob/main/rules/SL201.md)")
    assert max(len(rule_hover(r).splitlines()) for r in RULES) < 40  # the pages are 50 to 130 lines


# ---- text output and help (issue 19 item 10) ----------------------------------------------------------
def test_rules_rejects_arguments(capsys):
    code, out, err = run(capsys, "rules", "SL201")
    assert (code, out) == (2, "") and "shaderlint rule SL201" in err
    code, out, _ = run(capsys, "rules")
    assert code == 0 and out.splitlines()[0].startswith("SL001  parse-error")


def test_help_names_the_subcommands_and_explains_every_option(capsys):
    from shaderlint.cli import lint_parser
    from shaderlint.report import parser as report_parser

    code, help_text, _ = run(capsys, "--help")
    assert code == 0 and help_text == lint_parser().format_help()
    assert help_text.startswith("usage: shaderlint [check] [OPTIONS] [PATH ...]\n       shaderlint report")
    for sub in ("check", "report", "rule CODE", "rules", "lsp"):
        assert f"\n  {sub} " in help_text
    assert [a.option_strings or a.dest for a in lint_parser()._actions if not a.help] == []
    assert [a.option_strings or a.dest for a in report_parser()._actions if not a.help] == []
    assert run(capsys, "check", "--help")[1] == help_text


def test_control_characters_in_source_lines_are_shown_not_sent(project, capsys):
    write(project / "k.cu", DIV.replace("a[i] / n;", "a[i] / n; /* \x1b[2J\x07 */"))
    code, out, _ = run(capsys, "--select", "SL201", "k.cu")
    assert code == 1 and "\x1b" not in out and "\x07" not in out
    assert "    3 |         a[i] = a[i] / n; /* ␛[2J␇ */" in out.splitlines()


# ---- what ruff users reach for (issue 19 item 12) -------------------------------------------------
def test_show_files_and_show_settings(project, capsys):
    (project / "shaderlint.toml").write_text('target = "sm_90"\nextend-select = ["SL201"]\nignore = ["SL205"]\n')
    write(project / "b" / "k.cu", DIV)
    write(project / "a.comp", "#version 450\nvoid main() { }\n")
    write(project / "notes.txt", "")
    assert run(capsys, "--show-files") == (0, "a.comp\nb/k.cu\n", "")
    code, out, _ = run(capsys, "--show-settings", "b/k.cu")
    assert code == 0
    lines = out.splitlines()
    assert lines[:3] == ["# settings for b/k.cu", f'config-file = "{project / "shaderlint.toml"}"', 'language = "cuda"']
    assert 'ignore = ["SL205"]' in lines and 'target = "sm_90"' in lines and "# active target: sm_90" in lines
    assert "SL201" in lines[-1] and "SL205" not in lines[-1]
    code, out, _ = run(capsys, "--show-settings", "--config", "target = 'sm_75'", "b/k.cu")
    assert 'target = "sm_75"' in out.splitlines() and 'compiler = "none"' in out.splitlines()
    code, out, _ = run(capsys, "--show-settings", "--compiler", "auto", "b/k.cu")
    assert 'compiler = "auto"' in out.splitlines()


def test_config_key_value_overrides_every_file(project, capsys):
    write(project / "k.cu", DIV)
    assert run(capsys, "-q", "--config", 'ignore = ["SL201"]', "--select", "SL201", "k.cu")[0] == 1  # CLI wins
    assert run(capsys, "-q", "--config", 'ignore = ["SL201"]', "k.cu") == (0, "", "")
    assert run(capsys, "-q", "--config", "select = ['SL201']", "--config", "occupancy-threshold = 0.1",
               "k.cu")[0] == 1
    code, _, err = run(capsys, "--config", "nonsense", "k.cu")
    assert code == 2 and "'nonsense' is neither a file nor a `key = value` setting" in err
    code, _, err = run(capsys, "--config", "selec = ['SL201']", "k.cu")
    assert code == 2 and "unknown key 'selec'" in err and "did you mean 'select'" in err


def test_dash_reads_stdin(project, capsys, monkeypatch):
    code, out, _ = run(capsys, "-q", "--select", "SL201", "--stdin-filename", "s.cu", "-", stdin=DIV.encode(),
                       monkeypatch=monkeypatch)
    assert (code, out) == (1, f"s.cu:3:21: SL201 [warning] {MSG}\n")
    code, _, err = run(capsys, "-", stdin=DIV.encode(), monkeypatch=monkeypatch)
    assert code == 2 and "needs --stdin-filename" in err


def test_output_format_concise_and_format_alias(project, capsys):
    write(project / "k.cu", DIV)
    concise = run(capsys, "--output-format", "concise", "--select", "SL201", "k.cu")
    assert concise == (1, f"k.cu:3:21: SL201 [warning] {MSG}\nFound 1 problem (1 warning) in 1 file.\n", "")
    assert run(capsys, "--format", "concise", "--select", "SL201", "k.cu") == concise
    assert json.loads(run(capsys, "--output-format", "json", "--select", "SL201", "k.cu")[1])[0]["code"] == "SL201"


# ---- --add-ignore (issue 19 item 12) ------------------------------------------------------------------
def test_add_ignore_suppresses_every_finding_and_is_idempotent(project, capsys):
    src = (
        "#define SCALE(a, n) \\\n"
        "    ((a) / (n))\n"
        "__global__ void scale(int* a, int n, int m) {\n"
        "    for (int i = threadIdx.x; i < n; i += blockDim.x) {\n"
        "        if (i < n) a[i] = a[i] / n; // divide\n"
        "        if (i < m) a[i] = a[i] % m;\n"
        "        // shaderlint: ignore[SL101]\n"
        "        a[i] = a[i] / m;\n"
        "    }\n"
        "}\n"
    )
    write(project / "k.cu", src)
    os.chmod(project / "k.cu", 0o640)
    code, out, _ = run(capsys, "-q", "--select", "SL201", "k.cu")
    assert code == 1 and [line.split(":")[1] for line in out.splitlines()] == ["5", "6", "8"]  # not in the macro
    code, out, err = run(capsys, "--select", "SL201", "--add-ignore", "k.cu")
    assert (code, out) == (0, "")
    assert err == "shaderlint: added suppressions for 3 findings in 1 file\n"
    assert (project / "k.cu").read_text() == src.replace(
        "a[i] / n; // divide\n", "a[i] / n; // divide shaderlint: ignore[SL201]\n").replace(
        "a[i] % m;\n", "a[i] % m;  // shaderlint: ignore[SL201]\n").replace(
        "ignore[SL101]\n", "ignore[SL101, SL201]\n")
    assert os.stat(project / "k.cu").st_mode & 0o777 == 0o640
    assert run(capsys, "-q", "--select", "SL201", "--show-unused-ignores", "k.cu") == (0, "", "")
    before = (project / "k.cu").read_text()
    code, _, err = run(capsys, "--select", "SL201", "--add-ignore", "k.cu")
    assert code == 0 and err == "shaderlint: added suppressions for 0 findings in 0 files\n"
    assert (project / "k.cu").read_text() == before
    assert run(capsys, "--add-ignore", "--fix", "k.cu")[0] == 2


def test_add_ignore_on_a_continued_line_uses_a_block_comment(tmp_path):
    from shaderlint.add_ignore import ignore_edits
    from shaderlint.diagnostics import Diagnostic, Severity
    from shaderlint.fixes import apply_edits
    from shaderlint.model.source import Source

    data = b"#define D(a, n) \\\n    ((a) / (n)) \\\n    + 1\n"
    src = Source("m.cu", data)
    d = Diagnostic(path="m.cu", code="SL201", name="variable-integer-division", severity=Severity.WARNING,
                   message="m", start=24, end=25, line=2, column=10, end_line=2, end_column=11)
    edits, n = ignore_edits(src, [d])
    assert n == 1
    assert apply_edits(data, edits) == b"#define D(a, n) \\\n    ((a) / (n)) /* shaderlint: ignore[SL201] */ \\\n    + 1\n"


def test_report_fails_for_a_path_it_could_not_read(project, capsys):
    write(project / "k.cu", DIV)
    code, out, err = run(capsys, "report", "--format", "json", "nope.cu", "./k.cu")
    assert code == 2 and err == "shaderlint: nope.cu: no such file or directory\n"
    assert [r["path"] for r in json.loads(out)] == ["k.cu"]


def test_unreadable_code_is_counted_not_listed_unless_sl001_is_selected(project, capsys):
    """SL001 is opt-in: what the front end cannot read is mostly valid code it lacks the context for
    (a macro from a header), so by default the summary counts it -- from a cold run and from the
    cache alike -- and `--extend-select SL001` lists it."""
    write(project / "m.cu", "__global__ void cut(float* a) { a[0] = 1.0f +; }\n" + DIV)
    footer = "Not analysed: 1 region in 1 file that shaderlint could not read (`--extend-select SL001` lists them)."
    for _ in range(2):  # cold, then from the cache
        code, out, _ = run(capsys, "m.cu")
        assert code == 1 and "SL001 [" not in out and "SL201" in out
        assert out.splitlines()[-1] == footer
    code, out, _ = run(capsys, "--extend-select", "SL001", "m.cu")
    assert "SL001 [error] could not parse" in out and "Not analysed" not in out
    write(project / "ok.cu", CLEAN)
    assert run(capsys, "ok.cu") == (0, "No problems found in 1 file.\n", "")
