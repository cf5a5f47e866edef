"""Configuration: discovery, closest-wins, CLI layering, globs, exclusion, and every error."""

from __future__ import annotations

import json
import os

import pytest

from shaderlint.cli import main
from shaderlint.config import (ConfigError, Settings, SettingsResolver, find_config, glob_match, load_config,
                               rule_enabled, settings_from_table)
from shaderlint.discovery import discover

DIV = "__global__ void k(int* a, int n) {\n    for (int i = threadIdx.x; i < n; i += 32)\n        a[i] = a[i] / n;\n}\n"


def write(path, text: str = ""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def root(tmp_path, monkeypatch):
    """A project root that stops the upward search (an empty shaderlint.toml above it)."""
    write(tmp_path / "shaderlint.toml")
    proj = tmp_path / "proj"
    proj.mkdir()
    monkeypatch.chdir(proj)
    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / "cache"))
    return proj


def lint_json(capsys, *argv: str) -> tuple[int, list[dict], str]:
    code = main(["--format", "json", *argv])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out else [], err


# ---- discovery ------------------------------------------------------------------------------------
def test_pyproject_with_table_is_found(root):
    write(root / "pyproject.toml", '[tool.shaderlint]\ntarget = "sm_90"\n')
    f = write(root / "src" / "k.cu")
    assert find_config(str(f)) == str(root / "pyproject.toml")
    assert load_config(str(root / "pyproject.toml")).target == "sm_90"


def test_pyproject_without_table_is_skipped(root):
    write(root / "pyproject.toml", '[project]\nname = "x"\n')
    f = write(root / "src" / "k.cu")
    assert find_config(str(f)) == str(root.parent / "shaderlint.toml")


def test_shaderlint_toml_wins_over_pyproject_in_the_same_directory(root):
    write(root / "pyproject.toml", '[tool.shaderlint]\ntarget = "sm_90"\n')
    write(root / "shaderlint.toml", 'target = "sm_75"\n')
    assert find_config(str(root)) == str(root / "shaderlint.toml")
    assert SettingsResolver().for_path(str(root / "k.cu")).target == "sm_75"


def test_shaderlint_toml_may_use_a_tool_table(root):
    write(root / "shaderlint.toml", '[tool.shaderlint]\ntarget = "sm_86"\n')
    assert load_config(str(root / "shaderlint.toml")).target == "sm_86"


def test_closest_file_wins_without_merging(root):
    write(root / "pyproject.toml", '[tool.shaderlint]\ntarget = "sm_90"\nignore = ["SL201"]\n')
    write(root / "gpu" / "shaderlint.toml", 'occupancy-threshold = 0.25\n')
    r = SettingsResolver()
    top = r.for_path(str(root / "a.cu"))
    deep = r.for_path(str(root / "gpu" / "kernels" / "b.cu"))
    assert (top.target, top.ignore) == ("sm_90", ("SL201",))
    assert (deep.target, deep.ignore, deep.occupancy_threshold) == (None, (), 0.25)
    assert deep.config_path == str(root / "gpu" / "shaderlint.toml")


def test_closest_wins_per_file_in_one_run(root, capsys):
    write(root / "shaderlint.toml", 'ignore = ["SL201"]\n')
    write(root / "a.cu", DIV)
    write(root / "strict" / "shaderlint.toml", 'extend-select = ["SL201"]\n')  # opt-in
    write(root / "strict" / "b.cu", DIV)
    code, data, _ = lint_json(capsys, ".")
    assert code == 1 and [d["path"] for d in data] == [os.path.join("strict", "b.cu")]  # no "./" prefix


def test_explicit_config_applies_to_every_file(root, capsys):
    write(root / "strict" / "shaderlint.toml", "")
    write(root / "strict" / "b.cu", DIV)
    write(root / "lenient.toml", 'ignore = ["SL2"]\n')
    assert lint_json(capsys, "--config", "lenient.toml", "strict")[:2] == (0, [])


def test_cli_overrides(root):
    write(root / "shaderlint.toml", 'target = "sm_90"\nselect = ["SL1"]\nignore = ["SL101"]\n'
                                    'occupancy-threshold = 0.3\n')
    s = SettingsResolver(cli={"target": "sm_75", "occupancy_threshold": 0.9}).for_path(str(root / "k.cu"))
    assert (s.target, s.occupancy_threshold, s.select, s.ignore) == ("sm_75", 0.9, ("SL1",), ("SL101",))
    s = SettingsResolver(cli={"select": ("SL201",)}).for_path(str(root / "k.cu"))
    assert (s.select, s.ignore) == (("SL201",), ())
    s = SettingsResolver(cli={"ignore": ("SL102",)}).for_path(str(root / "k.cu"))
    assert s.ignore == ("SL101", "SL102")
    s = SettingsResolver(cli={"extend_select": ("SL101",)}).for_path(str(root / "k.cu"))
    assert s.ignore == () and rule_enabled("SL101", True, s.select, s.ignore, s.extend_select)


