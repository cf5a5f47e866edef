"""The engine: bytes in, diagnostics out. Pure (no I/O); never raises.

source -> front end -> kernel model -> rules -> diagnostics -> suppressions.
"""

from __future__ import annotations

import hashlib
import time
import traceback
from dataclasses import dataclass, field, replace

from shaderlint.config import Settings, rule_enabled
from shaderlint.deadline import Deadline, TimeBudgetExceeded, clock
from shaderlint.diagnostics import Diagnostic, Finding, RelatedLocation, Severity
from shaderlint.languages import FRONT_ENDS, Parsed, language_for_path
from shaderlint.model.build import FileModel, build_model
from shaderlint.model.source import Source
from shaderlint.rules.base import Rule, RuleContext
from shaderlint.rules.registry import RULES
from shaderlint.suppression import UNUSED_CODE, Suppression, apply_suppressions, parse_suppressions, unused_suppressions

PARSE_ERROR = "SL001"

#: The memory one file's analysis may take at its peak, over what the process held before it:
#: :func:`memory_bound`. A file of the largest size analysed (``max-file-size``, 1 MiB) peaks at about
#: 190 MB; a larger file is refused before any work; code nested deeper than the front end keeps
#: (``shaderlint.languages.depth``) is cut. ``tests/robustness/test_bounds.py`` checks the bound with
#: generous margins and ``bench/bounds.py`` measures the worst cases.
MEMORY_BASE = 256 << 20
MEMORY_PER_BYTE = 20


def memory_bound(size: int) -> int:
    """Bytes of memory the analysis of one file of ``size`` bytes may add to the process at its peak."""
    return MEMORY_BASE + MEMORY_PER_BYTE * size


@dataclass
class FileResult:
    path: str
    source: Source
    language: str | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    model: FileModel | None = None
    suppressions: list[Suppression] = field(default_factory=list)
    parsed: Parsed | None = None
    timed_out: bool = False  # the time budget cut the analysis short (an SL001 says so); do not cache
    partial: bool = False  # diagnostics from shaderlint.incremental: no model or parse of the whole file
    unread: int = 0  # regions the front end could not read, not listed because SL001 is not selected


_ENABLED: dict[tuple, list[type[Rule]]] = {}  # memo: the same few selections, asked once per file


def enabled_rules(settings: Settings, language: str, path: str = "") -> list[type[Rule]]:
    extra_ignore = settings.ignored_for(path) if path else ()
    key = (language, settings.select, settings.ignore + extra_ignore, settings.extend_select, tuple(RULES))
    hit = _ENABLED.get(key)
    if hit is None:
        if len(_ENABLED) > 256:
            _ENABLED.clear()
        hit = _ENABLED[key] = [
            r for r in RULES
            if language in r.languages
            and rule_enabled(r.code, r.default_on, settings.select, settings.ignore + extra_ignore, settings.extend_select)
        ]
    return list(hit)


def resolve_target(settings: Settings, language: str):
    from shaderlint.estimate.targets import default_target, get_target

    if settings.target:
        return get_target(settings.target)
    return default_target(language)


def predefined_for(settings: Settings, language: str):
    """The macros the build defines before the file (``defines``, and ``__CUDA_ARCH__`` from the
    configured target): what :mod:`shaderlint.languages.conditions` decides ``#if`` branches with."""
    from shaderlint.languages.conditions import predefined

    return predefined(language, settings.target, settings.defines)


