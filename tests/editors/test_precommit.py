"""The pre-commit setup of docs/editors.md, run as written by pre-commit itself.

The YAML block of the "pre-commit" section is extracted from the documentation
and used unchanged as a project's ``.pre-commit-config.yaml``, except for the
``repo:`` URL, which points at a local hook repository: a fresh git repository
holding this working tree's package (as it is now, committed or not) on a
branch named like the documented ``rev``. The documented ``rev`` must also
exist in this repository, as a branch, a tag or a commit: a ``rev`` that does
not exist makes the snippet fail on its first run.

In the project repository, ``pre-commit install`` then ``git commit`` checks
what a user sees: findings fail the commit (GLSL files too, which ``identify``
has no tag for), clean files and files of other kinds pass, and vendored
shaders excluded by the project's configuration (``exclude``) or by
``.gitignore`` do not fail it (the hook's ``--force-exclude``).
Offline: pip resolves the dependencies from the configured indexes and caches.
The hook is installed once for the module (~15 s).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "editors.md"
PACKAGE_FILES = ("pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml")

yaml = pytest.importorskip("yaml", reason="PyYAML comes with pre-commit ([test] extras)")
pytest.importorskip("pre_commit", reason="pre-commit is in the [test] extras")

BAD_CUDA = """\
__global__ void bucketize(int *out, const int *in, int n, int buckets)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i < n; i += blockDim.x * gridDim.x)
        out[i] = in[i] / buckets;  // a load divided in every iteration: SL201
}
"""
BAD_GLSL = """\
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Data { int values[]; };
layout(push_constant) uniform Push { int count; int divisor; };
void main() {
    for (uint i = gl_GlobalInvocationID.x; i < uint(count); i += 64u)
        values[i] = values[i] / divisor;  // a load divided in every iteration: SL201
}
"""
CLEAN_CUDA = BAD_CUDA.replace("in[i] / buckets", "in[i] * buckets")
PROJECT_CONFIG = '[tool.shaderlint]\nexclude = ["third_party/**"]\nextend-select = ["SL201"]\n'  # SL201: opt-in

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def documented_snippet() -> str:
    """The YAML block of the pre-commit section of docs/editors.md."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("\n## pre-commit", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```yaml\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the pre-commit section should hold exactly one YAML block"
    return blocks[0]


def documented_repo() -> dict:
    config = yaml.safe_load(documented_snippet())
    assert len(config["repos"]) == 1
    repo = config["repos"][0]
    assert [h["id"] for h in repo["hooks"]] == ["shaderlint"]
    return repo


def _git(cwd: Path, *args: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          env={**(env or os.environ), **GIT_ENV}, timeout=600)
    if check:
        assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stdout}{proc.stderr}"
    return proc


def _resolves(rev: str) -> bool:
    return any(_git(ROOT, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False).returncode == 0
               for ref in (rev, f"refs/remotes/origin/{rev}", f"refs/tags/{rev}"))


def test_documented_rev_exists_in_this_repository():
    rev = str(documented_repo()["rev"])
    if _git(ROOT, "rev-parse", "--git-dir", check=False).returncode != 0:
        pytest.skip("not a git checkout: cannot look the documented rev up")
    if not _resolves(rev) and _git(ROOT, "rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip(f"shallow clone without {rev!r}: cannot tell whether it exists")
    assert _resolves(rev), f"docs/editors.md documents rev {rev!r}, which is no branch, tag or commit here"


def test_documented_repository_is_the_one_the_extension_names():
    manifest = json.loads((ROOT / "vscode-extension" / "package.json").read_text(encoding="utf-8"))
    assert manifest["repository"]["url"].removesuffix(".git") == documented_repo()["repo"]


def hook_repository(dest: Path, branch: str) -> Path:
    """A git repository whose `branch` holds this working tree's package (what `pip install .` needs)."""
    assert not re.fullmatch(r"[0-9a-f]{7,40}", branch), "a commit rev cannot be recreated from the working tree"
    dest.mkdir()
    for name in PACKAGE_FILES:
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "shaderlint", dest / "shaderlint",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _git(dest, "init", "-q", "-b", branch)
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "hook repository under test")
    return dest


