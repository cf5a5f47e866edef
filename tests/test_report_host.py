"""``report`` on kernels whose facts come from host code: where each fact comes from in the JSON, and
compilers given the pipeline the host builds (RADV with the host's specialization constants)."""

from __future__ import annotations

import json
import os
import shutil

import jsonschema
import pytest

from shaderlint.estimate.radv import compile_spirv, measure_radv
from shaderlint.estimate.spirv import reflect
from shaderlint.report import main as report_main
from tests.test_radv import needs_radv
from tests.test_report import SCHEMA

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.join(HERE, "host_projects", "vulkan_summaries")
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")


def _rows(capsys, *argv: str) -> dict[str, dict]:
    assert report_main([*argv, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    jsonschema.validate(rows, SCHEMA)
    return {r["path"].replace(os.sep, "/").rsplit("/", 2)[-2] + "/" + os.path.basename(r["path"]): r for r in rows}


def test_json_says_which_facts_come_from_host_code_and_where(tmp_path, capsys, monkeypatch) -> None:
    shutil.copytree(PROJECT, tmp_path / "p")
    monkeypatch.chdir(tmp_path / "p")
    rows = _rows(capsys, ".", "--compiler", "none")
    # blur.comp's 16x8 comes from the specialization constants of its pipeline's creation
    assert rows["shaders/blur.comp"]["threads_per_group"] == 128
    assert rows["shaders/blur.comp"]["host"] == [
        {"fact": "threads_per_group", "value": [16, 8, 1], "path": "src/app.cpp", "line": 30}]
    assert rows["shaders/reduce.comp"]["host"] == [
        {"fact": "threads_per_group", "value": [128, 1, 1], "path": "src/app.cpp", "line": 31},
        {"fact": "grid", "value": [512, 1, 1], "path": "src/app.cpp", "line": 44}]
    assert "host" not in rows["shaders/scan.comp"]  # its own literal size: nothing from the host


def test_json_host_facts_of_metal_dispatches(capsys, monkeypatch) -> None:
    monkeypatch.chdir(EXAMPLES)
    assert report_main(["host-metal", "--compiler", "none", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    jsonschema.validate(rows, SCHEMA)
    facts = sorted((h["fact"], str(h["value"])) for r in rows for h in r.get("host", []))
    assert ("dispatch", "threadgroups") in facts and ("dispatch", "threads") in facts
    assert ("threads_per_group", "[16, 16, 1]") in facts and ("grid", "[1920, 1088, 1]") in facts


def test_reflect_takes_the_applications_specialization() -> None:
    needs_radv()
    spirv, log = compile_spirv(open(os.path.join(PROJECT, "shaders", "blur.comp")).read())
    assert spirv is not None, log
    alone = reflect(spirv)  # no value and no default: one thread, as a driver given nothing
    assert alone.local_size == (1, 1, 1) and alone.local_size_unknown and alone.specialization == {}
    given = reflect(spirv, {0: 16, 1: 8})
    assert given.local_size == (16, 8, 1) and not given.local_size_unknown and given.specialization == {0: 16, 1: 8}
    partly = reflect(spirv, {1: 8})  # the constants the host does not set keep their defaults
    assert partly.local_size == (1, 8, 1) and partly.specialization == {1: 8}


def test_radv_measures_the_pipeline_the_host_builds(tmp_path, capsys, monkeypatch) -> None:
    needs_radv()
    shutil.copytree(PROJECT, tmp_path / "p")
    monkeypatch.chdir(tmp_path / "p")
    rows = _rows(capsys, ".", "--compiler", "radv", "--target", "rdna2")
    blur, reduce_ = rows["shaders/blur.comp"], rows["shaders/reduce.comp"]
    assert blur["registers_source"] == "radv" and blur["threads_per_group"] == 128  # not the 1 of no values
    assert blur["host"][0]["value"] == [16, 8, 1]
    with open("shaders/reduce.comp") as fh:
        direct = measure_radv(fh.read(), "navi21", subgroup_size=32, specialization=((0, 128), (1, 1)))
    assert direct.ok and direct.local_size == (128, 1, 1)
    # reduce.comp's shared array is gl_WorkGroupSize.x floats: 512 B only with the host's 128 threads
    assert (reduce_["registers"], reduce_["threadgroup_memory_bytes"]) == (direct.vgprs, 512)
    assert report_main([".", "--compiler", "radv", "--target", "rdna2", "--notes"]) == 0
    text = capsys.readouterr().out
    assert "compiled with the specialization constants the host's pipeline sets: 0 = 16, 1 = 8" in text
    assert "host: threads per group 16×8 from src/app.cpp:30" in text


def _models(root) -> dict:
    from pathlib import Path

    from shaderlint.config import SettingsResolver
    from shaderlint.engine import predefined_for
    from shaderlint.host.index import HostIndex, apply
    from shaderlint.languages import FRONT_ENDS
    from shaderlint.model.build import build_model
    from shaderlint.model.source import Source

    shaders = ["shaders/blur.comp", "shaders/reduce.comp", "shaders/scan.comp"]
    resolver = SettingsResolver(None, {})
    index = HostIndex.build(["."], shaders, resolver.for_path)
    out = {}
    for path in shaders:
        model = build_model(FRONT_ENDS["glsl"].parse(Source(path, Path(path).read_bytes()),
                                                     predefined=predefined_for(resolver.for_path(path), "glsl", None)))
        apply(model, index.facts_for(path))
        out[Path(path).stem] = model
    return out


def test_lint_and_editor_compiles_get_the_hosts_specialization(tmp_path, monkeypatch) -> None:
    # Measured impacts (lint with `compiler`) and the language server's background compiles measure
    # the pipeline the host builds, as report does.
    from types import SimpleNamespace

    from shaderlint.estimate import measured, radv
    from shaderlint.estimate.targets import get_target
    from shaderlint.server.compiled import CompiledFigures

    shutil.copytree(PROJECT, tmp_path / "p")
    monkeypatch.chdir(tmp_path / "p")
    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / ".cache"))
    models = _models(tmp_path / "p")
    assert getattr(models["blur"], "pipeline_specialization", None) == ((0, 16), (1, 8))
    assert getattr(models["reduce"], "pipeline_specialization", None) == ((0, 128), (1, 1))
    assert getattr(models["scan"], "pipeline_specialization", None) is None  # no host pipeline traced
    seen = []

    def fake(text, family, **kw):
        seen.append(kw.get("specialization"))
        return radv.RadvResult(family=family, error="not measured here")

    monkeypatch.setattr(radv, "measure_radv", fake)
    monkeypatch.setattr(measured, "exact_compiler", lambda *a: "radv")
    monkeypatch.setattr(measured, "fixed_text", lambda model, fix: "changed")
    target = get_target("rdna2")
    fix = SimpleNamespace(edits=[object()])
    settings = SimpleNamespace(defines=(), include_dirs=())
    f = next(x for x in models["blur"].functions if x.name == "main")
    assert measured.measured_impact(models["blur"], settings, target, f, fix) is None
    assert seen == [((0, 16), (1, 8))] * 2  # as written and fixed
    doc = SimpleNamespace(data=b"void main() {}", uri="file:///b.comp", version=1, path="shaders/blur.comp",
                          result=SimpleNamespace(model=models["blur"]))
    job = CompiledFigures(lambda uri: 1, workers=0)._job(doc, settings, target, "radv")
    assert job.specialization == ((0, 16), (1, 8)) and ((0, 16), (1, 8)) in job.key
    CompiledFigures._compile(job)
    assert seen[-1] == ((0, 16), (1, 8))
