"""The run plan kept across runs (shaderlint.project.run.PlanStore): a run that changes nothing reuses
every file's context digest; any change to what a context rests on (a header's bytes, a header that
appears earlier on the search path, the settings) plans that file again, and a kept plan gives the
same contexts and the same lint output as planning afresh."""

from __future__ import annotations

import os

import pytest

from shaderlint.config import SettingsResolver
from shaderlint.project.run import plan_run, under_roots

KERNEL = '#include "cfg.h"\n__global__ void k(float* p) { p[threadIdx.x] = SCALE; }\n'


@pytest.fixture
def tree(tmp_path, monkeypatch):
    (tmp_path / "src" / "inc").mkdir(parents=True)
    (tmp_path / "src" / "a.cu").write_text(KERNEL)
    (tmp_path / "src" / "b.cu").write_text("__global__ void b(float* p) { p[0] = 1; }\n")
    (tmp_path / "src" / "inc" / "cfg.h").write_text("#define SCALE 2\n")
    (tmp_path / "shaderlint.toml").write_text('include-dirs = ["src/inc"]\n')
    old = 1_600_000_000_000_000_000  # older than the racy window: the stat key is trusted
    for p in tmp_path.rglob("*"):
        if p.is_file():
            os.utime(p, ns=(old, old))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _plan(tree):
    r = SettingsResolver(None, {})
    return plan_run(["src/a.cu", "src/b.cu"], r.for_path, under_roots(["src"]), cache_dir=str(tree / ".cache"))


def _macros(plan, path="src/a.cu"):
    return {k: d.body for k, d in plan.contexts.get(path).macros.items()}


def test_a_second_run_reuses_the_plan_and_gives_the_same_contexts(tree):
    first = _plan(tree)
    assert first.reused == 0 and _macros(first) == {"SCALE": "2"}
    second = _plan(tree)
    assert second.reused == 3  # a.cu, b.cu (no context) and inc/cfg.h (included, no kernel: not linted)
    assert second.files == first.files == ["src/a.cu", "src/b.cu"]
    assert second.contexts.digest("src/a.cu") == first.contexts.digest("src/a.cu")
    assert "src/a.cu" in second.contexts.lazy  # known by digest, not computed
    assert _macros(second) == {"SCALE": "2"} and "src/a.cu" not in second.contexts.lazy


def test_an_edited_header_plans_its_includer_again(tree):
    first = _plan(tree)
    (tree / "src" / "inc" / "cfg.h").write_text("#define SCALE 3\n")
    second = _plan(tree)
    assert "src/a.cu" not in second.contexts.lazy and _macros(second) == {"SCALE": "3"}
    assert second.reused == 1  # b.cu
    assert second.contexts.digest("src/a.cu") != first.contexts.digest("src/a.cu")


def test_same_size_same_mtime_edit_is_caught_by_the_change_time(tree, monkeypatch):
    import time

    from shaderlint.project import includes

    monkeypatch.setattr(includes, "RACY_NS", 0)  # trust the stat keys of files just written
    _plan(tree)
    time.sleep(0.05)  # past the file system's clock tick
    p = tree / "src" / "inc" / "cfg.h"
    st = p.stat()
    p.write_text("#define SCALE 9\n")  # same size
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))  # modification time put back (ctime moves on)
    again = _plan(tree)
    assert "src/a.cu" not in again.contexts.lazy and _macros(again) == {"SCALE": "9"}


def test_a_touched_header_is_compared_by_content(tree):
    _plan(tree)
    os.utime(tree / "src" / "inc" / "cfg.h", ns=(1_700_000_000_000_000_000,) * 2)
    again = _plan(tree)
    assert again.reused == 3 and "src/a.cu" in again.contexts.lazy


def test_a_header_appearing_earlier_on_the_search_path_plans_again(tree):
    _plan(tree)
    (tree / "src" / "cfg.h").write_text("#define SCALE 5\n")  # next to a.cu: found before src/inc
    second = _plan(tree)
    assert "src/a.cu" not in second.contexts.lazy and _macros(second) == {"SCALE": "5"}


def test_changed_settings_plan_again(tree):
    _plan(tree)
    (tree / "shaderlint.toml").write_text('include-dirs = ["src/inc"]\ndefines = ["X=1"]\n')
    assert _plan(tree).reused == 0


def test_a_changed_code_stamp_drops_the_plan(tree, monkeypatch):
    import shaderlint.cache as cache

    _plan(tree)
    monkeypatch.setattr(cache, "code_stamp", lambda: "another")
    assert _plan(tree).reused == 0


def test_lint_output_with_a_kept_plan_is_the_same(tree, capsys):
    from shaderlint.cli import main

    os.environ["SHADERLINT_CACHE_DIR"] = str(tree / ".cache")
    try:
        outs = []
        for _ in range(3):  # plan and lint; plan kept, lint cached; both kept
            main(["src", "--format", "json", "--fail-on", "never"])
            outs.append(capsys.readouterr().out)
        (tree / "src" / "inc" / "cfg.h").write_text("#define SCALE 2.0f\n")
        main(["src", "--format", "json", "--fail-on", "never", "--no-cache"])
        fresh = capsys.readouterr().out
        main(["src", "--format", "json", "--fail-on", "never"])
        assert capsys.readouterr().out == fresh
    finally:
        del os.environ["SHADERLINT_CACHE_DIR"]
    assert outs[0] == outs[1] == outs[2]


def test_fix_from_a_kept_plan_lints_the_fixed_text_in_context(tree, capsys):
    """A result answered from the cache whose context the kept plan knows by digest only gets its
    context back for --fix / --diff (the fixed text is linted in it)."""
    import shaderlint.cli as cli

    (tree / "src" / "a.cu").write_text(KERNEL.replace("SCALE; }", "SCALE; }  // shaderlint: ignore[SL201]"))
    os.environ["SHADERLINT_CACHE_DIR"] = str(tree / ".cache")
    seen = []
    real = cli.lint

    def spy(args, resolver, files):
        results = real(args, resolver, files)
        seen[:] = [r for r in results if r.path.endswith("a.cu")]
        return results

    try:
        for _ in range(2):  # the second run: plan kept, result from the cache
            cli.main(["src", "--extend-select", "SL002,SL201", "-q", "--fail-on", "never"])
        cli.lint = spy
        cli.main(["src", "--extend-select", "SL002,SL201", "--diff"])
    finally:
        cli.lint = real
        del os.environ["SHADERLINT_CACHE_DIR"]
    capsys.readouterr()
    (r,) = seen
    assert any(d.code == "SL002" and d.fix is not None for d in r.diagnostics)
    assert r.file_context is not None and "SCALE" in r.file_context.macros