def test_target_from_config_reaches_the_rules(root, capsys):
    write(root / "shaderlint.toml", 'target = "RDNA2"\n')
    assert load_config(str(root / "shaderlint.toml")).target == "rdna2-wave32"  # alias, any case


ARCH = """__global__ void k(float* out, int n) {
    __shared__ float s[64];
    s[threadIdx.x] = out[threadIdx.x];
#if __CUDA_ARCH__ < 800 || OLD_PATH
    if (threadIdx.x < n) __syncthreads();
#endif
    out[threadIdx.x] = s[threadIdx.x];
}
"""


def test_defines_and_target_decide_branches_in_a_run(root, capsys):
    """`defines` (file and --config) and the target's __CUDA_ARCH__ reach the front end, and the
    cache keeps results apart per setting."""
    write(root / "k.cu", ARCH)
    codes = lambda *argv: [d["code"] for d in lint_json(capsys, "k.cu", *argv)[1]]  # noqa: E731
    write(root / "shaderlint.toml", 'select = ["SL403"]\ntarget = "sm_90"\n')
    assert codes() == ["SL403"]  # 900 < 800 is false, but OLD_PATH is unknown: the branch is read
    write(root / "shaderlint.toml", 'select = ["SL403"]\ntarget = "sm_90"\ndefines = ["OLD_PATH=0"]\n')
    assert codes() == []
    assert codes("--config", 'target = "sm_75"') == ["SL403"]
    assert codes("--config", 'defines = ["OLD_PATH"]') == ["SL403"]
    assert codes() == []  # cached apart from the runs with other settings
    write(root / "shaderlint.toml", 'select = ["SL403"]\ndefines = ["OLD_PATH=0"]\n')
    assert codes() == ["SL403"]  # no target: __CUDA_ARCH__'s value is unknown


def test_defines_complete_decides_the_names_no_define_sets(root, capsys):
    """`defines-complete = true`: OLD_PATH, which no -D, header or #define sets, is undefined (0), so
    the sm_90 build does not read the divergent barrier's branch; without it the name is unknown."""
    write(root / "k.cu", ARCH)
    codes = lambda *argv: [d["code"] for d in lint_json(capsys, "k.cu", *argv)[1]]  # noqa: E731
    write(root / "shaderlint.toml", 'select = ["SL403"]\ntarget = "sm_90"\ndefines-complete = true\n')
    assert codes() == []
    assert codes("--config", 'defines = ["OLD_PATH"]') == ["SL403"]
    assert codes("--config", "defines-complete = false") == ["SL403"]
    write(root / "shaderlint.toml", 'select = ["SL403"]\ndefines-complete = true\n')
    assert codes() == ["SL403"]  # no target: __CUDA_ARCH__'s value is still unknown
    write(root / "shaderlint.toml", 'defines-complete = "yes"\n')
    with pytest.raises(ConfigError, match="defines-complete"):
        load_config(str(root / "shaderlint.toml"))


def test_defines_setting_and_layering(root):
    write(root / "base.toml", 'defines = ["A", "N = 4"]\n')
    write(root / "shaderlint.toml", 'extend = "base.toml"\n')
    assert load_config(str(root / "shaderlint.toml")).defines == ("A", "N = 4")
    write(root / "shaderlint.toml", 'extend = "base.toml"\ndefines = ["B="]\n')
    s = load_config(str(root / "shaderlint.toml"))
    assert s.defines == ("B=",)  # replaces the base's, as target does
    assert s.key() != Settings().key()


