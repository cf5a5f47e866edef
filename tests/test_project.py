"""The project layer: macro tables (scan_macros), include resolution, a file's context."""

from __future__ import annotations

from shaderlint.languages.conditions import OPAQUE
from shaderlint.project.macros import MacroDef, scan_macros


def test_object_and_function_like_macros_with_positions():
    src = (b"// header\n"
           b"#define N 256\n"
           b"  #  define MAX(a, b) ((a) > (b) ? (a) : (b))\n"
           b"#define VA(fmt, ...) printf(fmt, __VA_ARGS__)\n"
           b"#define EMPTY\n"
           b"#define NOARGS() 1\n"
           b"#define SPACED (x) x\n")
    got = scan_macros("k.h", src)
    assert got["N"] == MacroDef("N", None, "256", "k.h", 2, 9)
    assert got["MAX"] == MacroDef("MAX", ("a", "b"), "((a) > (b) ? (a) : (b))", "k.h", 3, 13)
    assert got["VA"].params == ("fmt", "...")
    assert got["EMPTY"].params is None and got["EMPTY"].body == ""
    assert got["NOARGS"].params == () and got["NOARGS"].body == "1"
    # a space before `(`: object-like, the parenthesis is part of the body
    assert got["SPACED"].params is None and got["SPACED"].body == "(x) x"


def test_continuations_joined_and_comments_become_spaces():
    src = (b"#define KERNEL(name) \\\n"
           b"  __global__ void name(float* p) { /* body */ \\\n"
           b"    p[0] = 1; }  // trailing\n"
           b"#define T 4/*four*/+1\n")
    got = scan_macros("k.cuh", src)
    # the comment is one space, the splices are gone (the next line's indentation stays)
    assert got["KERNEL"].body == "__global__ void name(float* p) {   " + "    p[0] = 1; }"
    assert got["T"].body == "4 +1"
    assert got["T"].line == 4


def test_last_definition_wins_and_undef_removes():
    src = b"#define A 1\n#define B 2\n#define A 3\n#undef B\n"
    got = scan_macros("x.h", src)
    assert got["A"].body == "3" and got["A"].line == 3
    assert "B" not in got


def test_dead_branches_define_nothing():
    src = (b"#ifdef FUSED\n#define MODE 1\n#else\n#define MODE 2\n#endif\n"
           b"#if __CUDA_ARCH__ >= 800\n#define WIDE 1\n#endif\n"
           b"#if 0\n#define NEVER 1\n#endif\n")
    got = scan_macros("x.cuh", src)
    assert "NEVER" not in got
    assert got["MODE"].body == "2"  # undecided: both arms read, the last in file order wins
    assert "WIDE" in got  # unknown arch: kept
    got = scan_macros("x.cuh", src, predefined=(("FUSED", "1"), ("__CUDA_ARCH__", "750")))
    assert got["MODE"].body == "1" and "WIDE" not in got
    got = scan_macros("x.cuh", src, predefined=(("FUSED", None), ("__CUDA_ARCH__", OPAQUE)))
    assert got["MODE"].body == "2" and "WIDE" in got


def test_not_directives_in_comments_strings_and_continued_lines():
    src = (b"/*\n#define IN_COMMENT 1\n*/\n"
           b"const char* s = \"\\\n#define IN_STRING 1\";\n"
           b"#define OUTER x \\\n#define CONTINUED 1\n")
    got = scan_macros("x.h", src)
    assert set(got) == {"OUTER"}


def test_never_raises_on_odd_input():
    for data in (b"", b"#define", b"#define (x) 1", b"#define F(a, b 1\n", b"#undef\n", b"\xff\xfe#define A\n",
                 b"#define A \\", b"#if\n#define B 1\n"):
        scan_macros("x.h", data)
    assert "F" not in scan_macros("x.h", b"#define F(a, b 1\n")


# ---- include resolution and contexts ---------------------------------------------------------------------

import json  # noqa: E402

import pytest  # noqa: E402
import os  # noqa: E402

from shaderlint.config import Settings  # noqa: E402
from shaderlint.project import includes as inc_mod  # noqa: E402
from shaderlint.project.includes import Project, parse_flags  # noqa: E402


