"""The engine: bytes in, diagnostics out. Pure (no I/O); never raises.

source -> front end -> kernel model -> rules -> diagnostics -> suppressions.
"""

from __future__ import annotations

import hashlib
import traceback
from dataclasses import replace

from shaderlint.config import Settings, rule_enabled
from shaderlint.deadline import Deadline, TimeBudgetExceeded
from shaderlint.diagnostics import Diagnostic, Finding, Related, RelatedLocation, Severity
from shaderlint.languages import FRONT_ENDS, Parsed, language_for_path
from shaderlint.model.build import FileModel, build_model
from shaderlint.model.source import Source
from shaderlint.rules.base import Rule, RuleContext
from shaderlint.rules.registry import RULES
from shaderlint.suppression import UNUSED_CODE, Suppression, apply_suppressions, parse_suppressions, unused_suppressions
# (defined apart so that a run answered from the cache does not import the analysis: re-exported here)
from shaderlint.collector import collector_paused  # noqa: F401
from shaderlint.result import FileResult  # noqa: F401

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


def predefined_for(settings: Settings, language: str, file_context=None):
    """The macros the build defines before the file (``defines``, and ``__CUDA_ARCH__`` from the
    configured target): what :mod:`shaderlint.languages.conditions` decides ``#if`` branches with.
    With a :class:`shaderlint.project.includes.FileContext`: the compile command's ``-D``/``-U`` and
    architecture too, and what the included headers leave the macros as."""
    from shaderlint.languages.conditions import predefined

    if file_context is None:
        return predefined(language, settings.target, settings.defines)
    from shaderlint.project.includes import build_predefined, context_predefined, defines_complete

    return context_predefined(build_predefined(settings, language, file_context.flags), file_context,
                              defines_complete(settings, file_context))


def lint_source(path: str, data: bytes, settings: Settings | None = None, language: str | None = None,
                old: Parsed | None = None, context=None, host=None, file_context=None) -> FileResult:
    """Lint one file's bytes. ``language`` overrides detection by extension; ``context``: see
    :meth:`shaderlint.languages.base.FrontEnd.parse`; ``host``: the :class:`shaderlint.host.index.HostFacts`
    of the code launching this file's kernels; ``file_context``: the
    :class:`shaderlint.project.includes.FileContext` (headers' macros, build flags). The cyclic
    garbage collector is paused while it runs (:func:`collector_paused`)."""
    with collector_paused():
        return _lint_source(path, data, settings, language, old, context, host, file_context)


