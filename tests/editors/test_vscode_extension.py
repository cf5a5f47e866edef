"""The VS Code extension builds, its unit tests pass and it packs to a .vsix (never committed).

Runs `npm ci`, `npm test` (TypeScript compile + node's test runner on the
settings-to-launch logic) and `npx @vscode/vsce package` in a copy of
`vscode-extension/`, so the working tree gets no node_modules/out/.vsix.
Skipped only when node/npm are not installed.
"""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "vscode-extension"

pytestmark = pytest.mark.skipif(shutil.which("npm") is None or shutil.which("node") is None,
                                reason="node/npm are not installed")


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_extension_compiles_tests_and_packages(tmp_path):
    work = tmp_path / "vscode-extension"
    shutil.copytree(EXT, work, ignore=shutil.ignore_patterns("node_modules", "out", "*.vsix"))
    _run(["npm", "ci", "--no-audit", "--no-fund"], work)
    tests = _run(["npm", "test"], work)
    assert "fail 0" in tests.stdout or "fail 0" in tests.stderr
    _run(["npx", "--no-install", "@vscode/vsce", "package", "--allow-missing-repository", "-o", str(tmp_path / "shaderlint.vsix")], work)
    vsix = tmp_path / "shaderlint.vsix"
    assert vsix.exists() and vsix.stat().st_size > 10_000
    with zipfile.ZipFile(vsix) as z:
        names = z.namelist()
    assert "extension/out/extension.js" in names
    assert "extension/package.json" in names
    assert "extension/language-configuration.json" in names
    assert any(n.startswith("extension/node_modules/vscode-languageclient/") for n in names)
    assert not any(n.startswith("extension/src/") for n in names), "TypeScript sources should not ship"