def lint_source(path: str, data: bytes, settings: Settings | None = None, language: str | None = None,
                old: Parsed | None = None, context=None) -> FileResult:
    """Lint one file's bytes. ``language`` overrides detection by extension; ``context``: see
    :meth:`shaderlint.languages.base.FrontEnd.parse`."""
    settings = settings or Settings()
    source = Source(path, data)
    language = language or settings.language_for(path)
    result = FileResult(path, source, language)
    if language is None:
        return result
    limit = settings.max_file_size
    if limit and len(data) > limit:  # refused before any work: a 50 MB input peaked at 3.5 GB
        result.diagnostics = [_internal(source, f"could not analyse this file: it is {_size(len(data))}, larger "
                                                f"than the per-file limit of {_size(limit)} (raise `max-file-size` "
                                                f"in the configuration to allow more)")]
        result.timed_out = True  # a property of the settings, not of the file: not cached
        return result
    reason = not_text(data)
    if reason is not None:
        result.diagnostics = [_internal(source, f"could not analyse this file: {reason}")]
        return result
    findings: list[tuple[type[Rule], Finding]] = []
    budget = settings.budget_for(data)
    now = clock()  # CPU time of this thread where it can be read (see shaderlint.deadline)
    deadline = now() + budget
    try:  # the time budget is enforced by a watchdog (shaderlint.deadline), not only between rules
        with Deadline(budget) as dl:
            parsed = FRONT_ENDS[language].parse(source, old, deadline=dl, context=context,
                                                predefined=predefined_for(settings, language))
            result.parsed = parsed
            model = build_model(parsed)
            result.model = model
    except TimeBudgetExceeded:
        phase = "parsing" if result.parsed is None else "building the model"
        result.parsed = result.model = None
        result.timed_out = True
        result.diagnostics = [_internal(source, f"could not analyse this file: the per-file time budget of "
                                                f"{budget:.3g} s was exceeded while {phase} "
                                                f"(raise `time-budget` in the configuration to allow more)")]
        return result
    except Exception as exc:  # never crash: the whole file becomes one SL001
        result.diagnostics = [_internal(source, f"could not analyse this file: {type(exc).__name__}: {exc}")]
        return result
    rules = enabled_rules(settings, language, path)
    facts = dict(settings.facts_for(path))
    try:
        target = resolve_target(settings, language)
    except Exception:
        from shaderlint.estimate.targets import default_target
        target = default_target(language)
    ctx = RuleContext(settings=settings, target=target, facts=facts)
    errored = [f for f in model.functions if f.has_error]
    unreadable = {f.name for f in errored} - {f.name for f in model.functions if not f.has_error}
    for rule_cls in rules:
        if now() > deadline:
            findings.append((_PARSE_RULE, Finding(0, 0, f"analysis stopped: the per-file time budget of "
                                                        f"{budget:.3g} s was exceeded before {rule_cls.code}")))
            result.timed_out = True
            break
        try:
            with Deadline(max(1e-3, deadline - now())):
                for fd in rule_cls().check(model, ctx):
                    if rule_cls.code != PARSE_ERROR and errored:
                        if any(f.node.start_byte <= fd.start < f.node.end_byte for f in errored) \
                                or fd.kernel in unreadable:
                            continue  # never report inside (or about) code we could not read
                        if fd.fix is not None and any(f.node.start_byte <= e.end and e.start < f.node.end_byte
                                                      for e in fd.fix.edits for f in errored):
                            fd = replace(fd, fix=None)  # nor edit it: the fix could not see what is there
                    findings.append((rule_cls, fd))
        except TimeBudgetExceeded:
            findings.append((_PARSE_RULE, Finding(0, 0, f"analysis stopped: the per-file time budget of "
                                                        f"{budget:.3g} s was exceeded in {rule_cls.code}")))
            result.timed_out = True
            break
        except Exception as exc:
            tb = traceback.extract_tb(exc.__traceback__)
            where = f" at {tb[-1].name}:{tb[-1].lineno}" if tb else ""
            findings.append((_PARSE_RULE, Finding(0, 0, f"rule {rule_cls.code} failed on this file "
                                                        f"({type(exc).__name__}: {exc}{where}); other rules still ran")))
    findings = _attach_impacts(model, findings, target, facts, deadline, now)
    diags = [_resolve(source, rule_cls, fd) for rule_cls, fd in findings]
    if not any(r.code == PARSE_ERROR for r in rules):
        # unreadable regions are listed only when SL001 is selected (the summary counts them); an
        # analysis cut short (time budget, a failing rule) is always said, like a file that failed whole
        result.unread = len(model.errors)
    sups = parse_suppressions(source)
    result.suppressions = sups
    diags = apply_suppressions(diags, sups)
    incomplete = any(rc is _PARSE_RULE and fd.message.startswith(("rule ", "analysis stopped")) for rc, fd in findings)
    if any(r.code == UNUSED_CODE for r in rules) and not incomplete:  # SL002 needs every other rule's result
        from shaderlint.rules.registry import BY_CODE
        blind = [(f.node.start_byte, f.node.end_byte) for f in errored]  # findings there were dropped
        # a suppression in a branch dead for this build may be needed in another (other defines, target)
        dead = [(mk.start, mk.end) for mk in result.parsed.masks if mk.kind == "dead-branch"]
        live = [s for s in sups if s.file_level or not any(a <= s.start < b for a, b in dead)] if dead else sups
        unused = unused_suppressions(source, live, {r.code for r in rules}, set(BY_CODE), blind)
        diags += [_resolve(source, BY_CODE[UNUSED_CODE], fd) for fd in unused]
    diags.sort(key=Diagnostic.sort_key)
    result.diagnostics = diags
    return result