def _lint_source(path: str, data: bytes, settings: Settings | None, language: str | None,
                 old: Parsed | None, context, host=None, file_context=None) -> FileResult:
    settings = settings or Settings()
    source = Source(path, data)
    language = language or settings.language_for(path)
    result = FileResult(path, source, language, host=host, file_context=file_context)
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
    # One budget for the file, on one clock (CPU time of this thread where it can be read, see
    # shaderlint.deadline): a watchdog enforces it anywhere in the parse, the model and the rules,
    # not only between rules; the impact step gets what is left of it.
    dl = Deadline(budget)
    stage = "parsing"
    rules: list[type[Rule]] = []
    at = 0  # the rule about to run or running (index in ``rules``)
    running = False
    try:
        with dl:
            try:
                parsed = FRONT_ENDS[language].parse(
                    source, old, deadline=dl, context=context, predefined=predefined_for(settings, language, file_context),
                    extra_macros=file_context.macros if file_context is not None and file_context.macros else None,
                    headers=file_context.files if file_context is not None else None)
                result.parsed = parsed
                stage = "building the model"
                model = build_model(parsed)
                if host is not None:
                    from shaderlint.host.index import apply as apply_host
                    apply_host(model, host)
                result.model = model
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
            stage = "rules"
            for at, rule_cls in enumerate(rules):
                if dl.expired():  # (the watchdog's exception may not have arrived yet, or there is none)
                    raise TimeBudgetExceeded
                running = True
                try:
                    for fd in rule_cls().check(model, ctx):
                        if rule_cls.code != PARSE_ERROR and errored:
                            if any(f.node.start_byte <= fd.start < f.node.end_byte for f in errored) \
                                    or fd.kernel in unreadable:
                                continue  # never report inside (or about) code we could not read
                            if fd.fix is not None and any(f.node.start_byte <= e.end and e.start < f.node.end_byte
                                                          for e in fd.fix.edits for f in errored):
                                fd = replace(fd, fix=None)  # nor edit it: the fix could not see what is there
                        findings.append((rule_cls, fd))
                except Exception as exc:
                    tb = traceback.extract_tb(exc.__traceback__)
                    where = f" at {tb[-1].name}:{tb[-1].lineno}" if tb else ""
                    findings.append((_PARSE_RULE, Finding(0, 0, f"rule {rule_cls.code} failed on this file "
                                                                f"({type(exc).__name__}: {exc}{where}); other rules still ran")))
                running = False
            stage = "done"
    except TimeBudgetExceeded:
        result.timed_out = True
        if stage in ("parsing", "building the model"):
            result.parsed = result.model = None
            result.diagnostics = [_internal(source, f"could not analyse this file: the per-file time budget "
                                                    f"of {budget:.3g} s was exceeded while {stage} (raise "
                                                    f"`time-budget` in the configuration to allow more)")]
            return result
        if stage == "rules" and rules:  # (after "done" only the block's exit was left: nothing is lost)
            where = "in" if running else "before"
            findings.append((_PARSE_RULE, Finding(0, 0, f"analysis stopped: the per-file time budget of "
                                                        f"{budget:.3g} s was exceeded {where} {rules[at].code}")))
    if host is not None:
        findings = [(rc, _host_related(model, rc.code, fd)) for rc, fd in findings]
    if result.parsed.expansions:  # macro-generated kernels: reported at their invocations
        from shaderlint.model.expand import map_finding
        resolved = [(rule_cls, fd, _resolve(source, rule_cls, map_finding(fd, result.parsed, source)))
                    for rule_cls, fd in findings]
    else:
        resolved = [(rule_cls, fd, _resolve(source, rule_cls, fd)) for rule_cls, fd in findings]
    if not any(r.code == PARSE_ERROR for r in rules):
        # unreadable regions are listed only when SL001 is selected (the summary counts them); an
        # analysis cut short (time budget, a failing rule) is always said, like a file that failed whole
        result.unread = len(model.errors)
    sups = parse_suppressions(source)
    result.suppressions = sups
    kept = {id(d) for d in apply_suppressions([d for _, _, d in resolved], sups)}
    resolved = [x for x in resolved if id(x[2]) in kept]
    if result.parsed.expansions:  # one report per cause: the same macro body line in several instances
        from shaderlint.model.expand import merge_instances
        resolved = merge_instances(resolved, result.parsed, source)
    if not result.timed_out:  # estimates only for what is reported: they are the costliest step
        resolved = _attach_impacts(model, resolved, target, facts, dl.remaining(), settings)
    diags = [d for _, _, d in resolved]
    incomplete = any(rc is _PARSE_RULE and fd.message.startswith(("rule ", "analysis stopped")) for rc, fd in findings)
    if any(r.code == UNUSED_CODE for r in rules) and not incomplete:  # SL002 needs every other rule's result
        from shaderlint.rules.registry import BY_CODE
        blind = [(f.node.start_byte, f.node.end_byte) for f in errored]  # findings there were dropped
        for f in errored:  # an expansion not read: its invocation's suppressions cannot be judged
            e = result.parsed.expansion_at(f.node.start_byte)
            if e is not None:
                blind.append((e.inv_start, e.inv_end))
        # a suppression in a branch dead for this build may be needed in another (other defines, target)
        dead = [(mk.start, mk.end) for mk in result.parsed.masks if mk.kind == "dead-branch"]
        live = [s for s in sups if s.file_level or not any(a <= s.start < b for a, b in dead)] if dead else sups
        unused = unused_suppressions(source, live, {r.code for r in rules}, set(BY_CODE), blind)
        diags += [_resolve(source, BY_CODE[UNUSED_CODE], fd) for fd in unused]
    diags.sort(key=Diagnostic.sort_key)
    result.diagnostics = diags
    return result


from shaderlint.rules.sl001_parse_error import ParseErrorRule as _PARSE_RULE  # noqa: E402