# ---- globs ----------------------------------------------------------------------------------------
def test_globs_are_relative_to_the_config_directory(root, monkeypatch):
    write(root / "shaderlint.toml", '[per-file-ignores]\n"legacy/*.cu" = ["SL201"]\n"*.cuh" = ["SL1"]\n'
                                    '[facts."kernels/blur.metal"]\nthreadgroup-size = "16x16"\n'
                                    '[facts."**/*.metal"]\ndispatch = "threads"\n')
    s = load_config(str(root / "shaderlint.toml"))
    monkeypatch.chdir(root.parent)  # the working directory does not matter
    assert s.ignored_for(str(root / "legacy" / "old.cu")) == ("SL201",)
    assert s.ignored_for(str(root / "src" / "legacy" / "old.cu")) == ()
    assert s.ignored_for(str(root / "deep" / "x.cuh")) == ("SL1",)
    assert s.facts_for(str(root / "kernels" / "blur.metal")) == {"threadgroup-size": "16x16", "dispatch": "threads"}
    assert s.facts_for(str(root / "blur.metal")) == {"dispatch": "threads"}
    assert s.facts_for(str(root / "k.cu")) == {}


def test_top_level_facts_apply_everywhere(root):
    s = settings_from_table({"threadgroup-size": 64, "grid-size": "1920x1080"}, str(root / "shaderlint.toml"))
    assert s.facts_for(str(root / "a" / "b" / "k.metal")) == {"threadgroup-size": "64", "grid-size": "1920x1080"}


def test_glob_match():
    assert glob_match("/p/src/a.cu", "src/*.cu", "/p")
    assert glob_match("/p/src/a.cu", "*.cu", "/p")
    assert glob_match("/p/src/a.cu", "**/*.cu", "/p")
    assert glob_match("/p/a.cu", "**/a.cu", "/p")
    assert glob_match("/p/third_party/x/y.cu", "third_party", "/p")
    assert glob_match("/p/src/build/y.cu", "build", "/p")
    assert glob_match("/p/src/a.cu", "/p/src/*", "/p")
    assert not glob_match("/p/src/a.cu", "lib/*.cu", "/p")
    assert not glob_match("/p/src/a.cu", "*.metal", "/p")


def test_per_file_ignores_in_a_run(root, capsys):
    write(root / "shaderlint.toml", '[per-file-ignores]\n"legacy/**" = ["SL201"]\n')
    write(root / "legacy" / "a.cu", DIV)
    write(root / "new" / "a.cu", DIV)
    code, data, _ = lint_json(capsys, "--select", "SL201", ".")
    assert code == 1 and [d["path"] for d in data] == [os.path.join("new", "a.cu")]


# ---- exclusion ------------------------------------------------------------------------------------
def test_exclude_and_gitignore_prune_the_walk_but_not_named_files(root, capsys):
    (root / ".git").mkdir()
    write(root / ".gitignore", "generated/\n*.gen.cu\n!keep.gen.cu\n")
    write(root / "shaderlint.toml", 'exclude = ["third_party", "bench/*.cu"]\n')
    for rel in ("src/a.cu", "generated/b.cu", "src/c.gen.cu", "src/keep.gen.cu", "third_party/lib/d.cu",
                "bench/e.cu", "bench/f.metal", "sub/g.comp"):
        write(root / rel, "")
    write(root / "sub" / ".gitignore", "g.comp\n")
    found = sorted(os.path.relpath(p) for p in discover(
        ["."], is_excluded=lambda p: SettingsResolver().for_path(p).is_excluded(p)))
    assert found == [os.path.join("bench", "f.metal"), os.path.join("src", "a.cu"),
                     os.path.join("src", "keep.gen.cu")]
    # a subdirectory inherits the .gitignore files above it up to the repository root
    found = sorted(os.path.relpath(p) for p in discover(["src"]))
    assert found == [os.path.join("src", "a.cu"), os.path.join("src", "keep.gen.cu")]
    # a file named on the command line is always linted
    assert list(discover(["generated/b.cu"])) == ["generated/b.cu"]
    code = main(["--format", "json", "third_party/lib/d.cu", "third_party"])
    assert code == 0
    assert json.loads(capsys.readouterr().out) == []


def test_gitignore_outside_a_repository_above_the_top_is_not_read(root):
    write(root / ".gitignore", "src/\n")
    write(root / "src" / "a.cu")
    assert list(discover([str(root / "src")])) == [str(root / "src" / "a.cu")]


def test_each_file_once(root):
    write(root / "src" / "a.cu")
    assert list(discover(["src", "src/a.cu", "./src"])) == [os.path.join("src", "a.cu")]


