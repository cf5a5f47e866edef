"""The Neovim setup of docs/editors.md, run as written in a headless Neovim.

The Lua block of the "Neovim" section is extracted from the documentation and
loaded unchanged; a small harness opens a CUDA file, waits (``vim.wait``, on
the diagnostics, no sleep) for the server's diagnostics and writes them out.
``shaderlint`` is resolved from ``PATH`` exactly as the documented ``cmd`` says:
a shim directory puts this interpreter's shaderlint first. Neovim is installed
by ``.ci/install-system-deps``; the test skips only if it is still missing.
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
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    int bucket = in[i] / n;
    out[i] = (float)bucket;
}
"""
SL201_LINE = 5  # 0-based

HARNESS = r"""
dofile(CONFIG)
vim.cmd("edit " .. vim.fn.fnameescape(FILE))
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


@pytest.mark.skipif(shutil.which("nvim") is None, reason="nvim is not installed (.ci/install-system-deps installs it)")
def test_neovim_shows_shaderlint_diagnostics(tmp_path):
    shim = tmp_path / "bin"
    shim.mkdir()
    exe = shim / "shaderlint"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} -m shaderlint \"$@\"\n")
    exe.chmod(0o755)
    work = tmp_path / "project"
    work.mkdir()
    source = work / "normalize.cu"
    source.write_text(KERNEL)
    config = tmp_path / "shaderlint.lua"
    config.write_text(documented_config())
    out = tmp_path / "diagnostics.txt"
    check = tmp_path / "check.lua"
    check.write_text(f"local CONFIG = {_lua_string(str(config))}\nlocal FILE = {_lua_string(str(source))}\n"
                     f"local OUT = {_lua_string(str(out))}\n" + HARNESS)
    env = {
        **os.environ,
        "PATH": f"{shim}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
        "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    proc = subprocess.run(["nvim", "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {check}"],
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