from shaderlint.rules.sl001_parse_error import ParseErrorRule as _PARSE_RULE  # noqa: E402


def _attach_impacts(model, findings, target, facts, deadline, now=time.monotonic):
    """Impact step (separate from the rules): estimate each affected kernel as written and
    as the rule's ``what_if`` advice would leave it; see :mod:`shaderlint.estimate.whatif`."""
    if not findings or now() > deadline:
        return findings
    try:
        from shaderlint.estimate.whatif import attach_impacts
        with Deadline(max(1e-3, deadline - now())):
            return attach_impacts(model, [(r, fd) for r, fd in findings if r is not _PARSE_RULE], target, facts) \
                + [(r, fd) for r, fd in findings if r is _PARSE_RULE]
    except (Exception, TimeBudgetExceeded):  # impacts are an extra: never lose diagnostics over them
        return findings


_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"), (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
         (b"\xff\xfe", "UTF-16 (little-endian)"), (b"\xfe\xff", "UTF-16 (big-endian)"))


def not_text(data: bytes) -> str | None:
    """Why ``data`` is not source text shaderlint can read (UTF-16/32, binary), or None. Offsets
    and fixes work on UTF-8 bytes, so such files are reported instead of parsed as noise."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return f"it is {name} text (byte-order mark); shaderlint reads UTF-8: save the file as UTF-8"
    head = data[:8192]
    if b"\0" in head:
        if head.count(0) * 8 > len(head):
            return "it looks like a binary or UTF-16 file (many NUL bytes), not UTF-8 source text"
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as e:
            if e.start < len(head) - 3 or len(data) == len(head):  # not just a character cut at the 8 KB mark
                return "it looks like a binary file (NUL bytes and invalid UTF-8), not source text"
    return None


def _size(n: int) -> str:
    return f"{n / (1 << 20):.3g} MiB ({n:,} bytes)" if n >= 1 << 20 else f"{n:,} bytes"


def _internal(source: Source, message: str) -> Diagnostic:
    return _resolve(source, _PARSE_RULE, Finding(0, 0, message))


def fingerprint(code: str, kernel: str | None, text: str) -> str:
    norm = " ".join(text.split())
    return hashlib.sha1(f"{code}\0{kernel or ''}\0{norm}".encode()).hexdigest()[:16]


def _resolve(source: Source, rule_cls: type[Rule], fd: Finding) -> Diagnostic:
    line, col = source.position(fd.start)
    end_line, end_col = source.position(fd.end)
    related = tuple(
        RelatedLocation(source.path, *source.position(r.start), r.message, r.start, r.end) for r in fd.related
    )
    fix_ranges = ()
    if fd.fix is not None:
        fix_ranges = tuple((*source.position(e.start), *source.position(e.end)) for e in fd.fix.edits)
    flagged = fd.fingerprint_text if fd.fingerprint_text is not None else source.line_text(line)
    return Diagnostic(
        path=source.path, code=rule_cls.code, name=rule_cls.name,
        severity=fd.severity or rule_cls.severity, message=fd.message,
        start=fd.start, end=fd.end, line=line, column=col, end_line=end_line, end_column=end_col,
        kernel=fd.kernel, related=related, fix=fd.fix, impact=fd.impact,
        fingerprint=fingerprint(rule_cls.code, fd.kernel, flagged), fix_ranges=fix_ranges,
    )


__all__ = ["FileResult", "lint_source", "enabled_rules", "Severity", "resolve_target", "fingerprint",
           "memory_bound"]
