"""Code actions: quick fixes from the rules' fixes, "ignore on this line", source.fixAll.shaderlint.

The fixes come from SL990, the test rule of ``fixable_server.py`` (a safe fix:
``0.5`` -> ``0.5f``; an unsafe one for literals with more digits than a float holds).
"""

from __future__ import annotations

from lsprotocol import types

from tests.server.conftest import apply_text_edits, change, codes, edits_of, open_doc, wait_diagnostics

KERNEL = """\
__global__ void blend(float *out, const float *a, const int *idx, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = a[i] * 0.5 + 3.14159265358979;
    for (int j = i; j < n; j += 32) out[j + 1] = idx[j] / n;
}
"""
LINE = 3


def _full_change(client, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def _range(line: int, a: int, b: int) -> types.Range:
    return types.Range(start=types.Position(line=line, character=a), end=types.Position(line=line, character=b))


async def _actions(client, uri: str, rng: types.Range, diags, only=None) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=rng,
        context=types.CodeActionContext(diagnostics=list(diags), only=only)))
    return list(result or [])


async def test_quick_fix_applies_and_clears_the_diagnostic(client, tmp_path):
    uri = (tmp_path / "blend.cu").as_uri()
    open_doc(client, uri, KERNEL)
    diags = await wait_diagnostics(client, uri, lambda d: len(d) == 3)
    assert codes(diags) == ["SL201", "SL990", "SL990"]
    half = next(d for d in diags if "0.5" in d.message)
    actions = await _actions(client, uri, half.range, [half])
    fix = next(a for a in actions if a.title == "Write 0.5f")
    assert fix.kind == types.CodeActionKind.QuickFix
    assert fix.is_preferred is True
    assert fix.diagnostics[0].code == "SL990"
    assert fix.edit.document_changes[0].text_document.version == 1
    text = apply_text_edits(KERNEL, edits_of(fix, uri))
    assert "a[i] * 0.5f + 3.14159265358979;" in text
    _full_change(client, uri, 2, text)
    diags = await wait_diagnostics(client, uri, lambda d: len(d) == 2)
    assert not any("0.5" in d.message for d in diags)


async def test_unsafe_fix_is_offered_but_not_preferred(client, tmp_path):
    uri = (tmp_path / "blend.cu").as_uri()
    open_doc(client, uri, KERNEL)
    diags = await wait_diagnostics(client, uri, lambda d: len(d) == 3)
    pi = next(d for d in diags if "3.14" in d.message)
    actions = await _actions(client, uri, pi.range, [pi])
    fix = next(a for a in actions if a.title.startswith("Write 3.14"))
    assert not fix.is_preferred
    assert fix.title.endswith("(unsafe fix: may change behaviour)")  # the title warns
    safe = next(d for d in diags if "0.5" in d.message)
    actions = await _actions(client, uri, safe.range, [safe])
    assert "unsafe" not in next(a for a in actions if a.title.startswith("Write 0.5")).title


async def test_ignore_action_suppresses_on_that_line(client, tmp_path):
    uri = (tmp_path / "blend.cu").as_uri()
    open_doc(client, uri, KERNEL)
    diags = await wait_diagnostics(client, uri, lambda d: len(d) == 3)
    div = next(d for d in diags if d.code == "SL201")
    actions = await _actions(client, uri, div.range, [div])
    ignore = next(a for a in actions if a.title == "Ignore SL201 on this line")
    text = apply_text_edits(KERNEL, edits_of(ignore, uri))
    assert "out[j + 1] = idx[j] / n;  // shaderlint: ignore[SL201]\n" in text
    _full_change(client, uri, 2, text)
    diags = await wait_diagnostics(client, uri, lambda d: "SL201" not in codes(d))
    assert codes(diags) == ["SL990", "SL990"]
    # A second code on a line that already has a directive extends it.
    pi = next(d for d in diags if "3.14" in d.message)
    lines = text.splitlines(keepends=True)
    lines[LINE] = lines[LINE].rstrip("\n") + "  // shaderlint: ignore[SL201]\n"
    text = "".join(lines)
    _full_change(client, uri, 3, text)
    await wait_diagnostics(client, uri, lambda d: client.published[-1][1] == 3)
    actions = await _actions(client, uri, pi.range, [pi])
    ignore = next(a for a in actions if a.title == "Ignore SL990 on this line")
    text = apply_text_edits(text, edits_of(ignore, uri))
    assert "3.14159265358979;  // shaderlint: ignore[SL201, SL990]\n" in text
    _full_change(client, uri, 4, text)
    diags = await wait_diagnostics(client, uri, lambda d: client.published[-1][1] == 4)
    assert codes(diags) == []


async def test_fix_all_applies_safe_fixes_only(client, tmp_path):
    uri = (tmp_path / "blend.cu").as_uri()
    text = KERNEL.replace("idx[j] / n;", "idx[j] / n * 0.25;")
    assert text != KERNEL
    open_doc(client, uri, text)
    await wait_diagnostics(client, uri, lambda d: len(d) == 4)
    everything = _range(0, 0, 0)
    actions = await _actions(client, uri, everything, [], only=["source.fixAll.shaderlint"])
    assert [a.kind for a in actions] == ["source.fixAll.shaderlint"]
    # Asking for `source` includes it too; quick fixes are not offered then.
    assert [a.kind for a in await _actions(client, uri, everything, [], only=["source"])] == ["source.fixAll.shaderlint"]
    fixed = apply_text_edits(text, edits_of(actions[0], uri))
    assert "a[i] * 0.5f + 3.14159265358979;" in fixed  # the unsafe one stays
    assert "idx[j] / n * 0.25f;" in fixed
    change(client, uri, 2, ((0, 0, len(text.splitlines()), 0), fixed))
    diags = await wait_diagnostics(client, uri, lambda d: client.published[-1][1] == 2)
    assert codes(diags) == ["SL201", "SL990"]
    assert await _actions(client, uri, everything, [], only=["source.fixAll.shaderlint"]) == []


async def test_fix_all_for_the_light_bulb_is_resolved_on_demand(client, tmp_path):
    """Without `only` (the light bulb), fixAll comes without its edit; codeAction/resolve adds it."""
    uri = (tmp_path / "blend.cu").as_uri()
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri, lambda d: len(d) == 3)
    (lazy,) = [a for a in await _actions(client, uri, _range(0, 0, 0), []) if a.kind == "source.fixAll.shaderlint"]
    assert lazy.edit is None
    resolved = await client.code_action_resolve_async(lazy)
    (eager,) = await _actions(client, uri, _range(0, 0, 0), [], only=["source.fixAll"])
    assert edits_of(resolved, uri) == edits_of(eager, uri)
    assert "a[i] * 0.5f + 3.14159265358979;" in apply_text_edits(KERNEL, edits_of(resolved, uri))
    # A resolve for a version that is no longer current adds nothing.
    _full_change(client, uri, 2, KERNEL + "\n")
    await wait_diagnostics(client, uri, lambda d: client.published[-1][1] == 2)
    assert (await client.code_action_resolve_async(lazy)).edit is None


async def test_actions_follow_the_range(client, tmp_path):
    uri = (tmp_path / "blend.cu").as_uri()
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri, lambda d: len(d) == 3)
    # Line 0 has no finding: only the file-wide fixAll is on offer.
    actions = await _actions(client, uri, _range(0, 0, 5), [])
    assert [a.kind for a in actions] == ["source.fixAll.shaderlint"]
    quick = await _actions(client, uri, _range(LINE, 0, 0), [], only=[types.CodeActionKind.QuickFix])
    assert quick == []