# ---- errors: exit 2, naming the file and the key ---------------------------------------------------
BAD = [
    ('selekt = ["SL1"]\n', "unknown key 'selekt'", "did you mean 'select'"),
    ('select = "SL101"\n', "'select' must be a list of rule codes", None),
    ('select = ["W291"]\n', "'select': 'W291' is not a rule code", None),
    ('ignore = ["SL999"]\n', "'ignore': 'SL999' matches no rule", None),
    ('extend-select = [1]\n', "'extend-select' must be a list", None),
    ('per-file-ignores = ["a"]\n', "'per-file-ignores' must be a table", None),
    ('[per-file-ignores]\n"*.cu" = "SL101"\n', "'per-file-ignores.*.cu' must be a list", None),
    ('target = "sm_99"\n', "'target': 'sm_99' is not a known target", None),
    ('target = 80\n', "'target' must be a string", None),
    ('occupancy-threshold = 1.5\n', "'occupancy-threshold' must be a number between 0 and 1", None),
    ('occupancy-threshold = true\n', "'occupancy-threshold' must be a number", None),
    ('time-budget = 0\n', "'time-budget' must be a positive number", None),
    ('exclude = "build"\n', "'exclude' must be a list of globs", None),
    ('threadgroup-size = "16x0"\n', "'threadgroup-size' must be a positive size", None),
    ('grid-size = "big"\n', "'grid-size' must be a positive size", None),
    ('dispatch = "warps"\n', "'dispatch' must be one of 'threads', 'threadgroups'", None),
    ('facts = 3\n', "'facts' must be a table", None),
    ('[facts]\n"*.metal" = 3\n', "'facts.*.metal' must be a table", None),
    ('[facts."*.metal"]\ntarget = "sm_80"\n', "'facts.*.metal': unknown key 'target'", None),
    ('[facts."*.metal"]\nthreadgroup-size = true\n', "'threadgroup-size' must be a positive size", None),
    ('select = [\n', "invalid TOML", None),
    ('extension = [".fs"]\n', "'extension' must be a table of extension = language", None),
    ('extension = { ".fs" = "hlsl" }\n', "'.fs' maps to 'hlsl'; languages are metal, cuda, glsl", None),
    ('extension = { "a/b" = "glsl" }\n', "'a/b' is not a file extension", None),
    ('extend-exclude = "build"\n', "'extend-exclude' must be a list of globs", None),
    ('extend = 3\n', "'extend' must be the path of another configuration file", None),
    ('extend = "../nope.toml"\n', "'extend': '../nope.toml' is not a file", None),
    ('defines = "FUSED"\n', "'defines' must be a list of macro definitions", None),
    ('defines = ["N(x)=x"]\n', "'defines': 'N(x)=x' is not a macro definition", None),
    ('defines = ["4=N"]\n', "'defines': '4=N' is not a macro definition", None),
]