def _tree(root, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _ctx(root, rel, settings=None, project=None, language="cuda"):
    p = str(root / rel)
    return (project or Project()).context(p, open(p, "rb").read(), settings or Settings(), language)


def _names(ctx):
    return [os.path.basename(p) for p, _ in ctx.files]


def test_quoted_includes_search_the_includer_then_include_dirs_angle_includes_only_include_dirs(tmp_path):
    _tree(tmp_path, {
        "src/k.cu": '#include "a.h"\n#include "b.h"\n#include <c.h>\n#include <cuda_runtime.h>\n'
                    '#include "missing.h"\n#include <vector>\n',
        "src/a.h": "#define A_NEAR 1\n",
        "inc/a.h": "#define A_FAR 1\n",
        "inc/b.h": "#define B 1\n",
        "src/c.h": "#define C_NEAR 1\n",
        "inc/c.h": "#define C_FAR 1\n",
        "inc/cuda_runtime.h": "#define TOOLKIT_READ 1\n",
    })
    st = Settings(include_dirs=(str(tmp_path / "inc"),))
    ctx = _ctx(tmp_path, "src/k.cu", st)
    assert set(ctx.macros) == {"A_NEAR", "B", "C_FAR"}  # toolkit headers stay unread
    assert ctx.unresolved == ("missing.h",)
    assert [os.path.relpath(p, tmp_path) for p, _ in ctx.files] == ["src/a.h", "inc/b.h", "inc/c.h"]
    # without include-dirs, only the includer's directory is searched
    assert set(_ctx(tmp_path, "src/k.cu").macros) == {"A_NEAR"}


def test_toolkit_names_are_exact_where_projects_share_the_prefixes():
    from shaderlint.project.includes import is_toolkit

    for name in ("cuda_runtime.h", "cuda_fp16.h", "cub/cub.cuh", "thrust/device_vector.h", "cuda/std/cstdint",
                 "vector", "cstdint", "stdio.h", "metal_stdlib", "sm_32_intrinsics.h", "torch/extension.h"):
        assert is_toolkit(name), name
    for name in ("cuda_utils.h", "device_utils.cuh", "math_utils.h", "utils.h", "common/cuda_helper.hpp"):
        assert not is_toolkit(name), name


def test_transitive_includes_in_order_cycles_and_live_branches(tmp_path):
    _tree(tmp_path, {
        "k.cu": '#include "a.h"\n#if 0\n#include "dead.h"\n#endif\n// #include "comment.h"\n',
        "a.h": '#pragma once\n#include "b.h"\n#define A 1\n#define SHARED 1\n',
        "b.h": '#pragma once\n#include "a.h"\n#include "k.cu"\n#define B 1\n#define SHARED 2\n#undef GONE\n',
        "dead.h": "#define DEAD 1\n",
        "comment.h": "#define COMMENT 1\n",
    })
    ctx = _ctx(tmp_path, "k.cu")
    assert _names(ctx) == ["a.h", "b.h"]  # each once, the file itself never
    assert list(ctx.macros) == ["B", "A", "SHARED"]
    assert ctx.macros["SHARED"].body == "1" and ctx.macros["SHARED"].path.endswith("a.h")  # a.h's comes after b.h's
    assert dict(ctx.state)["GONE"] is None  # b.h undefines it: `#ifdef GONE` is decided


def test_walk_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(inc_mod, "MAX_DEPTH", 3)
    files = {"k.cu": '#include "h0.h"\n'}
    for i in range(6):
        files[f"h{i}.h"] = f'#include "h{i + 1}.h"\n#define H{i} 1\n'
    _tree(tmp_path, files)
    ctx = _ctx(tmp_path, "k.cu")
    assert ctx.truncated and _names(ctx) == ["h0.h", "h1.h", "h2.h"]
    monkeypatch.setattr(inc_mod, "MAX_DEPTH", 24)
    monkeypatch.setattr(inc_mod, "MAX_BYTES", 40)
    ctx = _ctx(tmp_path, "k.cu")
    assert ctx.truncated and len(ctx.files) < 6


def test_headers_are_scanned_once_per_run(tmp_path):
    _tree(tmp_path, {f"k{i}.cu": '#include "common.h"\n#include "other.h"\n' for i in range(5)} | {
        "common.h": '#include "other.h"\n#define N 4\n', "other.h": "#define M 2\n"})
    project = Project()
    for i in range(5):
        ctx = _ctx(tmp_path, f"k{i}.cu", project=project)
        assert ctx.macros["N"].body == "4" and "M" in ctx.macros
    assert project.headers_scanned == 2


def test_a_header_is_walked_once_for_builds_that_differ_only_in_names_it_never_mentions(tmp_path):
    """Two files whose compile commands define different macros, neither of which the shared header
    mentions: the second file's context walks no header again (with complete defines, each file's
    own names would otherwise make every header's walk its own)."""
    _tree(tmp_path, {".git/HEAD": "ref: refs/heads/main\n", "common.h": "#ifndef N\n#define N 4\n#endif\n",
                     "k0.cu": '#include "common.h"\n#define OWN0 1\n', "k1.cu": '#include "common.h"\n'})
    (tmp_path / "compile_commands.json").write_text(json.dumps([
        {"directory": str(tmp_path), "file": "k0.cu", "command": "nvcc -DX=1 -arch=sm_80 -c k0.cu"},
        {"directory": str(tmp_path), "file": "k1.cu", "command": "nvcc -DY=2 -arch=sm_80 -c k1.cu"}]))
    project = Project()
    assert _ctx(tmp_path, "k0.cu", project=project).macros["N"].body == "4"
    scanned = project.headers_scanned
    assert _ctx(tmp_path, "k1.cu", project=project).macros["N"].body == "4"
    assert project.headers_scanned == scanned


def test_compile_flags():
    f = parse_flags(["nvcc", "-I", "inc", "-Iabs/../two", "-isystem", "/usr/x", "-DFUSED", "-D", "N=4", "-UOLD",
                     "-gencode", "arch=compute_80,code=sm_80", "-std=c++17", "-c", "k.cu"], "/build")
    assert f.include_dirs == ("/build/inc", "/build/two") and f.system_dirs == ("/usr/x",)
    assert f.defines == ("FUSED", "N=4") and f.undefines == ("OLD",)
    assert f.arch == "sm_80" and f.std == "c++17"
    assert parse_flags(["nvcc", "-arch=sm_90a"], "/").arch == "sm_90a"
    assert parse_flags(["clang", "--offload-arch=gfx90a"], "/").arch == "gfx90a"
    # several architectures: which one `__CUDA_ARCH__` is in a given pass is not known
    assert parse_flags(["nvcc", "-gencode", "arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90"],
                       "/").arch is None


def test_compile_commands_at_the_repository_root(tmp_path):
    _tree(tmp_path, {
        ".git/HEAD": "ref: refs/heads/main\n",
        "src/k.cu": '#include "lib.h"\n#include "sys.h"\n',
        "include/lib.h": "#define LIB 1\n#ifdef FUSED\n#define MODE 1\n#else\n#define MODE 2\n#endif\n",
        "third/sys.h": "#define SYS 1\n",
    })
    (tmp_path / "compile_commands.json").write_text(json.dumps([{
        "directory": str(tmp_path / "build"), "file": "../src/k.cu",
        "command": "nvcc -I../include -isystem ../third -DFUSED -arch=sm_80 -c ../src/k.cu"}]))
    ctx = _ctx(tmp_path, "src/k.cu")
    assert set(ctx.macros) == {"LIB", "MODE"} and ctx.macros["MODE"].body == "1"  # -D decided the header's #ifdef
    assert ctx.flags.defines == ("FUSED",) and ctx.flags.arch == "sm_80"
    from shaderlint.engine import predefined_for
    pre = dict(predefined_for(Settings(), "cuda", ctx))
    assert pre["__CUDA_ARCH__"] == "800" and pre["FUSED"] == "1" and pre["MODE"] == "1"
    # the configured `defines` and target are the user's word
    pre = dict(predefined_for(Settings(defines=("FUSED=0",), target="sm_75"), "cuda", ctx))
    assert pre["__CUDA_ARCH__"] == "750" and pre["FUSED"] == "0"


def test_a_compile_command_makes_the_defines_complete(tmp_path):
    """A compile command lists every -D of the build: a name no -D, header or #define sets is undefined
    (conditions.COMPLETE) -- unless a header the build may read was not (not found, a forced include),
    or the `defines-complete` setting says otherwise. An include the file's branches leave out under
    complete defines is not one the build reads."""
    from shaderlint.engine import predefined_for
    from shaderlint.languages.conditions import COMPLETE

    _tree(tmp_path, {
        ".git/HEAD": "ref: refs/heads/main\n",
        "src/k.cu": '#include "lib.h"\n#include "mode.h"\n#if defined(USE_HIP)\n#include <hipblas/hipblas.h>\n#endif\n'
                    '#ifdef MAYBE_LIB\n#include "gone.h"\n#endif\n',
        "src/lib.h": "#define LIB 1\n#ifdef MAYBE_LIB\n#define HALF 1\n#endif\n#ifdef __FAST_MATH__\n#define FAST 1\n#endif\n"
                     "#if defined(USE_MUSA)\n#define DECL_MUSA\n#endif\n",
        # CFG is lib.h's; mode.h is walked without lib.h's macros: CFG stays unknown there. DECL_MUSA is
        # defined only under USE_MUSA, undefined: a second walk decides mode.h's include of <musa/fp16.h>
        "src/mode.h": "#ifdef LIB\n#define MODE 1\n#else\n#define MODE 2\n#endif\n"
                      "#ifdef DECL_MUSA\n#include <musa/fp16.h>\n#endif\n",
    })
    cmd = "nvcc -DFUSED -arch=sm_80 -c k.cu"
    (tmp_path / "compile_commands.json").write_text(json.dumps([{
        "directory": str(tmp_path / "src"), "file": "k.cu", "command": cmd}]))
    ctx = _ctx(tmp_path, "src/k.cu")
    assert not ctx.unread
    pre = dict(predefined_for(Settings(), "cuda", ctx))
    assert COMPLETE in pre and pre["FUSED"] == "1"
    assert COMPLETE not in dict(predefined_for(Settings(defines_complete=False), "cuda", ctx))
    assert "HALF" not in pre and "DECL_MUSA" not in pre  # undefined: only MAYBE_LIB / USE_MUSA define them
    # FAST: 1 or unknown (__FAST_MATH__ may be predefined); MODE: 1 or 2 (LIB stays unknown in mode.h)
    assert pre["FAST"] == ("1", "\0unknown") and set(pre["MODE"]) == {"1", "2"} and pre["LIB"] == "1"
    # a project header the build reads but the analysis does not find: anything may be defined
    (tmp_path / "src/k.cu").write_text('#include "lib.h"\n#include "generated.h"\n')
    ctx = _ctx(tmp_path, "src/k.cu")
    assert ctx.unread and COMPLETE not in dict(predefined_for(Settings(), "cuda", ctx))
    (tmp_path / "src/k.cu").write_text('#include "lib.h"\n')
    (tmp_path / "compile_commands.json").write_text(json.dumps([{
        "directory": str(tmp_path / "src"), "file": "k.cu", "command": cmd + " -include config.h"}]))
    ctx = _ctx(tmp_path, "src/k.cu")
    assert ctx.flags.forced_includes == ("config.h",) and ctx.unread
    assert COMPLETE not in dict(predefined_for(Settings(), "cuda", ctx))
    # no compile command: only the setting makes the claim
    (tmp_path / "compile_commands.json").unlink()
    ctx = _ctx(tmp_path, "src/k.cu")
    assert COMPLETE not in dict(predefined_for(Settings(), "cuda", ctx))
    assert COMPLETE in dict(predefined_for(Settings(defines_complete=True), "cuda", ctx))


def test_context_digest_changes_with_a_header(tmp_path):
    _tree(tmp_path, {"k.cu": '#include "a.h"\n', "a.h": "#define N 1\n"})
    d1 = _ctx(tmp_path, "k.cu").digest()
    (tmp_path / "a.h").write_text("#define N 2\n")
    d2 = _ctx(tmp_path, "k.cu").digest()
    assert d1 != d2 and _ctx(tmp_path, "k.cu").digest() == d2


# ---- what the analysis of a file gets from its context -----------------------------------------------------

_HEADER = ("#pragma once\n#define BLOCK 256\n#define DEVICE_INLINE __device__ __forceinline__\n"
           "#define BARRIER __syncthreads();\n#define USE_FAST 1\n#ifdef WIDE\n#define STEP 2\n#else\n#define STEP 4\n"
           "#endif\n")
_KERNEL = """#include "cfg.h"
DEVICE_INLINE int helper(int x) { return x + 1; }
__global__ void k(int* out, const int* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __shared__ int s[BLOCK];
    s[threadIdx.x] = in[i];
    BARRIER
    out[i] = s[threadIdx.x] + helper(i);
#if USE_FAST
    out[i] += 1;
#else
    out[i] -= 1;
#endif
}
"""


def _lint(tmp_path, kernel=_KERNEL, header=_HEADER, with_context=True):
    from shaderlint.engine import lint_source

    _tree(tmp_path, {"k.cu": kernel, "cfg.h": header})
    st = Settings(select=("ALL",))
    ctx = _ctx(tmp_path, "k.cu", st) if with_context else None
    return lint_source(str(tmp_path / "k.cu"), kernel.encode(), st, file_context=ctx)


def test_header_macros_decide_if_branches(tmp_path):
    dead = [mk.text for mk in _lint(tmp_path).parsed.masks if mk.kind == "dead-branch"]
    assert any("out[i] -= 1" in t for t in dead) and not any("out[i] += 1" in t for t in dead)
    assert not [mk for mk in _lint(tmp_path, with_context=False).parsed.masks if mk.kind == "dead-branch"]
    # a name the file undefines or redefines keeps the file's own reading
    dead = [mk.text for mk in _lint(tmp_path, kernel=_KERNEL.replace("#if USE_FAST", "#undef USE_FAST\n#if USE_FAST"))
            .parsed.masks if mk.kind == "dead-branch"]
    assert any("out[i] += 1" in t for t in dead) and not any("out[i] -= 1" in t for t in dead)


def test_header_object_like_macros_have_values(tmp_path):
    m = _lint(tmp_path).model
    assert m.macros["BLOCK"] == 256
    assert "STEP" not in m.macros and "STEP" in m.constant_names  # two definitions, the build's choice unknown
    assert "BLOCK" not in _lint(tmp_path, with_context=False).model.macros
    m = _lint(tmp_path, kernel="#define BLOCK 128\n" + _KERNEL).model
    assert m.macros["BLOCK"] == 128


def test_header_macros_are_known_to_the_front_end(tmp_path):
    r = _lint(tmp_path)
    helper = next(f for f in r.model.functions if f.name == "helper")
    assert helper.is_device_code  # DEVICE_INLINE expands to __device__ __forceinline__
    r0 = _lint(tmp_path, with_context=False)
    assert not next(f for f in r0.model.functions if f.name == "helper").is_device_code  # unknown: host code
    # a statement macro the file uses without `;`: masked with its header; without it the grammar reads
    # `BARRIER out[1] = 2;` as the declaration of an array `out` of type BARRIER
    kernel = '#include "cfg.h"\n__global__ void k(int* out) {\n    out[0] = 1;\n    BARRIER\n    out[1] = 2;\n}\n'

    def declarations(r):
        return [n.text for n in r.model.nodes("declaration")]

    r = _lint(tmp_path, kernel)
    assert [mk.text for mk in r.parsed.masks if mk.kind == "macro-invocation"] == ["BARRIER"]
    assert not any(b"out[1]" in t for t in declarations(r))
    r0 = _lint(tmp_path, kernel, with_context=False)
    assert any(b"out[1]" in t for t in declarations(r0))


# ---- a run: cache key, headers analysed in context ------------------------------------------------------------

_BARRIERS = """#include "cfg.h"
__global__ void k(float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = out[threadIdx.x];
    __syncthreads();
#if USE_FAST
    __syncthreads();
#endif
    out[threadIdx.x] = s[63 - threadIdx.x];
}
"""


@pytest.fixture
def project_dir(tmp_path, monkeypatch):
    (tmp_path / "shaderlint.toml").write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / ".cache"))
    return tmp_path


