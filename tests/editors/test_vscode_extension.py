"""The VS Code extension builds as the README and docs/editors.md say, with no prompt, and packs to a .vsix.

The build command of the README's "Editors and hooks" section (the same as the
docs' VS Code block) runs as written in a copy of `vscode-extension/` (so the
working tree gets no node_modules/out/.vsix), in a pseudo-terminal: `vsce`
asks its y/N questions (a missing `repository`, LICENSE, ...) only on a
terminal, and a question fails the test instead of hanging it. The .vsix must
ship the esbuild bundle (no node_modules), the icon, the LICENSE and the
manifest fields, and the bundle must load with nothing but a `vscode` module.
`npm test` runs the unit tests of the settings-to-launch logic. The build is
skipped only when node/npm are not installed; the license and icon checks need
neither.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "vscode-extension"
PROMPT = re.compile(rb"\[y/N\]|Ok to proceed\?", re.I)  # vsce's questions; npx's before a download

needs_node = pytest.mark.skipif(shutil.which("npm") is None or shutil.which("node") is None,
                                reason="node/npm are not installed")


def readme_build_command() -> str:
    """The extension's build command in the README (`npm ci && ... package`)."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Editors and hooks", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"\(`(npm ci[^`]*)`", section)
    assert len(commands) == 1, section
    return commands[0]


def docs_build_block() -> list[str]:
    """The sh block of the VS Code section of docs/editors.md, one command per line."""
    section = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8").split("\n## VS Code", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    return [line for line in blocks[0].splitlines() if line.strip()]


def run_in_terminal(command: str, cwd: Path, timeout: float = 900) -> str:
    """Run `command` (bash) with a pseudo-terminal as stdin/stdout/stderr; fail on a y/N question."""
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(["bash", "-c", command], cwd=cwd, stdin=slave, stdout=slave, stderr=slave,
                            start_new_session=True)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 1.0)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: every writer has closed the terminal
                    data = b""
                if not data:
                    break
                out += data
                if PROMPT.search(out):
                    pytest.fail(f"{command!r} stopped at a question:\n{out[-3000:].decode(errors='replace')}")
            if time.monotonic() > deadline:
                pytest.fail(f"{command!r} did not finish in {timeout} s:\n{out[-3000:].decode(errors='replace')}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        os.close(master)
    text = out.decode(errors="replace")
    assert proc.returncode == 0, f"{command!r} exited {proc.returncode}:\n{text[-3000:]}"
    return text


def _run(cmd: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
                          env=env)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_docs_and_readme_give_the_same_build():
    command = readme_build_command()
    lines = docs_build_block()
    assert lines[0] == "cd vscode-extension"
    assert lines[1] == command
    assert re.fullmatch(r"code --install-extension shaderlint-\*\.vsix", lines[2])
    assert len(lines) == 3


@needs_node
def test_extension_builds_without_questions_tests_pass_and_vsix_ships_the_bundle(tmp_path):
    work = tmp_path / "vscode-extension"
    shutil.copytree(EXT, work, ignore=shutil.ignore_patterns("node_modules", "out", "*.vsix"))
    run_in_terminal(readme_build_command(), work)
    vsixes = sorted(work.glob("shaderlint-*.vsix"))  # what the docs' `code --install-extension` names
    assert len(vsixes) == 1, vsixes
    vsix = vsixes[0]

    tests = _run(["npm", "test"], work)
    assert re.search(r"\bfail 0\b", tests.stdout + tests.stderr)
    assert re.search(r"\bpass [1-9]", tests.stdout + tests.stderr)

    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("extension/package.json"))
        z.extractall(tmp_path / "unpacked")
    for name in ("extension/out/extension.js", "extension/package.json", "extension/language-configuration.json",
                 "extension/LICENSE.txt", "extension/images/icon.png"):
        assert name in names, sorted(names)
    assert not any("/node_modules/" in n for n in names), "the bundle replaces node_modules"
    assert not any(n.startswith("extension/src/") or n.endswith((".ts", ".map", ".py")) for n in names), sorted(names)
    assert manifest["repository"]["url"].startswith("https://") and manifest["icon"] == "images/icon.png"
    assert manifest["license"] == "MIT"

    # the bundle needs no node_modules: it loads with a stand-in for the `vscode` module VS Code provides
    stub = tmp_path / "stub" / "vscode"
    stub.mkdir(parents=True)
    (stub / "index.js").write_text("module.exports = new Proxy({}, { get: () => function () { return {}; } });\n")
    probe = ("const e = require(process.argv[1]);"
             "if (typeof e.activate !== 'function' || typeof e.deactivate !== 'function') process.exit(3);")
    _run(["node", "-e", probe, str(tmp_path / "unpacked" / "extension" / "out" / "extension.js")], tmp_path,
         env={**os.environ, "NODE_PATH": str(tmp_path / "stub")})


def test_licenses_are_mit_and_agree():
    root = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert root.startswith("MIT License") and "the shaderlint authors" in root
    assert (EXT / "LICENSE").read_text(encoding="utf-8") == root
    assert 'license = { text = "MIT" }' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert json.loads((EXT / "package.json").read_text(encoding="utf-8"))["license"] == "MIT"


def test_icon_is_a_128px_png_drawn_by_its_script(tmp_path):
    icon = (EXT / "images" / "icon.png").read_bytes()
    assert icon[:8] == b"\x89PNG\r\n\x1a\n" and icon[12:16] == b"IHDR"
    assert struct.unpack(">II", icon[16:24]) == (128, 128)
    script = tmp_path / "icon.py"
    shutil.copy2(EXT / "images" / "icon.py", script)
    subprocess.run([sys.executable, str(script)], check=True, timeout=60)
    assert (tmp_path / "icon.png").read_bytes() == icon, "images/icon.png differs from what images/icon.py draws"
