"""The result cache: exact round trip, hits, invalidation, location, concurrency, --no-cache."""

from __future__ import annotations

import json
import multiprocessing
import os
import threading

import pytest

import shaderlint.runner as runner
from shaderlint.cache import (Cache, cache_dir_for, diagnostic_from_json, diagnostic_to_json, entry_key)
from shaderlint.cli import main
from shaderlint.config import Settings
from shaderlint.diagnostics import (Applicability, Diagnostic, Edit, Fix, Impact, RelatedLocation, Severity)
from shaderlint.engine import lint_source
from shaderlint.suppression import Suppression

KERNEL = (
    "__global__ void k(int* a, int w, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    float t[8];\n"
    "    t[i & 7] = 1.0f;  // shaderlint: ignore[SL101]\n"
    "    for (int j = i; j < n; j += 32) a[j] = a[j] / w + (int)t[0];\n"
    "}\n"
)


@pytest.fixture(autouse=True)
def project(tmp_path, monkeypatch):
    (tmp_path / "shaderlint.toml").write_text('extend-select = ["SL201"]\n')  # opt-in; the tests read it
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / ".cache"))
    return tmp_path


@pytest.fixture
def counted(monkeypatch):
    """Counts real lint runs in this process (use with -j 1)."""
    calls: list[str] = []
    real = runner.lint_source

    def spy(path, data, settings=None, *a, **kw):
        calls.append(path)
        return real(path, data, settings, *a, **kw)

    monkeypatch.setattr(runner, "lint_source", spy)
    return calls


def full_diagnostic(path: str) -> Diagnostic:
    return Diagnostic(
        path=path, code="SL202", name="float-literal-in-half-math", severity=Severity.WARNING,
        message="half × 0.5 — promotes to float", start=3, end=6, line=1, column=4, end_line=2, end_column=1,
        kernel="k", related=(RelatedLocation(path, 2, 3, "here", 9, 10),),
        fix=Fix("Use 0.5h", Applicability.UNSAFE, (Edit(3, 6, "0.5h"), Edit(9, 9, ""))),
        impact=Impact("apple-m1", registers=-1, stack_bytes=None, occupancy_before=0.5, occupancy_after=0.625),
        fingerprint="abcdef0123456789", fix_ranges=((1, 4, 1, 7), (2, 3, 2, 3)), extra={"note": [1, "x"]},
    )


def test_diagnostics_round_trip_exactly(tmp_path):
    d = full_diagnostic("a.metal")
    assert diagnostic_from_json("a.metal", json.loads(json.dumps(diagnostic_to_json(d)))) == d
    cache = Cache(str(tmp_path / "c"))
    sup = Suppression(1, 2, False, ("SL101",), 3, {"SL101"})
    assert cache.put("ab" * 32, [d], [sup], "metal")
    diags, sups, language, _ = cache.get("ab" * 32, "a.metal")
    assert diags == [d] and diags[0].extra == d.extra and language == "metal"
    assert [(s.start, s.end, s.file_level, s.codes, s.line, s.used) for s in sups] == [
        (1, 2, False, ("SL101",), 3, {"SL101"})]
    # re-attached to the path it is looked up under
    moved = cache.get("ab" * 32, "other/a.metal")[0][0]
    assert moved.path == "other/a.metal" and moved.related[0].path == "other/a.metal"


def test_real_results_round_trip(tmp_path, project):
    r = lint_source("k.cu", KERNEL.encode(), Settings(extend_select=("SL201",)))
    assert r.diagnostics and r.suppressions
    cache = Cache(str(tmp_path / "c"))
    cache.put("cd" * 32, r.diagnostics, r.suppressions, r.language)
    diags, sups, _, _ = cache.get("cd" * 32, "k.cu")
    assert diags == r.diagnostics
    assert [(s.codes, s.line, s.used) for s in sups] == [(s.codes, s.line, s.used) for s in r.suppressions]


def test_second_run_is_served_from_the_cache_with_identical_output(project, capsys, counted):
    (project / "k.cu").write_text(KERNEL)
    (project / "ok.comp").write_text("#version 450\nlayout(local_size_x = 64) in;\nvoid main() { }\n")
    outs = []
    for _ in range(2):
        for fmt in ("json", "text"):
            main(["-j", "1", "--format", fmt, "."])
            outs.append(capsys.readouterr().out)
    assert outs[0] == outs[2] and outs[1] == outs[3]
    assert sorted(counted) == ["k.cu", "ok.comp"]  # linted once each, then cached
    assert "    5 |     for (int j = i; j < n; j += 32) a[j] = a[j] / w + (int)t[0];" in outs[3]  # excerpts from the bytes


