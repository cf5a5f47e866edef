"""End-to-end: the VS Code extension in a real VS Code (code-server + headless Chromium).

With the real language server: squiggles and Problems-panel rows appear, and a
quick fix picked from the Ctrl+. menu edits the file (checked on disk after
Ctrl+S) and its finding goes away.

Skipped unless SHADERLINT_E2E=1. Needs node 20, npm, and (Debian, as root)
``apt-get install -y chromium libkrb5-dev ripgrep`` plus a C++ toolchain for
code-server's argon2. The first run installs code-server into
tests/e2e/vscode/node_modules (~50 s, ~300 MB); later runs reuse it.
See tests/e2e/vscode/README.md.

Environment:
  SHADERLINT_E2E=1            run these tests
  SHADERLINT_E2E_SERVER=...   JSON array used as `shaderlint.path` instead of
                              `shaderlint.interpreter = [sys.executable]`
  SHADERLINT_E2E_ARTIFACTS=D  keep a screenshot of a failing run in D
  CHROMIUM=/path/to/chromium  browser to drive (default /usr/bin/chromium)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.environ.get("SHADERLINT_E2E") != "1", reason="end-to-end test: set SHADERLINT_E2E=1"),
]

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "vscode-extension"
HARNESS = Path(__file__).resolve().parent / "vscode"
WORKSPACE_TEMPLATE = HARNESS / "workspace"
CUDA_FILE = "kernel.cu"
METAL_FILE = "kernel.metal"
DRIVER_TIMEOUT_S = 240


def _run(cmd: list[str], cwd: Path, timeout: float) -> None:
    __tracebackhide__ = True
    proc = subprocess.run(
        cmd, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed ({proc.returncode}) in {cwd}:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")


@pytest.fixture(scope="module")
def tools() -> None:
    missing = [tool for tool in ("node", "npm", "rg") if shutil.which(tool) is None]
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    if not Path(chromium).exists():
        missing.append(chromium)
    if missing:
        pytest.fail(f"missing for the VS Code e2e test: {', '.join(missing)} (see tests/e2e/vscode/README.md)")


@pytest.fixture(scope="module")
def vsix(tools, tmp_path_factory) -> Path:
    """Build the extension and pack it into a temporary .vsix (never in the source tree)."""
    if not (EXTENSION / "node_modules" / "vscode-languageclient").is_dir():
        _run(["npm", "ci", "--no-audit", "--no-fund"], EXTENSION, 600)
    _run(["npm", "run", "compile"], EXTENSION, 300)
    out = tmp_path_factory.mktemp("vsix") / "shaderlint.vsix"
    _run(["npx", "vsce", "package", "--allow-missing-repository", "--out", str(out)], EXTENSION, 300)
    assert out.stat().st_size > 0
    return out


@pytest.fixture(scope="module")
def code_server(tools) -> Path:
    """code-server 4.100.3 + playwright-core, installed once into tests/e2e/vscode/node_modules."""
    binary = HARNESS / "node_modules" / ".bin" / "code-server"
    if not binary.exists():
        _run(["bash", str(HARNESS / "install.sh")], HARNESS, 900)
    return binary


@pytest.fixture
def workspace(tmp_path) -> Path:
    """A fresh copy of the workspace for every run (edits and state must not leak between runs)."""
    ws = tmp_path / "workspace"
    shutil.copytree(WORKSPACE_TEMPLATE, ws)
    return ws


def _drive(vsix: Path, workspace: Path, settings: dict, expect: str, extra_env: dict[str, str] | None = None,
           file: str = CUDA_FILE, fix: str | None = None) -> dict:
    """Run run.mjs on ``file``; with ``fix``, also apply the quick fix of that title to the ``expect`` finding."""
    __tracebackhide__ = True
    env = {**os.environ, **(extra_env or {})}
    cmd = [
        "node", str(HARNESS / "run.mjs"),
        "--vsix", str(vsix),
        "--workspace", str(workspace),
        "--file", file,
        "--expect", expect,
        "--settings", json.dumps(settings),
        "--timeout", str(DRIVER_TIMEOUT_S - 30),
    ]  # fmt: skip
    if fix:
        cmd += ["--fix", fix, "--fix-code", expect]
    if os.environ.get("SHADERLINT_E2E_ARTIFACTS"):
        cmd += ["--artifacts", os.environ["SHADERLINT_E2E_ARTIFACTS"]]
    proc = subprocess.run(
        cmd, cwd=HARNESS, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=DRIVER_TIMEOUT_S
    )
    try:
        result = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"driver printed no JSON (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    if not result.get("ok"):
        logs = "\n".join(f"--- {name}\n{text}" for name, text in (result.get("logs") or {}).items())
        fix_state = {k: v for k, v in (result.get("fix") or {}).items() if k != "before"}
        pytest.fail(
            f"VS Code e2e failed: {result.get('error')}\nproblems: {result.get('problems')}\n"
            f"fix: {fix_state}\ntimings: {result.get('timings')}\n{proc.stderr[-2000:]}\n{logs}"
        )
    return result


def _real_server() -> tuple[dict, dict[str, str]]:
    """Settings (and environment) that make the extension start the real server."""
    if os.environ.get("SHADERLINT_E2E_SERVER"):
        return {"shaderlint.path": json.loads(os.environ["SHADERLINT_E2E_SERVER"])}, {}
    # `python -m shaderlint lsp` from this interpreter, with this checkout importable.
    pythonpath = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return {"shaderlint.interpreter": [sys.executable]}, {"PYTHONPATH": pythonpath}


def _expected_after_fix(file: str, old: str, new: str) -> str:
    text = (WORKSPACE_TEMPLATE / file).read_text()
    assert text.count(old) == 1, f"{old!r} not once in workspace/{file}"
    return text.replace(old, new)


def _cli_codes(path: Path) -> list[str]:
    """The codes the command-line linter reports for ``path`` (the saved file, after the fix)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "shaderlint", "--format", "json", str(path)], env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    return [d["code"] for d in json.loads(proc.stdout)]


