"""The .gitignore reader: each kind of pattern (a plain name, ``*suffix``, an anchored path, a glob)
answers as git does, whichever fast path it takes."""

import os

from shaderlint.discovery import GitIgnore, discover


def test_plain_name_matches_the_last_component_only():
    gi = GitIgnore(".", ["build\n"])
    assert gi.ignored("build", True) is True
    assert gi.ignored("a/b/build", False) is True
    assert gi.ignored("builder", True) is None
    assert gi.ignored("build/x.cu", False) is None  # the directory itself is pruned, not matched again


def test_suffix_pattern_and_negation_in_file_order():
    gi = GitIgnore(".", ["*.cuh\n", "!keep.cuh\n"])
    assert gi.ignored("a/x.cuh", False) is True
    assert gi.ignored("a/keep.cuh", False) is False
    assert gi.ignored("a/x.cuh.bak", False) is None
    gi = GitIgnore(".", ["!keep.cuh\n", "*.cuh\n"])  # the last rule that matches decides
    assert gi.ignored("keep.cuh", False) is True


def test_anchored_path_and_directory_only():
    gi = GitIgnore(".", ["/gen/out.cu\n", "tmp/\n"])
    assert gi.ignored("gen/out.cu", False) is True
    assert gi.ignored("x/gen/out.cu", False) is None
    assert gi.ignored("a/tmp", True) is True
    assert gi.ignored("a/tmp", False) is None  # a file named tmp: `tmp/` is for directories


def test_globs_and_bad_patterns():
    gi = GitIgnore(".", ["a/**/b.cu\n", "k?.metal\n", "*.[ch]\n", "x[]y\n", "\\#lit\n"])
    assert gi.ignored("a/b.cu", False) is True
    assert gi.ignored("a/p/q/b.cu", False) is True
    assert gi.ignored("d/k1.metal", False) is True
    assert gi.ignored("d/k12.metal", False) is None
    assert gi.ignored("z.h", False) is True
    assert len(gi.rules) == 4  # `x[]y` cannot match anything: skipped