def _run(capsys, *argv):
    from shaderlint.cli import main

    code = main(list(argv))
    return code, capsys.readouterr().out


def test_cache_key_covers_every_header_read(project_dir, capsys):
    _tree(project_dir, {"src/k.cu": _BARRIERS, "src/cfg.h": "#define USE_FAST 0\n"})
    code, out = _run(capsys, "src/k.cu")
    assert code == 0 and "SL402" not in out
    (project_dir / "src/cfg.h").write_text("#define USE_FAST 1\n")  # the second barrier is now compiled
    code, out = _run(capsys, "src/k.cu")
    assert code == 1 and "k.cu:7:5: SL402" in out
    code, out = _run(capsys, "src/k.cu")  # a hit of the new entry
    assert code == 1 and "k.cu:7:5: SL402" in out


def test_headers_included_by_cuda_sources_are_analysed_in_context(project_dir, capsys):
    header = _BARRIERS.replace('#include "cfg.h"\n', "").replace("__global__ void k", "__global__ void kh")
    _tree(project_dir, {
        "src/a.cu": '#define USE_FAST 1\n#include "kern.h"\n',
        "src/b.cu": '#define USE_FAST 0\n#include "kern.h"\n',
        "src/kern.h": header,
        "src/lonely.h": header,  # included by no CUDA source: not read
        "src/host.hpp": "int f();\n",  # included, but no device code: not linted
        "src/qual.h": "#define DEV __device__\n",
        "src/uses.hpp": "DEV int g(int x) { return x; }\n",  # device helpers only: not linted
        "src/qualk.h": "#define KERN __global__\n",
        "src/usesk.hpp": "KERN void kk(int* p) { p[0] = 1; }\n",  # a kernel through a header macro
        "src/said.h": "// __global__ void k(int* p); in a comment\nint h();\n",  # no kernel: not linted
        "src/gen.h": "#define GEN(n) \\\n  __global__ void n(int* p) { p[0] = 1; }\nGEN(k1)\n",  # a kernel-generating macro
        "src/c.cu": '#include "host.hpp"\n#include "qual.h"\n#include "uses.hpp"\n#include "qualk.h"\n'
                    '#include "usesk.hpp"\n#include "gen.h"\n#include "said.h"\n#include "sig.h"\n',
        # a kernel through a signature macro the header defines itself (flash-attn's launch templates)
        "src/sig.h": "#define DEFINE_K(name) __global__ void name(float *p)\nDEFINE_K(k_sig) { p[0] = 1; }\n",
    })
    code, out = _run(capsys, "src")
    assert code == 1
    # the first includer in path order (a.cu) gives kern.h its context: USE_FAST is 1 there
    assert "kern.h:6:5: SL402" in out.replace(os.sep, "/") and "lonely.h" not in out
    from shaderlint.config import SettingsResolver
    from shaderlint.project.run import plan_run, under_roots

    r = SettingsResolver(None, {})
    plan = plan_run(["src/a.cu", "src/b.cu", "src/c.cu"], r.for_path, under_roots(["src"]))
    added = [os.path.join("src", n) for n in ("gen.h", "kern.h", "sig.h", "usesk.hpp")]
    assert plan.files == ["src/a.cu", "src/b.cu", "src/c.cu"] + added
    assert plan.languages == {p: "cuda" for p in added}
    assert plan.contexts[os.path.join("src", "kern.h")].includer.endswith("a.cu")
    # headers outside the paths linted are not added
    plan = plan_run(["src/a.cu"], r.for_path, under_roots(["src/a.cu"]))
    assert plan.files == ["src/a.cu"]


