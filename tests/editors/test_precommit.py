"""The pre-commit hook of .pre-commit-hooks.yaml, run by pre-commit itself.

``pre-commit try-repo`` installs a hook repository from its committed HEAD, so
the test first copies the working tree's packaging files (as they are now,
committed or not) into a fresh git repository and commits them there. It then
runs the hook in a second repository holding shader files: files with a
finding fail the hook (GLSL ones too, which ``identify`` has no tag for), a
clean one passes, a file of another kind is not passed to shaderlint.
Offline: pip resolves the dependencies from the configured indexes and caches.
Each ``try-repo`` installs the hook afresh (~15 s), so there are two runs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_FILES = ("pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml")

pytest.importorskip("pre_commit", reason="pre-commit is in the [test] extras")

BAD_CUDA = """\
__global__ void bucketize(int *out, const int *in, int n, int buckets)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = in[i] / buckets;
}
"""
BAD_GLSL = """\
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Data { int values[]; };
layout(push_constant) uniform Push { int count; int divisor; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= uint(count)) return;
    values[i] = values[i] / divisor;
}
"""
CLEAN_CUDA = BAD_CUDA.replace("in[i] / buckets", "in[i] * buckets")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"})


def hook_repository(dest: Path) -> Path:
    """A git repository whose HEAD is this working tree's package (what `pip install .` needs)."""
    dest.mkdir()
    for name in PACKAGE_FILES:
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "shaderlint", dest / "shaderlint",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "hook repository under test")
    return dest


@pytest.fixture(scope="module")
def hooks(tmp_path_factory):
    """Runs the `shaderlint` hook of the copied repository on files of a project repository."""
    base = tmp_path_factory.mktemp("precommit")
    repo = hook_repository(base / "shaderlint-hook")
    project = base / "project"
    project.mkdir()
    _git(project, "init", "-q")
    (project / "bad.cu").write_text(BAD_CUDA)
    (project / "bad.comp").write_text(BAD_GLSL)
    (project / "clean.cu").write_text(CLEAN_CUDA)
    (project / "notes.txt").write_text("x = a / n\n")
    _git(project, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(base / "cache"), "PRE_COMMIT_COLOR": "never"}
    env.pop("PYTHONPATH", None)

    def run(*files: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(repo), "shaderlint",
                               "--files", *files], cwd=project, env=env, capture_output=True, text=True, timeout=600)

    return run


def test_hook_fails_on_findings_and_skips_other_files(hooks):
    proc = hooks("bad.cu", "bad.comp", "notes.txt")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(r"shaderlint\.+Failed", proc.stdout), proc.stdout
    assert "bad.cu:5:" in proc.stdout and "SL201" in proc.stdout
    assert "bad.comp:8:" in proc.stdout  # GLSL, matched by name: identify has no tag for it
    assert "notes.txt" not in proc.stdout


def test_hook_passes_on_a_clean_file(hooks):
    proc = hooks("clean.cu", "notes.txt")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"shaderlint\.+Passed", proc.stdout), proc.stdout
