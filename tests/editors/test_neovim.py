"""The Neovim setup of docs/editors.md, run as written in a headless Neovim.

The Lua block of the "Neovim" section is extracted from the documentation and
used unchanged as the user's ``init.lua`` (``$XDG_CONFIG_HOME/nvim/init.lua``,
read by a plain ``nvim FILE``, runtime plugins included); a small harness run
after start-up waits (``vim.wait``, on the diagnostics, no sleep) for the
server's diagnostics on the CUDA file given on the command line and writes
them out. ``shaderlint`` is resolved from ``PATH`` exactly as the documented
``cmd`` says: a shim directory puts this interpreter's shaderlint first.

Neovim is installed by ``.ci/install-system-deps``. Without it the test skips,
except under ``.ci/run`` on a machine where that script can install it (root
or password-less sudo, and apt-get): there ``SHADERLINT_REQUIRE_NEOVIM=1`` makes
a missing Neovim a failure, so CI cannot pass by silently skipping the test.
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
DOC = ROOT / "docs" / "editors.md"

KERNEL = """\
// A row-wise normalisation: `n` is only known at run time.
__global__ void normalize_rows(float *out, const int *in, int n, int rows)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += blockDim.x * gridDim.x) {
        int bucket = in[i] / n;  // a load divided in every iteration: SL201 reports it
        out[i] = (float)bucket;
    }
}
"""
SL201_LINE = 4  # 0-based

HARNESS = r"""
local got = vim.wait(30000, function() return #vim.diagnostic.get(0) > 0 end, 20)
local lines = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or ""
  table.insert(lines, string.format("%d:%d:%s:%s:%s", d.lnum, d.col, tostring(code), d.source or "", d.message))
end
local f = io.open(OUT, "w")
f:write(table.concat(lines, "\n"))
f:close()
for _, client in pairs(vim.lsp.get_active_clients()) do
  vim.lsp.stop_client(client.id)
end
vim.wait(2000, function() return #vim.lsp.get_active_clients() == 0 end, 20)
if got then vim.cmd("qa!") else vim.cmd("cquit 1") end
"""


def documented_config() -> str:
    """The Lua block of the Neovim section of docs/editors.md."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("\n## Neovim", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```lua\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the Neovim section should hold exactly one Lua block"
    return blocks[0]


def test_documented_config_starts_shaderlint_lsp():
    config = documented_config()
    assert 'cmd = { "shaderlint", "lsp" }' in config
    assert "vim.lsp.start_client" in config and "vim.lsp.buf_attach_client" in config


def _lua_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def require_nvim() -> str:
    nvim = shutil.which("nvim")
    if nvim is None:
        if os.environ.get("SHADERLINT_REQUIRE_NEOVIM") == "1":
            pytest.fail("nvim is not installed, and SHADERLINT_REQUIRE_NEOVIM=1 (.ci/run on a machine where "
                        ".ci/install-system-deps can install it): see that script's output")
        pytest.skip("nvim is not installed (.ci/install-system-deps installs it)")
    return nvim


def test_neovim_shows_shaderlint_diagnostics(tmp_path):
    nvim = require_nvim()
    shim = tmp_path / "bin"
    shim.mkdir()
    exe = shim / "shaderlint"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} -m shaderlint \"$@\"\n")
    exe.chmod(0o755)
    work = tmp_path / "project"
    work.mkdir()
    (work / "shaderlint.toml").write_text('extend-select = ["SL201"]\n')  # opt-in; the test reads it
    source = work / "normalize.cu"
    source.write_text(KERNEL)
    init = tmp_path / "config" / "nvim" / "init.lua"  # where Neovim reads the user's init.lua
    init.parent.mkdir(parents=True)
    init.write_text(documented_config())
    out = tmp_path / "diagnostics.txt"
    check = tmp_path / "check.lua"
    check.write_text(f"local OUT = {_lua_string(str(out))}\n" + HARNESS)
    env = {
        **os.environ,
        "PATH": f"{shim}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
        "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    proc = subprocess.run([nvim, "--headless", "-i", "NONE", "-n", source.name, "-c", f"luafile {check}"],
                          cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    report = out.read_text() if out.exists() else ""
    assert proc.returncode == 0, f"nvim exited {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}\n{report}"
    rows = [line.split(":", 4) for line in report.splitlines()]
    sl201 = [r for r in rows if r[2] == "SL201"]
    assert sl201, report
    assert int(sl201[0][0]) == SL201_LINE
    assert int(sl201[0][1]) == KERNEL.splitlines()[SL201_LINE].index("/ n")
    assert sl201[0][3] == "shaderlint"
    assert "'n'" in sl201[0][4]