def test_include_dirs_setting_is_relative_to_its_file_and_in_the_key(tmp_path):
    from shaderlint.config import ConfigError, load_config

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "shaderlint.toml").write_text('include-dirs = ["inc", "../common"]\n')
    st = load_config(str(tmp_path / "sub" / "shaderlint.toml"))
    assert st.include_dirs == (str(tmp_path / "sub" / "inc"), str(tmp_path / "common"))
    assert st.key() != Settings(config_path=st.config_path).key()
    (tmp_path / "bad.toml").write_text('include-dirs = "inc"\n')
    with pytest.raises(ConfigError, match="include-dirs"):
        load_config(str(tmp_path / "bad.toml"))


def test_a_header_loop_macro_asking_for_unrolling(tmp_path):
    from shaderlint.engine import lint_source

    kernel = ('#include "cfg.h"\nkernel void k(device float* p [[buffer(0)]]) {\n    float a = 0;\n'
              '    LOOP(int i = 0; i < 4; ++i) a += p[i];\n    p[0] = a;\n}\n')
    _tree(tmp_path, {"k.metal": kernel, "cfg.h": '#define LOOP(x) _Pragma("unroll") for (x)\n'})
    st = Settings()
    for ctx, want in ((_ctx(tmp_path, "k.metal", st, language="metal"), ["unroll"]), (None, [""])):
        r = lint_source(str(tmp_path / "k.metal"), kernel.encode(), st, file_context=ctx)
        assert [mk.value for mk in r.parsed.masks if mk.kind == "loop-macro"] == want