def test_invalidation_by_content_settings_and_path(project, capsys, counted):
    f = project / "k.cu"
    f.write_text(KERNEL)
    main(["-j", "1", "-q", "k.cu"])
    main(["-j", "1", "-q", "k.cu"])
    assert len(counted) == 1
    f.write_text(KERNEL + "\n")
    main(["-j", "1", "-q", "k.cu"])
    assert len(counted) == 2
    main(["-j", "1", "-q", "--target", "sm_90", "k.cu"])
    assert len(counted) == 3
    main(["-j", "1", "-q", "--select", "SL201", "k.cu"])
    assert len(counted) == 4
    (project / "shaderlint.toml").write_text('occupancy-threshold = 0.4\n')
    main(["-j", "1", "-q", "k.cu"])
    assert len(counted) == 5
    (project / "copy.cu").write_text(KERNEL + "\n")
    main(["-j", "1", "-q", "copy.cu"])
    assert len(counted) == 6
    capsys.readouterr()


def test_no_cache_neither_reads_nor_writes(project, capsys, counted):
    (project / "k.cu").write_text(KERNEL)
    main(["-j", "1", "--no-cache", "k.cu"])
    assert not (project / ".cache").exists()
    main(["-j", "1", "k.cu"])
    main(["-j", "1", "--no-cache", "k.cu"])
    assert len(counted) == 3
    capsys.readouterr()


def test_cache_location(project, monkeypatch):
    assert cache_dir_for(Settings()) == str(project / ".cache")
    monkeypatch.delenv("SHADERLINT_CACHE_DIR")
    assert cache_dir_for(Settings()) == os.path.join(str(project), ".shaderlint_cache")
    cfg = project / "sub" / "pyproject.toml"
    assert cache_dir_for(Settings(config_path=str(cfg))) == str(project / "sub" / ".shaderlint_cache")


def test_cache_dir_is_marked_and_git_ignored(project, capsys):
    (project / "k.cu").write_text(KERNEL)
    main(["-j", "1", "-q", "k.cu"])
    capsys.readouterr()
    assert (project / ".cache" / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (project / ".cache" / ".gitignore").read_text().endswith("*\n")


def test_corrupt_or_unwritable_cache_is_a_miss_not_an_error(project, capsys, counted, monkeypatch):
    (project / "k.cu").write_text(KERNEL)
    main(["-j", "1", "-q", "k.cu"])
    first = capsys.readouterr().out
    for entry in (project / ".cache").rglob("*.json"):
        entry.write_text('{"diagnostics": [{"code": ')
    assert main(["-j", "1", "-q", "k.cu"]) == 1
    assert capsys.readouterr().out == first and len(counted) == 2
    blocked = project / "blocked"
    blocked.write_text("a file where the cache directory should be")
    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(blocked))
    assert main(["-j", "1", "-q", "k.cu"]) == 1
    assert capsys.readouterr().out == first


def test_time_budget_results_are_not_cached(tmp_path):
    d = Diagnostic(path="a.cu", code="SL001", name="parse-error", severity=Severity.ERROR,
                   message="analysis stopped: the per-file time budget of 5 s was exceeded before SL201",
                   start=0, end=0, line=1, column=1, end_line=1, end_column=1)
    cache = Cache(str(tmp_path / "c"))
    assert not cache.put("ef" * 32, [d], [], "cuda")
    assert cache.get("ef" * 32, "a.cu") is None


def _writer(args):
    directory, key, n = args
    d = full_diagnostic("a.metal")
    cache = Cache(directory)
    for _ in range(n):
        cache.put(key, [d], [], "metal")
        got = cache.get(key, "a.metal")
        assert got is None or got[0] == [d]  # never a half-written entry
    return True