@pytest.mark.parametrize("text,message,hint", BAD, ids=[b[1] for b in BAD])
def test_config_errors_name_the_file_and_key(root, capsys, text, message, hint):
    cfg = write(root / "shaderlint.toml", text)
    with pytest.raises(ConfigError) as e:
        load_config(str(cfg))
    assert str(e.value).startswith(str(cfg) + ": ") and message in str(e.value)
    if hint:
        assert hint in str(e.value)
    write(root / "k.cu", DIV)
    code = main(["k.cu"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.startswith(f"shaderlint: {cfg}: ") and message in err


def test_pyproject_errors_name_the_table(root, capsys):
    cfg = write(root / "pyproject.toml", '[tool.shaderlint]\nignroe = ["SL101"]\n')
    write(root / "k.cu", DIV)
    assert main(["k.cu"]) == 2
    err = capsys.readouterr().err
    assert f"{cfg}: unknown key 'ignroe' in [tool.shaderlint] (did you mean 'ignore'?)" in err


def test_broken_pyproject_is_an_error_for_the_cli(root, capsys):
    write(root / "pyproject.toml", "[tool.shaderlint\n")
    write(root / "k.cu", DIV)
    assert main(["k.cu"]) == 2
    assert "invalid TOML" in capsys.readouterr().err


def test_missing_explicit_config(root, capsys):
    write(root / "k.cu", DIV)
    assert main(["--config", "nope.toml", "k.cu"]) == 2
    assert "nope.toml: cannot read" in capsys.readouterr().err


def test_defaults():
    s = Settings()
    assert (s.select, s.ignore, s.target, s.occupancy_threshold, s.exclude, s.facts) == ((), (), None, 0.5, (), ())
    assert settings_from_table({}).select == ()


# ---- extend, extend-exclude, extension ----------------------------------------------------------
def test_extend_layers_a_file_over_its_base(root, capsys):
    write(root / "pyproject.toml", '[tool.shaderlint]\ntarget = "sm_90"\nignore = ["SL205"]\n'
                                   'exclude = ["gen/*.cu", "build"]\nthreadgroup-size = 64\n'
                                   'per-file-ignores = { "legacy/*.cu" = ["SL101"] }\n')
    write(root / "gpu" / "shaderlint.toml", 'extend = "../pyproject.toml"\noccupancy-threshold = 0.25\n'
                                            'extend-select = ["SL302"]\nextend-exclude = ["old/**"]\n')
    s = SettingsResolver().for_path(str(root / "gpu" / "k.cu"))
    assert (s.target, s.occupancy_threshold, s.ignore, s.extend_select) == ("sm_90", 0.25, ("SL205",), ("SL302",))
    assert s.config_path == str(root / "gpu" / "shaderlint.toml")
    # The base's globs keep meaning paths under the base's directory; its own are relative to gpu/.
    assert s.is_excluded(str(root / "gen" / "a.cu")) and not s.is_excluded(str(root / "gpu" / "gen" / "a.cu"))
    assert s.is_excluded(str(root / "gpu" / "build" / "a.cu"))  # a name without '/' matches anywhere
    assert s.is_excluded(str(root / "gpu" / "old" / "a.cu")) and not s.is_excluded(str(root / "old" / "a.cu"))
    assert s.ignored_for(str(root / "legacy" / "x.cu")) == ("SL101",)
    assert s.facts_for(str(root / "gpu" / "k.cu")) == {"threadgroup-size": "64"}
    # select in the extending file resets the base's selection and its ignores, as on the command line.
    write(root / "gpu" / "shaderlint.toml", 'extend = "../pyproject.toml"\nselect = ["SL2"]\n')
    s = SettingsResolver().for_path(str(root / "gpu" / "k.cu"))
    assert (s.select, s.ignore, s.target) == (("SL2",), (), "sm_90")


def test_extend_cycle_is_an_error(root, capsys):
    write(root / "a.toml", 'extend = "b.toml"\n')
    write(root / "b.toml", 'extend = "a.toml"\n')
    with pytest.raises(ConfigError, match="'extend' makes a cycle"):
        load_config(str(root / "a.toml"))
    write(root / "k.cu", DIV)
    assert main(["--config", "a.toml", "k.cu"]) == 2
    assert "makes a cycle" in capsys.readouterr().err


def test_extension_mapping_reaches_discovery_engine_and_cache(root, capsys):
    write(root / "shaderlint.toml", 'extension = { ".kern" = "cuda" }\n')
    write(root / "k.kern", DIV)
    assert load_config(str(root / "shaderlint.toml")).language_for("x/k.KERN") == "cuda"
    assert Settings().language_for("k.kern") is None and Settings().language_for("k.metal") == "metal"
    for _ in range(2):  # the second run is answered by the cache
        code, data, err = lint_json(capsys, "--select", "SL201", ".")
        assert (code, [d["path"] for d in data], err) == (1, ["k.kern"], "")
    write(root / "shaderlint.toml", "")
    code, data, err = lint_json(capsys, "--select", "SL201", "k.kern")
    assert (code, data) == (0, []) and "k.kern: not linted: no language for .kern files" in err


def test_cli_extend_exclude_prunes_the_walk(root, capsys):
    write(root / "a" / "k.cu", DIV)
    write(root / "b" / "k.cu", DIV)
    code, data, _ = lint_json(capsys, "--select", "SL201", "--extend-exclude", "a,c", ".")
    assert (code, [d["path"] for d in data]) == (1, [os.path.join("b", "k.cu")])
    code, data, _ = lint_json(capsys, "--select", "SL201", "--extend-exclude", "a", "--extend-exclude", "b/**", ".")
    assert (code, data) == (0, [])


def test_resolver_answers_a_directory_once_and_dot_dot_paths_by_their_own_directory(tmp_path, monkeypatch):
    from shaderlint.config import SettingsResolver

    monkeypatch.chdir(tmp_path)
    (tmp_path / "shaderlint.toml").write_text('ignore = ["SL101"]\n')
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "shaderlint.toml").write_text('ignore = ["SL102"]\n')
    r = SettingsResolver()
    inner = r.for_path("a/k.cu")
    assert inner.ignore == ("SL102",) and r.for_path("a/other.cu") is inner
    assert r.for_path(str(tmp_path / "a" / "k.cu")) is inner
    # `a/..` is the project directory itself, `a/` names no file: not answered as a file of `a`
    for p in ("a/..", "a/", "a/k.cu/.."):
        assert r.for_path(p).config_path == SettingsResolver().for_path(p).config_path
    assert r.for_path("a/..").ignore != ("SL102",)
