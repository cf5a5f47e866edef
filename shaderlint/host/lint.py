"""The host pass of a run: findings reported *in host files* (SL503 at the host line).

Kernel files are linted by the engine; a host file (a ``.swift``, ``.m``, ``.cpp``…) has no
front end of its own. What the host scanners read there is checked here, after the kernel
files, for the launches the run's :class:`~shaderlint.host.index.HostIndex` links to a kernel
being linted:

* SL503: a grid axis computed by a division that rounds down
  (:class:`~shaderlint.host.Truncation`), whose divisor is the launch's group size along that
  axis (the constant sizes agree, or the host writes both as the same expression; for Vulkan the
  shader's workgroup size with the pipeline's specialization constants), for a kernel that covers
  one item per thread (no grid-stride loop: the kernel's own model says so). Reported at the
  division, with the launch and the kernel's definition as related locations. A launch in the
  kernel's own file is the engine's (the rule reads it there, with the file's divisibility
  proofs): the pass skips it.

The findings go through the same machinery as the engine's: ``--select``/``--ignore`` and
per-file ignores of the host file's settings, ``// shaderlint: ignore SL503`` comments in the
host file, the lint cache (keyed by the host file's content, the linked kernel files' content
and the launches), and every output format. A host file that is itself linted (a ``.cu`` that
launches a kernel of another ``.cu``) gets the findings added to its result; any other host file
with findings gets a result of its own (language None: ``--fix`` leaves it alone, since these
findings offer no fix: the rounded-up grid runs threads past the end in a kernel without a
bounds check, which SL105 is about; ``--add-ignore`` writes its comments, checked with the host
grammar like a fix).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable

from shaderlint.diagnostics import Diagnostic, Finding, Related
from shaderlint.discovery import display_path
from shaderlint.host import HostLaunch, Truncation

#: The rule the pass reports for (its class gives code, name, severity and default).
RULE_CODE = "SL503"


def _norm(path: str) -> str:
    return os.path.normcase(os.path.normpath(os.path.abspath(path)))


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def lint_host_files(index, results: list, settings_for: Callable, use_cache: bool = True,
                    read: Callable[[str], bytes] | None = None, only: list[str] | None = None) -> list:
    """``results`` (the kernel files' :class:`~shaderlint.engine.FileResult` list) with the host
    pass's findings added, for host files under ``only`` (the paths the run was given: the index
    may read a whole project for a run given single files). Never raises: a pass that fails adds
    nothing."""
    if index is None or not getattr(index, "by_file", None):
        return results
    try:
        return _lint_host_files(index, results, settings_for, use_cache, read or _read, only)
    except Exception:
        return results


def candidates(index) -> dict[str, tuple[str, list[tuple[str, str, HostLaunch]]]]:
    """Host files with launches that may round their grid down: normalised host path ->
    (host path, [(kernel file, kernel name, launch)])."""
    out: dict[str, tuple[str, list[tuple[str, str, HostLaunch]]]] = {}
    for target, facts in sorted(index.by_file.items()):
        kpath = index.paths.get(target)
        if kpath is None:
            continue
        for name, launches in facts.launches:
            for launch in launches:
                if launch.api == "reference" or not launch.truncations or _norm(launch.at.path) == target:
                    continue
                out.setdefault(_norm(launch.at.path), (launch.at.path, []))[1].append((kpath, name, launch))
    return out


def _lint_host_files(index, results: list, settings_for: Callable, use_cache: bool, read,
                     only: list[str] | None = None) -> list:
    from shaderlint.cache import Cache, cache_dir_for, entry_key
    from shaderlint.config import rule_enabled
    from shaderlint.model.source import Source
    from shaderlint.result import FileResult
    # (the registry's SL503, without importing every rule: a run answered from the cache needs none)
    from shaderlint.rules.sl503_truncating_grid_division import TruncatingGridDivision as rule
    from shaderlint.suppression import apply_suppressions, parse_suppressions

    todo = candidates(index)
    if only is not None:
        from shaderlint.host.index import within

        todo = {k: v for k, v in todo.items() if within(v[0], only)}
    if not todo:
        return results
    by_path = {_norm(r.path): r for r in results}
    kernels = _Kernels(index, settings_for, read)
    out = list(results)
    for key_path, (hpath, items) in sorted(todo.items()):
        st = settings_for(hpath)
        if not rule_enabled(rule.code, rule.default_on, st.select, st.ignore + st.ignored_for(hpath),
                            st.extend_select):
            continue
        try:
            data = read(hpath)
        except OSError:
            continue
        source = Source(hpath, data)
        cache = key = None
        if use_cache:
            extra = hashlib.sha256()
            extra.update(b"host-pass\0")
            extra.update(repr([(kp, name, launch) for kp, name, launch in items]).encode("utf-8", "surrogateescape"))
            for kp in sorted({kp for kp, _, _ in items}):  # (the kernel's text and the settings it is read with)
                extra.update(kernels.digest(kp).encode())
                extra.update(settings_for(kp).key().encode("utf-8", "surrogateescape"))
            cache = Cache(cache_dir_for(st))
            key = entry_key(hpath, data, st, extra.hexdigest())
            hit = cache.get(key, hpath)
            if hit is not None:
                diags, sups = hit[0], hit[1]
                _attach(out, by_path, key_path, hpath, source, diags, sups, FileResult)
                continue
        findings = []
        for kp, name, launch in items:
            fd = _check(kernels, kp, name, launch, data)
            if fd is not None:
                findings.append(fd)
        from shaderlint.engine import _resolve

        diags = [_resolve(source, rule, fd) for fd in findings]
        existing = by_path.get(key_path)
        sups = existing.suppressions if existing is not None else parse_suppressions(source)
        diags = apply_suppressions(diags, sups)
        diags.sort(key=Diagnostic.sort_key)
        if cache is not None and key is not None:
            cache.put(key, diags, sups if existing is None else [], None)
        _attach(out, by_path, key_path, hpath, source, diags, sups, FileResult)
    return out


def _attach(out: list, by_path: dict, key_path: str, hpath: str, source, diags: list, sups: list,
            file_result) -> None:
    if not diags:
        return
    existing = by_path.get(key_path)
    if existing is not None:
        existing.diagnostics = sorted(existing.diagnostics + diags, key=Diagnostic.sort_key)
        return
    r = file_result(hpath, source, None, diags, suppressions=sups)
    by_path[key_path] = r
    out.append(r)


class _Kernels:
    """The kernel files' models, built once each, with the run's host facts applied."""

    def __init__(self, index, settings_for: Callable, read) -> None:
        self.index = index
        self.settings_for = settings_for
        self.read = read
        self.models: dict[str, object] = {}
        self.data: dict[str, bytes | None] = {}

    def bytes_of(self, path: str) -> bytes | None:
        if path not in self.data:
            try:
                self.data[path] = self.read(path)
            except OSError:
                self.data[path] = None
        return self.data[path]

    def digest(self, path: str) -> str:
        data = self.bytes_of(path)
        return "-" if data is None else hashlib.sha256(data).hexdigest()

    def model(self, path: str):
        if path in self.models:
            return self.models[path]
        self.models[path] = None
        data = self.bytes_of(path)
        if data is None:
            return None
        from shaderlint.deadline import Deadline
        from shaderlint.engine import not_text, predefined_for
        from shaderlint.host.index import apply
        from shaderlint.languages import FRONT_ENDS
        from shaderlint.model.build import build_model
        from shaderlint.model.source import Source

        st = self.settings_for(path)
        lang = st.language_for(path)
        if lang not in FRONT_ENDS or (st.max_file_size and len(data) > st.max_file_size) or not_text(data):
            return None
        try:
            with Deadline(st.budget_for(data)) as dl:
                parsed = FRONT_ENDS[lang].parse(Source(path, data), None, deadline=dl,
                                                predefined=predefined_for(st, lang))
                model = build_model(parsed)
                apply(model, self.index.facts_for(path))
        except BaseException as exc:  # (the time budget's exception too): no model, no finding
            if isinstance(exc, KeyboardInterrupt):
                raise
            return None
        self.models[path] = model
        return model


def _check(kernels: _Kernels, kpath: str, name: str, launch: HostLaunch, host_data: bytes) -> Finding | None:
    from shaderlint.model.dispatch import is_grid_stride

    model = kernels.model(kpath)
    if model is None:
        return None
    if model.language == "glsl":
        funcs = [f for f in model.functions if f.is_entry and f.name == "main" and f.body is not None]
    else:
        funcs = [f for f in model.functions if f.kind == "kernel" and f.name == name and f.body is not None]
    if len(funcs) != 1 or funcs[0].has_error:
        return None  # not found, ambiguous, or not read whole: silent
    f = funcs[0]
    if is_grid_stride(model, f):
        return None  # covers any size
    group = _group(model, launch)
    hits = [t for t in launch.truncations if _divides_by_group(t, group) and not _rounds_up(t)]
    if not hits:
        return None
    first = hits[0]
    label = name or "main"
    n, b = first.numerator, first.divisor
    if any(c in b for c in "+-*/%<> "):
        b = f"({b})"
    text = host_data[first.at.start:first.at.end].decode("utf-8", "replace")
    text = " ".join(text.split())
    nv, dv = first.numerator_value, first.divisor_value
    if nv is not None and dv:  # a constant: surely not a multiple (an exact quotient is not recorded)
        lost = nv % dv
        shown = str(nv) if n.strip() == str(nv) else f"{n} = {nv}"
        how = f"rounds {'to nearest' if first.kind == 'round' else 'down'}: {shown} is not a multiple of {dv}"
        tail = f"the last {lost} items get no thread"
    elif first.kind == "round":
        how, tail = f"rounds to nearest: when {n} % {b} is below half of {b}", f"the last {n} % {b} items get no thread"
    else:
        how, tail = f"rounds down: when {n} is not a multiple of {b}", f"the last {n} % {b} items get no thread"
    message = (f"grid size `{text}` {how}, {tail} ('{label}' in {display_path(kpath)} has no grid-stride loop); "
               f"round up with `{first.round_up}`")
    src = model.source
    line, col = src.position(f.name_node.start_byte)
    what = "kernel" if model.language != "glsl" else "shader"
    related = tuple(Related(t.at.start, t.at.end, "also rounds down") for t in hits[1:])
    related += (Related(launch.at.start, launch.at.end, "launch" if launch.api != "metal" else "dispatched here"),
                Related(f.name_node.start_byte, f.name_node.end_byte, f"{what} '{label}' defined here", kpath,
                        line, col))
    return Finding(first.at.start, first.at.end, message, kernel=label, related=related)


def host_parse_errors(path: str, data: bytes) -> int | None:
    """Parse errors (ERROR and MISSING nodes) in a host file, with the grammar its scanners use
    (``--add-ignore`` checks that its comments add none); None when it cannot be parsed."""
    import tree_sitter as ts

    from shaderlint.fixes import tree_error_count

    ext = path[path.rfind("."):].lower() if "." in path else ""
    try:
        if ext == ".swift":
            import tree_sitter_swift as mod
        elif ext in (".m", ".mm"):
            import tree_sitter_objc as mod
        elif ext in (".cu", ".cuh") or b"<<<" in data:
            import tree_sitter_cuda as mod
        else:
            import tree_sitter_cpp as mod
        tree = ts.Parser(ts.Language(mod.language())).parse(data)
    except Exception:
        return None
    return tree_error_count(tree.root_node)


def _group(model, launch: HostLaunch) -> tuple[int, int, int] | None:
    if launch.api == "vulkan":
        from shaderlint.host.index import _glsl_group

        return _glsl_group(model)(launch)
    return launch.group


def _rounds_up(t: Truncation) -> bool:
    """A constant rounded to nearest that happens to round up (``(int)(1000 / 176.0 + 0.5)``)."""
    nv, dv = t.numerator_value, t.divisor_value
    return t.kind == "round" and nv is not None and bool(dv) and nv % dv >= (dv + 1) // 2


def _divides_by_group(t: Truncation, group: tuple[int, int, int] | None) -> bool:
    """The division's divisor is the launch's group size along its axis."""
    if t.divisor_value is not None and group is not None:
        return t.divisor_value == group[t.axis]
    return t.as_group