def test_walk_reads_the_gitignore_of_each_directory(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("skip.cu\n")
    for p in ("a.cu", "skip.cu", "sub/skip.cu", "sub/b.cu"):
        (tmp_path / p).write_text("")
    monkeypatch.chdir(tmp_path)
    assert sorted(discover(["."])) == ["a.cu", "skip.cu", "sub/b.cu"]


def test_walks_of_one_run_share_directory_listings(tmp_path, monkeypatch):
    from shaderlint.discovery import release_listings, shared_listings

    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.cu").write_text("__global__ void a() {}\n")
    with shared_listings():
        assert list(discover(["src"])) == ["src/a.cu"]
        (tmp_path / "src" / "b.cu").write_text("__global__ void b() {}\n")
        assert list(discover(["src"])) == ["src/a.cu"]  # the second walk reads the first one's listing
        release_listings()
        assert list(discover(["src"])) == ["src/a.cu", "src/b.cu"]
    (tmp_path / "src" / "c.cu").write_text("__global__ void c() {}\n")
    assert list(discover(["src"])) == ["src/a.cu", "src/b.cu", "src/c.cu"]  # outside a run: the disk


def test_a_side_walk_finds_what_a_walk_of_its_own_finds(tmp_path, monkeypatch):
    """``side``: the files of a second kind (the host index's) come out of the same walk as they would
    out of their own, in the same order, with the same .gitignore, exclude globs, exclusion callback,
    symlinked and named paths; and the walk's own files are unchanged."""
    monkeypatch.chdir(tmp_path)
    files = ["a/k.cu", "a/h.cpp", "a/h.h", "a/notes.txt", "a/gen/x.cpp", "a/gen/y.cu", "b/ignored.cpp",
             "b/kept.cpp", "b/deep/m.metal", "b/deep/s.swift", "c/skip.cpp", "node_modules/n.cpp", "top.cpp"]
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("x\n")
    (tmp_path / ".gitignore").write_text("ignored.cpp\n/a/gen/\n")
    (tmp_path / "link").symlink_to(tmp_path / "b")
    shader = {".cu": "cuda", ".metal": "metal"}
    host = (".cpp", ".h", ".swift", ".cu")

    def language(p):
        return shader.get(os.path.splitext(p)[1])

    def accept(p, lang):
        return lang == "metal" or p.endswith(host)

    for paths in (["."], ["a", "b", "link", "top.cpp", "a/notes.txt"], ["top.cpp", "b", "."]):
        kw = dict(is_excluded=lambda p: p.startswith("c"), exclude=("*/skip.cpp",))
        side: list[str] = []
        walked = list(discover(paths, side=(accept, side), language_for=language, **kw))
        assert walked == list(discover(paths, language_for=language, **kw))
        alone = list(discover(paths, language_for=lambda p: "x" if accept(p, language(p)) else None, **kw))
        assert side == alone and side


def test_the_walk_memo_is_taken_only_when_nothing_it_was_found_from_changed(tmp_path, monkeypatch, capsys):
    """The command line's walk is kept for the next run (WalkMemo): taken when nothing changed (no
    walk), and never stale: a file added or removed, a .gitignore (here or above the path walked)
    or a configuration edited, a symbolic link retargeted or left dangling, a directory added."""
    import shaderlint.cli as cli
    import shaderlint.discovery as discovery

    monkeypatch.setattr(discovery.WalkMemo, "RACY_NS", 0)  # (the files are written just now)
    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "root"
    for f in ("p/a.cu", "p/sub/b.cu", "p/sub/c.comp", "elsewhere/x.cu"):
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text("x\n")
    (root / ".git").mkdir()  # (a .gitignore above the path walked applies in a repository)
    monkeypatch.chdir(root)
    walks: list[int] = []
    real = cli.discover
    monkeypatch.setattr(cli, "discover", lambda *a, **k: walks.append(1) or real(*a, **k))
    collected: list[tuple] = []
    real_collect = cli.collect_files
    monkeypatch.setattr(cli, "collect_files", lambda *a: collected.append(real_collect(*a)) or collected[-1])
    tick = iter(range(1, 1 << 20))

    def show(*paths: str) -> list[str]:
        """The files a lint run lints (a lint run keeps its walk)."""
        cli.main(["--fail-on", "never", "-q", "-o", os.devnull, *paths])
        return sorted(collected[-1][0])

    def touch(path) -> None:  # (a modification time the file never had: an edit in the same tick is seen)
        os.utime(path, ns=(1_000_000_000_000_000_000 + next(tick) * 10**9,) * 2)

    assert show("p") == show("p") == ["p/a.cu", "p/sub/b.cu", "p/sub/c.comp"] and len(walks) == 1
    assert (tmp_path / "cache/CACHEDIR.TAG").is_file() and list((tmp_path / "cache").glob("walks-*.json"))
    (root / "p/sub/d.cu").write_text("x\n")  # added
    assert show("p") == ["p/a.cu", "p/sub/b.cu", "p/sub/c.comp", "p/sub/d.cu"] and len(walks) == 2
    (root / "p/a.cu").unlink()  # removed
    assert show("p") == ["p/sub/b.cu", "p/sub/c.comp", "p/sub/d.cu"]
    (root / "p/sub/.gitignore").write_text("b.cu\n")
    assert show("p") == ["p/sub/c.comp", "p/sub/d.cu"]
    (root / "p/sub/.gitignore").write_text("d.cu\n")  # edited (the same size)
    touch(root / "p/sub/.gitignore")
    assert show("p") == ["p/sub/b.cu", "p/sub/c.comp"]
    (root / ".gitignore").write_text("*.comp\n")  # above the path walked
    assert show("p") == ["p/sub/b.cu"]
    (root / ".gitignore").write_text("*.cuh\n")
    touch(root / ".gitignore")
    assert show("p") == ["p/sub/b.cu", "p/sub/c.comp"]
    (root / "shaderlint.toml").write_text('exclude = ["p/sub/c.*"]\n')  # a configuration
    assert show("p") == ["p/sub/b.cu"]
    (root / "shaderlint.toml").write_text('exclude = ["p/sub/b.*"]\n')
    touch(root / "shaderlint.toml")
    assert show("p") == ["p/sub/c.comp"]
    (root / "shaderlint.toml").unlink()
    (root / "p/link").symlink_to(root / "elsewhere")  # a symbolic link to a directory
    assert show("p") == ["p/link/x.cu", "p/sub/b.cu", "p/sub/c.comp"]
    (root / "elsewhere/y.cu").write_text("x\n")  # (in the directory it points to)
    assert show("p") == ["p/link/x.cu", "p/link/y.cu", "p/sub/b.cu", "p/sub/c.comp"]
    (root / "elsewhere").rename(root / "gone")  # dangling
    assert show("p") == ["p/sub/b.cu", "p/sub/c.comp"]
    (root / "gone").rename(root / "elsewhere")
    (root / "p/new/deeper").mkdir(parents=True)  # a directory
    assert show("p") == ["p/link/x.cu", "p/link/y.cu", "p/sub/b.cu", "p/sub/c.comp"]
    (root / "p/new/deeper/e.cu").write_text("x\n")
    n = len(walks)
    assert show("p") == ["p/link/x.cu", "p/link/y.cu", "p/new/deeper/e.cu", "p/sub/b.cu", "p/sub/c.comp"]
    assert show("p") == show("p") and len(walks) == n + 1  # (unchanged: taken)
    assert show("--no-cache", "p") == show("p") and len(walks) == n + 2
    (tmp_path / "out").mkdir()
    (tmp_path / "out/k.cu").write_text("x\n")
    (root / "p/lk.cu").symlink_to(tmp_path / "out/k.cu")  # a symbolic link to a file outside
    assert "p/lk.cu" in show("p") and "p/lk.cu" in show("p")
    (tmp_path / "out/k.cu").rename(tmp_path / "out/k2.cu")  # dangling (p's entries are the same)
    assert "p/lk.cu" not in show("p")