class Project:
    """A project repository with the documented .pre-commit-config.yaml, its hook installed."""

    def __init__(self, base: Path) -> None:
        self.repo = documented_repo()
        self.hooks = hook_repository(base / "shaderlint-hook", str(self.repo["rev"]))
        self.path = base / "project"
        self.path.mkdir()
        _git(self.path, "init", "-q", "-b", "main")
        # the documented snippet as written, but for the URL of the (not yet published) repository
        snippet = documented_snippet()
        assert snippet.count(self.repo["repo"]) == 1
        (self.path / ".pre-commit-config.yaml").write_text(snippet.replace(self.repo["repo"], str(self.hooks)))
        (self.path / "pyproject.toml").write_text(PROJECT_CONFIG)
        (self.path / ".gitignore").write_text("generated/\n")
        self.env = {**os.environ, "PRE_COMMIT_HOME": str(base / "cache"), "PRE_COMMIT_COLOR": "never",
                    "SHADERLINT_CACHE_DIR": str(base / "shaderlint-cache")}
        self.env.pop("PYTHONPATH", None)  # the hook must run the package pre-commit installed
        self.commit([".pre-commit-config.yaml", "pyproject.toml", ".gitignore"], expect=None, no_verify=True)
        install = subprocess.run([sys.executable, "-m", "pre_commit", "install", "--install-hooks"], cwd=self.path,
                                 env=self.env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
        assert install.returncode == 0, install.stdout + install.stderr

    def write(self, rel: str, text: str) -> str:
        path = self.path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return rel

    def commit(self, files: list[str], expect: bool | None, no_verify: bool = False) -> str:
        """Stage `files` and commit them; `expect`: whether the commit should succeed. Returns the output."""
        _git(self.path, "add", "-f", *files)
        proc = _git(self.path, "commit", "-m", "change", *(["--no-verify"] if no_verify else []),
                    check=False, env=self.env)
        out = proc.stdout + proc.stderr
        if expect is not None:
            assert (proc.returncode == 0) == expect, out
        if proc.returncode != 0:
            _git(self.path, "reset", "-q")
        return out


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return Project(tmp_path_factory.mktemp("precommit"))


def test_findings_fail_the_commit(project):
    out = project.commit([project.write("src/bad.cu", BAD_CUDA), project.write("src/bad.comp", BAD_GLSL),
                          project.write("src/notes.txt", "x = a / n\n")], expect=False)
    assert re.search(r"shaderlint\.+Failed", out), out
    assert "src/bad.cu:5:" in out and "SL201" in out
    assert "src/bad.comp:7:" in out  # GLSL, matched by name: identify has no tag for it
    assert "notes.txt" not in out


def test_clean_files_pass(project):
    out = project.commit([project.write("src/clean.cu", CLEAN_CUDA), project.write("src/readme.txt", "a / n\n")],
                         expect=True)
    assert re.search(r"shaderlint\.+Passed", out), out


def test_vendored_shaders_excluded_in_configuration_do_not_fail_the_commit(project):
    vendored = [project.write("third_party/lib/kernels/bad.cu", BAD_CUDA),
                project.write("third_party/lib/bad.comp", BAD_GLSL),
                project.write("generated/deep/bad.cu", BAD_CUDA)]  # git-ignored, added with `git add -f`
    out = project.commit([*vendored, project.write("src/clean2.cu", CLEAN_CUDA)], expect=True)
    assert re.search(r"shaderlint\.+Passed", out), out
    # the exclusion is shaderlint's, not the file list's: a finding next to them still fails the commit
    out = project.commit([project.write("third_party/lib/kernels/bad2.cu", BAD_CUDA),
                          project.write("src/bad3.cu", BAD_CUDA)], expect=False)
    assert "src/bad3.cu:5:" in out
    assert "third_party" not in out


def test_autoupdate_pins_the_documented_rev_to_a_commit_or_tag(project, tmp_path):
    """The docs say `pre-commit autoupdate` pins the branch; the pinned rev holds the hook."""
    work = tmp_path / "autoupdate"
    shutil.copytree(project.path, work, ignore=shutil.ignore_patterns(".git"))
    _git(work, "init", "-q")
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "autoupdate"], cwd=work, env=project.env,
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rev = yaml.safe_load((work / ".pre-commit-config.yaml").read_text())["repos"][0]["rev"]
    assert rev == _git(project.hooks, "rev-parse", "HEAD").stdout.strip()  # no tags: the commit
