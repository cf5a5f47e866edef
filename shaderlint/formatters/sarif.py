"""``--format sarif``: one SARIF 2.1.0 log for GitHub code scanning and other viewers.

Every registered rule is described in ``tool.driver.rules`` (from its docstring:
summary, *What it does*, the whole document as help); each diagnostic becomes a
result with its rule, level, message, location, related locations, a partial
fingerprint (``Diagnostic.fingerprint``, stable under line shifts) and its fix.
Paths under ``options["root"]`` (the current directory) are relative URIs with
``uriBaseId`` ``%SRCROOT%``; others are absolute ``file:`` URIs. Columns count
Unicode code points (``columnKind``), as everywhere in shaderlint.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from shaderlint import __version__
from shaderlint.diagnostics import Diagnostic
from shaderlint.result import FileResult
from shaderlint.rules.base import LANGUAGE_NAMES

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/shaderlint/shaderlint"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
SRCROOT = "%SRCROOT%"


def _artifact(path: str, root: str) -> dict[str, str]:
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, root) if os.path.splitdrive(absolute)[0] == os.path.splitdrive(root)[0] else ".."
    if rel == ".." or rel.startswith(".." + os.sep):
        return {"uri": Path(absolute).as_uri()}
    return {"uri": quote(rel.replace(os.sep, "/")), "uriBaseId": SRCROOT}


def _region(line: int, column: int, end_line: int, end_column: int) -> dict[str, int]:
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


@functools.lru_cache(maxsize=None)  # a rule's document does not change; parsing it took most of a small run
def _rule_descriptor(rule) -> dict[str, Any]:
    sections = rule.sections()
    text = "\n\n".join(f"{title}\n{body}" for title, body in sections.items()) or rule.summary
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary or rule.name},
        "fullDescription": {"text": rule.first_paragraph() or rule.summary or rule.name},
        "help": {"text": text, "markdown": rule.markdown()},
        "helpUri": rule.url(),
        "defaultConfiguration": {"level": LEVELS[rule.severity.value], "enabled": bool(rule.default_on)},
        "properties": {
            "tags": ["performance"] + [LANGUAGE_NAMES[x] for x in ("metal", "cuda", "glsl") if x in rule.languages],
            "fix": rule.fix,
        },
    }


def _result(d: Diagnostic, index: int, root: str) -> dict[str, Any]:
    artifact = _artifact(d.path, root)
    out: dict[str, Any] = {
        "ruleId": d.code,
        "ruleIndex": index,
        "level": LEVELS[d.severity.value],
        "message": {"text": d.message},
        "locations": [{"physicalLocation": {
            "artifactLocation": artifact,
            "region": _region(d.line, d.column, d.end_line, d.end_column),
        }}],
        "partialFingerprints": {"shaderlint/v1": d.fingerprint},
    }
    if d.related:
        out["relatedLocations"] = [
            {"id": i + 1,
             "physicalLocation": {"artifactLocation": _artifact(r.path, root),
                                  "region": {"startLine": r.line, "startColumn": r.column}},
             "message": {"text": r.message}}
            for i, r in enumerate(d.related)
        ]
    if d.fix is not None and d.fix.edits and len(d.fix_ranges) == len(d.fix.edits):
        out["fixes"] = [{
            "description": {"text": f"{d.fix.title} ({d.fix.applicability.value} fix)"},
            "artifactChanges": [{
                "artifactLocation": artifact,
                "replacements": [
                    {"deletedRegion": _region(*rng), "insertedContent": {"text": e.text}}
                    for e, rng in zip(d.fix.edits, d.fix_ranges)
                ],
            }],
        }]
    props: dict[str, Any] = {"name": d.name}
    if d.kernel is not None:
        props["kernel"] = d.kernel
    if d.impact is not None:
        props["impact"] = d.impact.to_json()
    if d.fix is not None:
        props["fixApplicability"] = d.fix.applicability.value
    out["properties"] = props
    return out


def _invocation(failed: Any) -> dict[str, Any]:
    """Paths that could not be linted (missing, special files) make the run unsuccessful, each with
    an error notification: a code-scanning upload then shows that files went unchecked."""
    out: dict[str, Any] = {"executionSuccessful": not failed}
    if failed:
        out["toolExecutionNotifications"] = [
            {"level": "error", "message": {"text": f"{path}: {reason}"}} for path, reason in failed
        ]
    return out


def sarif_log(results: list[FileResult], options: dict) -> dict[str, Any]:
    from shaderlint.rules.registry import RULES

    root = os.path.abspath(options.get("root") or os.getcwd())
    index = {r.code: i for i, r in enumerate(RULES)}
    run: dict[str, Any] = {
        "tool": {"driver": {
            "name": "shaderlint",
            "version": __version__,
            "semanticVersion": __version__,
            "informationUri": INFORMATION_URI,
            "rules": [_rule_descriptor(r) for r in RULES],
        }},
        "originalUriBaseIds": {SRCROOT: {"uri": Path(root).as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "invocations": [_invocation(options.get("failed_paths") or ())],
        "results": [_result(d, index.get(d.code, -1), root) for r in results for d in r.diagnostics],
    }
    for res in run["results"]:
        if res["ruleIndex"] < 0:
            del res["ruleIndex"]
    if options.get("statistics") is not None:
        run["properties"] = {"statistics": options["statistics"]}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def format_sarif(results: list[FileResult], options: dict) -> str:
    """``json.dumps(sarif_log(...), indent=2, ensure_ascii=False)``, with the rule descriptors (the same
    ~190 KB every time, most of the work for a small run) serialized once and spliced in."""
    log = sarif_log(results, options)
    driver = log["runs"][0]["tool"]["driver"]
    rules = driver["rules"]
    driver["rules"] = _RULES_MARK
    try:
        text = json.dumps(log, indent=2, ensure_ascii=False)
    finally:
        driver["rules"] = rules
    mark = json.dumps(_RULES_MARK)
    at = text.find(mark)
    line = text.rfind("\n", 0, at) + 1
    indent = len(text[line:at]) - len(text[line:at].lstrip(" "))
    return text[:at] + _rules_json(tuple(rules), indent) + text[at + len(mark):] + "\n"


_RULES_MARK = "\u0000shaderlint-rules\u0000"
_rules_cache: dict[tuple[int, ...], str] = {}


def _rules_json(rules: tuple[dict[str, Any], ...], indent: int) -> str:
    key = (indent,) + tuple(id(r) for r in rules)  # the descriptors are cached (_rule_descriptor): same ids
    text = _rules_cache.get(key)
    if text is None:
        text = json.dumps(list(rules), indent=2, ensure_ascii=False).replace("\n", "\n" + " " * indent)
        if len(_rules_cache) > 16:
            _rules_cache.clear()
        _rules_cache[key] = text
    return text