def test_concurrent_writers(tmp_path):
    key = entry_key("a.metal", b"data", Settings())
    directory = str(tmp_path / "c")
    ctx = multiprocessing.get_context("fork") if hasattr(os, "fork") else multiprocessing.get_context()
    with ctx.Pool(4) as pool:
        assert all(pool.map(_writer, [(directory, key, 50)] * 8))
    threads = [threading.Thread(target=_writer, args=((directory, key, 50),)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert Cache(directory).get(key, "a.metal")[0] == [full_diagnostic("a.metal")]
    leftovers = [p for p in (tmp_path / "c").rglob(".tmp-*")]
    assert leftovers == []


def test_parallel_run_fills_the_cache_for_a_serial_run(project, capsys, counted, monkeypatch):
    monkeypatch.setattr(runner, "POOL_MIN_BYTES", 0)
    for i in range(6):
        (project / f"k{i}.cu").write_text(KERNEL.replace("void k(", f"void k{i}("))
    assert main(["-j", "2", "--format", "json", "."]) == 1
    parallel = capsys.readouterr().out
    assert counted == []  # linted in worker processes
    assert main(["-j", "1", "--format", "json", "."]) == 1
    assert capsys.readouterr().out == parallel and counted == []  # all from the cache


def test_a_crashing_worker_costs_one_file_not_the_run(project, capsys, monkeypatch):
    if not hasattr(os, "fork"):
        pytest.skip("the patched worker function reaches the workers only through fork")
    real = runner._lint_job

    def crash_on_boom(job):
        if "boom" in job.path:
            os._exit(3)  # a parser segfault, as far as the pool can tell
        return real(job)

    monkeypatch.setattr(runner, "_lint_job", crash_on_boom)
    monkeypatch.setattr(runner, "POOL_MIN_BYTES", 0)
    for name in ("a.cu", "boom.cu", "c.cu", "d.cu", "e.cu"):
        (project / name).write_text(KERNEL)
    assert main(["-j", "2", "--no-cache", "--format", "json", "--select", "SL001,SL201", "."]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [(d["path"], d["code"]) for d in data] == [
        ("a.cu", "SL201"), ("boom.cu", "SL001"), ("c.cu", "SL201"), ("d.cu", "SL201"), ("e.cu", "SL201")]
    assert "crashed" in data[1]["message"]


def test_small_runs_stay_in_process(project, capsys, counted):
    for i in range(3):
        (project / f"k{i}.cu").write_text(KERNEL)
    main(["-j", "4", "--no-cache", "-q", "."])
    capsys.readouterr()
    assert len(counted) == 3  # no worker processes for a few small files


def test_a_run_answered_from_the_cache_does_not_import_the_analysis(project):
    """The engine, the rules and the front ends are imported when a file is linted, not for a run whose
    every file (and host file) is answered from the cache; the output is the cold run's."""
    import os
    import subprocess
    import sys

    import shaderlint

    # the subprocess imports the package under test (a relative PYTHONPATH would not survive its cwd)
    root = os.path.dirname(os.path.dirname(os.path.abspath(shaderlint.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH")))))
    here = project / "p"
    here.mkdir()
    (here / "shaderlint.toml").write_text("")  # (selecting rules in a configuration checks their codes)
    (here / "k.cu").write_text(KERNEL)
    (here / "main.cu").write_text("void run(int* a, int n) { k<<<n / 128, 128>>>(a, 4, n); }\n")
    code = ("import sys, json\nfrom shaderlint.cli import main\n"
            "main(['--output-format', 'json', '-j', '1', '-o', 'out.json', '--fail-on', 'never', '.'])\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('shaderlint.'))))\n")
    outs, imported = [], []
    for args in (code, code, code.replace("'-j', '1'", "'--no-cache'")):
        run = subprocess.run([sys.executable, "-c", args], capture_output=True, text=True, check=True, cwd=here,
                             env=env)
        imported.append(set(json.loads(run.stdout)))
        outs.append((here / "out.json").read_text())
    analysis = {"shaderlint.engine", "shaderlint.rules.registry", "shaderlint.model.build"}
    assert analysis <= imported[0] and not analysis & imported[1]
    assert outs[0] == outs[1] == outs[2] and json.loads(outs[0])


def test_each_settings_keys_its_own_files_in_one_run(tmp_path, monkeypatch):
    # lint_files computes a settings' key once per run: files under two settings in one run must
    # still be keyed by their own (and entry_key's settings_key is exactly settings.key())
    from dataclasses import replace

    from shaderlint.runner import lint_files

    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / "cache"))
    src = b"kernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] = 1.0; }\n"
    paths = []
    for name in ("a.metal", "b.metal", "c.metal"):
        (tmp_path / name).write_bytes(src)
        paths.append(str(tmp_path / name))
    s1 = Settings()
    s2 = replace(Settings(), ignore=("SL101",))
    assert s1.key() != s2.key()
    pick = {paths[0]: s1, paths[1]: s2, paths[2]: s1}
    lint_files(paths, pick.__getitem__, jobs=1)
    cache = Cache(cache_dir_for(s1))
    for p in paths:
        assert entry_key(p, src, pick[p], "", pick[p].key()) == entry_key(p, src, pick[p])
        assert cache.get(entry_key(p, src, pick[p]), p) is not None
    assert cache.get(entry_key(paths[1], src, s1), paths[1]) is None
