"""The include walk of a run is done once per header and state (``shaderlint.project.includes._Summary``):
a later file replays what a header's walk did, and gets the very context a walk of its own gives."""

from __future__ import annotations

import os

import pytest

import shaderlint.project.includes as inc_mod
from shaderlint.config import Settings
from shaderlint.project.includes import Project, _live_includes, _uncertain
from shaderlint.model.source import Source


def _tree(root, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _context(root, rel, project, includer=None, settings=None):
    p = str(root / rel)
    inc = str(root / includer) if includer else None
    return project.context(p, open(p, "rb").read(), settings or Settings(), "cuda", inc,
                           open(inc, "rb").read() if inc else None)


def _whole(ctx):
    """Everything a context holds, in order (macros and state too)."""
    return (ctx.path, ctx.includer, ctx.files, ctx.unresolved, list(ctx.macros.items()), ctx.state,
            sorted(ctx.uncertain), ctx.flags, ctx.truncated, ctx.unread)


def _alone_and_shared(root, order, includers=None):
    """Each file's context planned on its own (a fresh project) and in one shared project, in ``order``."""
    includers = includers or {}
    shared = Project()
    got = [_whole(_context(root, f, shared, includers.get(f))) for f in order]
    alone = [_whole(_context(root, f, Project(), includers.get(f))) for f in order]
    return got, alone, shared


#: Headers sharing includes, with guards, #undef and redefinitions, and a header included twice.
_PROJECT = {
    "common.h": "#pragma once\n#define N 4\n#define M 1\n",
    "undef.h": '#include "common.h"\n#undef M\n#define K (N * 2)\n',
    "x.h": '#ifndef X_H\n#define X_H\n#include "common.h"\n#define X 1\n#define N 8\n#endif\n',
    "y.h": '#include "x.h"\n#include "missing.h"\n#define Y X\n#define M 3\n',
    "z.h": '#include "y.h"\n#include "undef.h"\n#if N > 4\n#define BIG 1\n#else\n#define BIG 0\n#endif\n',
    "a.cu": '#include "x.h"\n#include "z.h"\n',
    "b.cu": '#include "z.h"\n',
    "c.cu": '#include "undef.h"\n#include "y.h"\n#include "z.h"\n',
    "d.cu": '#include "z.h"\n#include "x.h"\n#include "common.h"\n',
}


def test_a_shared_run_gives_each_file_the_context_of_its_own_walk(tmp_path):
    _tree(tmp_path, _PROJECT)
    for order in (["a.cu", "b.cu", "c.cu", "d.cu"], ["d.cu", "c.cu", "b.cu", "a.cu"], ["b.cu", "a.cu", "b.cu"]):
        got, alone, _ = _alone_and_shared(tmp_path, order)
        assert got == alone


def test_later_files_replay_the_walk_instead_of_visiting_the_headers(tmp_path, monkeypatch):
    _tree(tmp_path, _PROJECT)
    project = Project()
    _context(tmp_path, "b.cu", project)
    visited: list[str] = []
    real = Project.header
    monkeypatch.setattr(Project, "header",
                        lambda self, path, *a, **k: visited.append(path) or real(self, path, *a, **k))
    ctx = _context(tmp_path, "b.cu", project)
    assert visited == []  # (z.h's walk replayed whole)
    assert [os.path.basename(p) for p, _ in ctx.files] == ["z.h", "y.h", "x.h", "common.h", "undef.h"]
    assert ctx.macros["K"].body == "(N * 2)" and "M" not in ctx.macros and ctx.unresolved == ("missing.h",)


def test_a_header_visited_already_by_the_file_is_not_replayed_from_a_walk_that_read_it(tmp_path):
    """a.cu reads x.h before z.h: z.h's walk there does not read x.h. b.cu reads z.h first: x.h is
    read inside it, and its macros come in z.h's order."""
    _tree(tmp_path, _PROJECT)
    project = Project()
    a = _context(tmp_path, "a.cu", project)
    b = _context(tmp_path, "b.cu", project)
    assert [os.path.basename(p) for p, _ in a.files] == ["x.h", "common.h", "z.h", "y.h", "undef.h"]
    assert [os.path.basename(p) for p, _ in b.files] == ["z.h", "y.h", "x.h", "common.h", "undef.h"]
    assert _whole(b) == _whole(_context(tmp_path, "b.cu", Project()))


def test_headers_in_an_includers_context_stop_where_they_are_included(tmp_path):
    """x.h analysed in the context of b.cu stops before x.h, inside z.h's walk: that walk (kept from
    b.cu's own context) is not replayed through it."""
    _tree(tmp_path, _PROJECT)
    includers = {"x.h": "b.cu", "undef.h": "b.cu", "common.h": "c.cu"}
    got, alone, _ = _alone_and_shared(tmp_path, ["b.cu", "c.cu", "x.h", "undef.h", "common.h", "b.cu"], includers)
    assert got == alone
    shared = Project()
    _context(tmp_path, "b.cu", shared)
    x = _context(tmp_path, "x.h", shared, "b.cu")
    # (z.h and y.h read up to x.h's line, none of their macros defined yet; then x.h's own include)
    assert [os.path.basename(p) for p, _ in x.files] == ["z.h", "y.h", "common.h"]
    assert "Y" not in x.macros and "BIG" not in x.macros and x.macros["N"].body == "4"


@pytest.mark.parametrize("bound, value", [("MAX_DEPTH", 3), ("MAX_FILES", 4), ("MAX_BYTES", 120)])
def test_a_walk_replayed_nearer_a_bound_is_walked_and_truncated_there(tmp_path, monkeypatch, bound, value):
    """d.cu reads z.h at depth 1 and its includes below; e.cu reaches z.h deeper (or after more
    bytes and files): the bound cuts the walk there as a walk of its own would."""
    _tree(tmp_path, _PROJECT | {"e.cu": '#include "e1.h"\n#include "z.h"\n', "e1.h": '#include "e2.h"\n',
                                "e2.h": '#include "z.h"\n// ' + "padding " * 4 + "\n"})
    monkeypatch.setattr(inc_mod, bound, value)
    got, alone, _ = _alone_and_shared(tmp_path, ["b.cu", "d.cu", "e.cu", "a.cu"])
    assert got == alone
    assert any(ctx[8] for ctx in got)  # (some walk reached the bound)


def test_a_changed_build_macro_the_headers_read_is_walked_again(tmp_path):
    _tree(tmp_path, {"h.h": '#if MODE == 1\n#include "one.h"\n#else\n#include "two.h"\n#endif\n',
                     "one.h": "#define ONE 1\n", "two.h": "#define TWO 2\n", "k.cu": '#include "h.h"\n'})
    project = Project()
    one = _context(tmp_path, "k.cu", project, settings=Settings(defines=("MODE=1",)))
    two = _context(tmp_path, "k.cu", project, settings=Settings(defines=("MODE=2",)))
    other = _context(tmp_path, "k.cu", project, settings=Settings(defines=("MODE=1", "UNRELATED=3")))
    assert "ONE" in one.macros and "TWO" not in one.macros
    assert "TWO" in two.macros and "ONE" not in two.macros
    assert _whole(other) == _whole(one)  # (a name no header mentions: the same walk, replayed)


def test_includes_before_the_first_conditional_need_no_branch_decided(monkeypatch):
    import shaderlint.languages.conditions as conditions

    calls: list[int] = []
    real = conditions.macro_delta
    monkeypatch.setattr(conditions, "macro_delta", lambda src, pre=(): calls.append(1) or real(src, pre))
    top = b'/* #include "no.h" */\n#include "a.h"\n#include <b.h>\nint x;\n#if 0\n#endif\n'
    got = _live_includes(Source("t.cu", top), ())
    assert [i.name for i in got] == ["a.h", "b.h"] and calls == []
    later = b'#include "a.h"\n#if 0\n#include "dead.h"\n#endif\n#include "c.h"\n'
    got = _live_includes(Source("t.cu", later), ())
    assert [i.name for i in got] == ["a.h", "c.h"] and calls == [1]


def test_uncertain_skips_definitions_in_dead_regions_however_they_overlap():
    data = b"#define A 1\n#define A 2\n#define B 1\n#define B 2\n#define C 1\n#define C 2\n"
    lines = [i for i in range(len(data)) if i == 0 or data[i - 1:i] == b"\n"]
    assert _uncertain("h.h", data, []) == {"A", "B", "C"}
    # (regions out of order, overlapping, empty)
    dead = [(lines[3] + 1, lines[3] + 1), (lines[1] + 1, lines[2] + 3), (lines[1], lines[2])]
    assert _uncertain("h.h", data, dead) == {"C"}  # (A's second and B's first definition dead)
    assert _uncertain("h.h", data, dead, Source("h.h", data)) == {"C"}
    dead = [(lines[3], lines[4] + 2), (lines[1], lines[2]), (lines[1] + 1, lines[3])]
    assert _uncertain("h.h", data, dead) == set()
