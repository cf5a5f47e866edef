"""Baselines: line shifts keep findings baselined, new findings are reported."""

from __future__ import annotations

import json
import os

import pytest

from shaderlint.config import Settings
from shaderlint.baseline import BaselineError, load_baseline, write_baseline
from shaderlint.cli import main
from shaderlint.engine import lint_source

KERNEL = (
    "__global__ void pack(int* a, int w, int n) {\n"
    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {\n"
    "        a[i] = a[i] / w;\n"
    "    }\n"
    "}\n"
)


@pytest.fixture(autouse=True)
def project(tmp_path, monkeypatch):
    (tmp_path / "shaderlint.toml").write_text('select = ["SL201"]\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / ".cache"))
    return tmp_path


def run(capsys, *argv):
    code = main(["--format", "json", *argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else None), err


def test_write_baseline_file_format(project, capsys):
    (project / "src").mkdir()
    (project / "src" / "k.cu").write_text(KERNEL + KERNEL.replace("pack", "pack2"))
    (project / "ci").mkdir()
    code, out, err = run(capsys, "--write-baseline", "ci/baseline.json", "src")
    assert (code, out) == (0, None) and "wrote 2 findings to baseline ci/baseline.json" in err
    doc = json.loads((project / "ci" / "baseline.json").read_text())
    assert doc["shaderlint_baseline"] == 1
    entries = doc["findings"]
    assert [(e["code"], e["path"], e["kernel"], e["count"]) for e in entries] == [
        ("SL201", "../src/k.cu", "pack", 1), ("SL201", "../src/k.cu", "pack2", 1)]
    assert all(len(e["fingerprint"]) == 16 for e in entries)


def test_line_shift_stays_baselined_and_new_findings_are_reported(project, capsys):
    src = project / "k.cu"
    src.write_text(KERNEL)
    assert run(capsys, "--write-baseline", "baseline.json", "k.cu")[0] == 0
    assert run(capsys, "--baseline", "baseline.json", "k.cu")[:2] == (0, [])

    # Shift every line down, re-indent: still the same finding.
    src.write_text("// header\n#include <cuda_runtime.h>\n\n" + KERNEL.replace("        a[i]", "\t\ta[i]"))
    assert run(capsys, "--baseline", "baseline.json", "k.cu")[:2] == (0, [])
    code, data, _ = run(capsys, "k.cu")  # without the baseline it is still there, on line 6
    assert code == 1 and [d["line"] for d in data] == [6]

    # A new division in the same kernel is reported; the old one stays quiet.
    src.write_text("// header\n" + KERNEL.replace("a[i] / w;", "a[i] / w;\n        a[0] += i % w;"))
    code, data, _ = run(capsys, "--baseline", "baseline.json", "k.cu")
    assert code == 1 and [(d["line"], d["message"].split(",")[0]) for d in data] == [
        (5, "integer modulo by 'w'")]


def test_count_limits_how_many_copies_are_absorbed(project, capsys):
    src = project / "k.cu"
    src.write_text(KERNEL)
    run(capsys, "--write-baseline", "b.json", "k.cu")
    # The same flagged line twice in the same kernel: one is new.
    src.write_text(KERNEL.replace("a[i] / w;", "a[i] / w;\n        a[i] = a[i] / w;"))
    code, data, _ = run(capsys, "--baseline", "b.json", "k.cu")
    assert code == 1 and len(data) == 1


def test_matching_uses_code_path_and_kernel(project, capsys):
    (project / "a.cu").write_text(KERNEL)
    run(capsys, "--write-baseline", "b.json", "a.cu")
    (project / "b.cu").write_text(KERNEL)  # same text, other file
    (project / "a.cu").write_text(KERNEL.replace("pack", "unpack"))  # same line, other kernel
    code, data, _ = run(capsys, "--baseline", "b.json", "a.cu", "b.cu")
    assert code == 1 and [(d["path"], d["kernel"]) for d in data] == [("a.cu", "unpack"), ("b.cu", "pack")]


def test_baseline_paths_are_relative_to_the_baseline_file(project, capsys, monkeypatch):
    (project / "src").mkdir()
    (project / "src" / "k.cu").write_text(KERNEL)
    run(capsys, "--write-baseline", "baseline.json", "src/k.cu")
    monkeypatch.chdir(project / "src")  # run from elsewhere, naming the file differently
    code, data, _ = run(capsys, "--baseline", "../baseline.json", "k.cu")
    assert (code, data) == (0, [])


def test_statistics_and_text_respect_the_baseline(project, capsys):
    (project / "k.cu").write_text(KERNEL)
    run(capsys, "--write-baseline", "b.json", "k.cu")
    assert main(["--baseline", "b.json", "--statistics", "k.cu"]) == 0
    assert capsys.readouterr().out == "No problems found.\n"


def test_api_round_trip(project):
    r = lint_source(str(project / "k.cu"), KERNEL.encode(), Settings(extend_select=("SL201",)))
    assert write_baseline(str(project / "b.json"), [r]) == 1
    kept, dropped = load_baseline(str(project / "b.json")).filter([r])
    assert dropped == 1 and kept[0].diagnostics == [] and r.diagnostics  # the input is not modified


@pytest.mark.parametrize("text,message", [
    (None, "cannot read baseline"),
    ("{", "invalid JSON"),
    ("[]", "no \"findings\" list"),
    ('{"findings": [{"code": "SL201"}]}', "finding #1 needs"),
    ('{"shaderlint_baseline": 99, "findings": []}', "format 99 is not supported"),
])
def test_bad_baselines_exit_2(project, capsys, text, message):
    (project / "k.cu").write_text(KERNEL)
    if text is not None:
        (project / "b.json").write_text(text)
    with pytest.raises(BaselineError, match=message.replace("(", r"\(")):
        load_baseline(str(project / "b.json"))
    code, out, err = run(capsys, "--baseline", "b.json", "k.cu")
    assert code == 2 and out is None and message in err


def test_unwritable_baseline_exit_2(project, capsys):
    (project / "k.cu").write_text(KERNEL)
    code, _, err = run(capsys, "--write-baseline", os.path.join("no", "such", "dir.json"), "k.cu")
    assert code == 2 and "cannot write baseline" in err