def test_a_header_pragma_macro_on_a_line_of_its_own_is_still_masked(tmp_path):
    kernel = ('#include "cfg.h"\n__global__ void k(float* p) {\n    float a = 0;\n    PRAGMA_UNROLL\n'
              '    for (int i = 0; i < 4; ++i) a += p[i];\n    p[0] = a;\n}\n')
    header = '#define PRAGMA_UNROLL _Pragma("unroll")\n#define MY_VALUE (4 + 1)\n'
    r = _lint(tmp_path, kernel, header)
    assert not [d for d in r.diagnostics if d.code == "SL001"]
    assert r.model.macros["MY_VALUE"] == 5


def test_show_settings_lists_the_include_dirs(project_dir, capsys):
    (project_dir / "shaderlint.toml").write_text('include-dirs = ["inc"]\n')
    _tree(project_dir, {"k.cu": "__global__ void k() {}\n"})
    code, out = _run(capsys, "--show-settings", "k.cu")
    assert code == 0 and f'include-dirs = ["{project_dir / "inc"}"]' in out.splitlines()


def test_a_header_kernel_template_is_bound_by_its_includers_launch(project_dir, capsys):
    # the translation unit's launch (in the .cu including the header) binds the header's template
    # kernel: report names the instance and takes the launch's block size
    _tree(project_dir, {
        "src/kern.h": "template <int B>\n__global__ void scale(float* p, int n) {\n"
                      "  int i = blockIdx.x * B + threadIdx.x;\n  if (i < n) p[i] *= 2.0f;\n}\n",
        "src/main.cu": '#include "kern.h"\nvoid run(float* p, int n) { scale<128><<<(n + 127) / 128, 128>>>(p, n); }\n',
    })
    code, out = _run(capsys, "report", "--output-format", "json", "src")
    import json

    rows = [(r["kernel"], r["threads_per_group"]) for r in json.loads(out)]
    assert rows == [("scale<128>", 128)]


