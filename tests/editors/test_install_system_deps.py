""".ci/install-system-deps waits for the apt lock instead of giving up (and the Neovim test then skipping).

The script runs with a PATH of shims only: no `nvim` and no `glslangValidator`
(so it has something to install), a `dpkg-query` that reports the Vulkan
packages as given, `id` saying root, and an `apt-get` that reports a held lock, as apt
2.6 does for `apt-get update`'s lists lock whatever DPkg::Lock::Timeout says,
a given number of times before it succeeds. Nothing is installed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "install-system-deps"
TOOLS = ("grep", "sleep", "cat", "mktemp", "rm")

APT_GET = """#!{bash}
echo "$*" >> {log}
n=$(cat {count} 2>/dev/null || echo 0)
echo $((n + 1)) > {count}
if [ "$n" -lt {locked} ]; then
  echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
  echo "E: Unable to lock directory /var/lib/apt/lists/" >&2
  exit 100
fi
{then}
"""

pytestmark = pytest.mark.skipif(any(shutil.which(t) is None for t in ("bash", *TOOLS)), reason="needs bash and coreutils")


DPKG_QUERY = """#!/bin/sh
for pkg; do :; done
case " {installed} " in *" $pkg "*) printf installed;; *) exit 1;; esac
"""


def dpkg_query_shim(bin_dir: Path, installed: str = "libvulkan1 mesa-vulkan-drivers") -> None:
    (bin_dir / "dpkg-query").write_text(DPKG_QUERY.format(installed=installed))
    (bin_dir / "dpkg-query").chmod(0o755)


def run_script(tmp_path: Path, locked: int, then: str = "exit 0", timeout: int = 30,
               installed: str = "libvulkan1 mesa-vulkan-drivers") -> tuple[subprocess.CompletedProcess, list[str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        (bin_dir / tool).symlink_to(shutil.which(tool))
    (bin_dir / "id").write_text("#!/bin/sh\necho 0\n")
    dpkg_query_shim(bin_dir, installed)
    log = tmp_path / "apt-get.log"
    (bin_dir / "apt-get").write_text(APT_GET.format(bash=shutil.which("bash"), log=log, count=tmp_path / "count",
                                                    locked=locked, then=then))
    for shim in ("id", "apt-get"):
        (bin_dir / shim).chmod(0o755)
    env = {"PATH": str(bin_dir), "SHADERLINT_APT_LOCK_TIMEOUT": str(timeout), "SHADERLINT_APT_LOCK_RETRY": "0.1"}
    proc = subprocess.run([shutil.which("bash"), str(SCRIPT)], env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    calls = log.read_text().splitlines() if log.exists() else []
    return proc, calls


def test_waits_for_a_held_lock_then_installs(tmp_path):
    proc, calls = run_script(tmp_path, locked=3)
    assert proc.returncode == 0, proc.stderr
    assert "waiting for the apt lock" in proc.stderr
    assert [c.split()[-1] for c in calls] == ["-qq"] * 4 + ["glslang-tools"]  # update x4 (3 locked), then install
    assert all(c.startswith("-o DPkg::Lock::Timeout=") for c in calls)  # apt waits for dpkg's locks itself
    assert "install -y -qq --no-install-recommends neovim glslang-tools" in calls[-1]


def test_installs_the_vulkan_packages_dpkg_lacks(tmp_path):
    proc, calls = run_script(tmp_path, locked=0, installed="libvulkan1")
    assert proc.returncode == 0, proc.stderr
    assert calls[-1].endswith("install -y -qq --no-install-recommends neovim glslang-tools mesa-vulkan-drivers")


def test_gives_up_after_the_lock_timeout_and_fails(tmp_path):
    proc, calls = run_script(tmp_path, locked=10**6, timeout=1)
    assert proc.returncode == 1
    assert "apt-get update failed" in proc.stderr and "Could not get lock" in proc.stderr
    assert len(calls) >= 2 and not any("install" in c for c in calls)


def test_other_failures_are_not_retried(tmp_path):
    proc, calls = run_script(tmp_path, locked=0, then='case "$*" in *install*) echo "E: Unable to locate package neovim" >&2; exit 100;; esac')
    assert proc.returncode == 1
    assert "Unable to locate package neovim" in proc.stderr and "could not install: neovim glslang-tools" in proc.stderr
    assert len(calls) == 2


def test_nothing_to_do_when_everything_is_there(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("nvim", "glslangValidator"):
        (bin_dir / tool).write_text("#!/bin/sh\n")
        (bin_dir / tool).chmod(0o755)
    dpkg_query_shim(bin_dir)
    proc = subprocess.run([shutil.which("bash"), str(SCRIPT)], env={"PATH": str(bin_dir)}, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 0 and proc.stderr == ""