def _assert_fixed(result: dict, workspace: Path, file: str, code: str, expected: str) -> None:
    """The quick fix ran, the file on disk is exactly ``expected``, and ``code`` is gone everywhere."""
    fix = result["fix"]
    assert fix is not None and fix["title"] in fix["menu"], fix
    assert fix["before"] == (WORKSPACE_TEMPLATE / file).read_text()
    on_disk = (workspace / file).read_text()
    assert on_disk == fix["after"]
    assert on_disk == expected
    assert not any(code in row for row in fix["problems_after"]), fix["problems_after"]
    assert fix["squiggles_after"] == 0
    assert code not in _cli_codes(workspace / file)


def test_cuda_sl201_problem_and_ignore_quick_fix(vsix, code_server, workspace):
    """The real server, started by the extension, reports SL201 as a squiggle and a Problems row;
    its "Ignore SL201 on this line" quick fix appends a directive after the existing comment."""
    settings, extra_env = _real_server()
    result = _drive(vsix, workspace, settings, "SL201", extra_env, file=CUDA_FILE, fix="Ignore SL201 on this line")
    assert result["squiggles"] >= 1
    assert any("SL201" in row and "[Ln 7, Col 22]" in row for row in result["problems"]), result["problems"]
    expected = _expected_after_fix(
        CUDA_FILE,
        "        int q = a[i] / n;  // expect: SL201\n",
        "        int q = a[i] / n;  // expect: SL201  // shaderlint: ignore[SL201]\n",
    )
    _assert_fixed(result, workspace, CUDA_FILE, "SL201", expected)


def test_metal_sl202_quick_fix_writes_half_literal(vsix, code_server, workspace):
    """A rule's own fix through the UI: SL202's unsafe fix "Write 0.5h (unsafe fix: ...)" turns `h * 0.5` into `h * 0.5h`."""
    settings, extra_env = _real_server()
    result = _drive(vsix, workspace, settings, "SL202", extra_env, file=METAL_FILE, fix="Write 0.5h")
    assert result["squiggles"] >= 1
    assert any("SL202" in row and "[Ln 15, Col 18]" in row for row in result["problems"]), result["problems"]
    expected = _expected_after_fix(METAL_FILE, "    half y = h * 0.5;", "    half y = h * 0.5h;")
    _assert_fixed(result, workspace, METAL_FILE, "SL202", expected)


def test_harness_with_stub_server(vsix, code_server, workspace):
    """The same path with a dependency-free stub server: separates harness/extension breakage from server breakage."""
    settings = {"shaderlint.path": [sys.executable, str(HARNESS / "stub_server.py")]}
    result = _drive(vsix, workspace, settings, "SL201")
    assert any("SL201" in row for row in result["problems"]), result["problems"]