def test_headers_in_one_includers_context_walk_the_includer_once(tmp_path, monkeypatch):
    """Several headers analysed in the context of one includer: its live #include lines are found once
    (kept by path, build macros and bytes), and bytes that changed are walked again."""
    import shaderlint.languages.conditions as conditions

    _tree(tmp_path, {"src/a.h": "#define A 1\n", "src/b.h": "#define B A\n", "src/c.h": "int c;\n"})
    includer = str(tmp_path / "src" / "k.cu")
    data = b'#include "a.h"\n#if 0\n#include "c.h"\n#endif\n#include "b.h"\n'
    walked: list[int] = []
    real = conditions.macro_delta
    monkeypatch.setattr(conditions, "macro_delta", lambda src, build=(): walked.append(len(src.data)) or real(src, build))
    project = Project()
    b = project.context(str(tmp_path / "src" / "b.h"), b"int b;\n", Settings(), "cuda", includer, data)
    a = project.context(str(tmp_path / "src" / "a.h"), b"#define A 1\n", Settings(), "cuda", includer, data)
    assert walked.count(len(data)) == 1
    assert [os.path.basename(p) for p, _ in b.files] == ["a.h"] and "A" in b.macros  # (not c.h: dead)
    assert a.files == ()
    # the includer edited (same path): its includes are read from the new bytes
    data2 = b'#include "c.h"\n#if defined(NOT_SET) && 0\n#include "a.h"\n#endif\n#include "b.h"\n'
    b2 = project.context(str(tmp_path / "src" / "b.h"), b"int b;\n", Settings(), "cuda", includer, data2)
    assert walked.count(len(data2)) == 1 and [os.path.basename(p) for p, _ in b2.files] == ["c.h"]