def _attach_impacts(model, resolved, target, facts, seconds: float, settings=None):
    """Impact step (separate from the rules) for ``resolved``, the (rule, finding, diagnostic) triples
    to report, within ``seconds`` (what is left of the file's budget): estimate each affected kernel
    as written and as the rule's ``what_if`` advice would leave it (see :mod:`shaderlint.estimate.whatif`);
    the triples come back with the impacts in their diagnostics. With a ``compiler`` configured, a
    finding with a fix gets the measured impact instead (compiled as written and fixed, outside the
    budget's CPU clock: :func:`shaderlint.estimate.measured.attach_measured_impacts`)."""
    todo = [(r, fd) for r, fd, _ in resolved if r is not _PARSE_RULE and fd.impact is None]
    done = None
    if todo and seconds > 0:
        try:
            from shaderlint.estimate.whatif import attach_impacts
            with Deadline(seconds):
                done = iter(attach_impacts(model, todo, target, facts))
        except (Exception, TimeBudgetExceeded):  # impacts are an extra: never lose diagnostics over them
            done = None
    out = []
    for r, fd, d in resolved:
        if done is not None and r is not _PARSE_RULE and fd.impact is None:
            fd = next(done)[1]
            if fd.impact is not None:
                d = replace(d, impact=fd.impact)
        out.append((r, fd, d))
    if settings is not None and getattr(settings, "compiler", "none") != "none" and \
            any(fd.fix is not None for r, fd, _ in out if r is not _PARSE_RULE):
        try:
            from shaderlint.estimate.measured import attach_measured_impacts
            pairs = attach_measured_impacts(model, [(r, fd) for r, fd, _ in out], target, settings, facts)
        except Exception:
            return out
        out = [(r, fd, replace(d, impact=fd.impact) if fd.impact is not old.impact else d)
               for (r, fd), (_, old, d) in zip(pairs, out)]
    return out


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


#: Rules whose verdict depends on the kernel's group size / dispatch mode / grid size: a finding of
#: theirs about a kernel whose fact comes from host code points at the host line too.
_USES_GROUP = frozenset({"SL105", "SL401", "SL404", "SL501", "SL502", "SL505", "SL506"})
_USES_DISPATCH = frozenset({"SL105"})
_USES_GRID = frozenset({"SL302"})


def _host_related(model: FileModel, code: str, fd: Finding) -> Finding:
    """``fd`` with related locations at the host lines its kernel's facts come from."""
    if fd.kernel is None or code not in _USES_GROUP | _USES_DISPATCH | _USES_GRID:
        return fd
    from shaderlint.model.dispatch import GROUP_WORDS, host_fact

    found: list[tuple[object, str]] = []  # (host span, what is set there)
    for f in model.functions:
        if f.name != fd.kernel:
            continue
        for key, codes, what in (("dispatch", _USES_DISPATCH, "dispatched here"),
                                 ("grid-size", _USES_GRID, "grid size set here")):
            got = host_fact(model, f, key) if code in codes else None
            if got is not None and got[1] is not None:
                found.append((got[1], what))
        gs = f.group_size
        if code in _USES_GROUP and gs is not None and gs.origin == "host" and gs.host is not None:
            found.append((gs.host, f"{GROUP_WORDS.get(model.language, 'group')} size set here"))
        break
    merged: dict[tuple, tuple[object, list[str]]] = {}  # one related location per host position
    for span, what in found:
        merged.setdefault((span.path, span.start), (span, []))[1].append(what)
    seen = {(r.path, r.start) for r in fd.related}
    extra = tuple(_host_at(span, "; ".join(whats)) for key, (span, whats) in merged.items() if key not in seen)
    return replace(fd, related=fd.related + extra) if extra else fd


def _host_at(span, message: str) -> Related:
    return Related(span.start, span.end, message, span.path, span.line, span.column)


def _resolve(source: Source, rule_cls: type[Rule], fd: Finding) -> Diagnostic:
    line, col = source.position(fd.start)
    end_line, end_col = source.position(fd.end)
    related = tuple(
        RelatedLocation(r.path, r.line, r.column, r.message, r.start, r.end) if r.path is not None
        else RelatedLocation(source.path, *source.position(r.start), r.message, r.start, r.end) for r in fd.related
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
           "memory_bound", "collector_paused"]
