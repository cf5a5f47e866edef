"""Settings: what to check and the facts the linter cannot see.

``Settings`` is immutable and hashable (its ``key()`` feeds the cache). Files
(``pyproject.toml`` ``[tool.shaderlint]`` or ``shaderlint.toml``) are read by
:func:`load_config`; CLI flags override them (:meth:`Settings.with_cli`).

Discovery: from the directory of each linted file upward, the first directory
holding a ``shaderlint.toml`` (top-level keys or a ``[tool.shaderlint]`` table)
or a ``pyproject.toml`` with a ``[tool.shaderlint]`` table supplies the
settings; ``shaderlint.toml`` wins over ``pyproject.toml`` in the same
directory. Nothing is merged across files: the closest file wins.

``extend = "../pyproject.toml"`` reads another file first (relative to the
file that names it) and layers this one over it, as ruff does: keys set here
replace the base's, except rule selection, which layers like the CLI flags
(``select`` resets, ``extend-select`` adds, ``ignore`` removes) and
``extend-exclude``, which adds to ``exclude``. ``--config KEY=VALUE``
overrides (:class:`SettingsResolver`) are a last layer over every file.

Globs (``per-file-ignores``, ``exclude``, ``extend-exclude``, ``facts``) are
matched against the path relative to the directory of the configuration file
that wrote them (the current directory without one); ``*`` matches across
``/``, and a glob without ``/`` also matches the file's base name.

``extension = {".fs" = "glsl", ".h" = "cuda"}`` maps more file extensions to
languages (:meth:`Settings.language_for`): discovery, the engine, the cache
and ``report`` all ask the settings, so a mapped file is found and linted.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import re
import tomllib
from dataclasses import dataclass, replace
from typing import Any


class ConfigError(Exception):
    """A configuration file or value that cannot be used (exit code 2)."""


#: ``time-budget`` is per file up to this many lines and scales with the length beyond, up to
#: BUDGET_MAX_SCALE times (a file of megabytes still ends in seconds, not minutes).
BUDGET_LINES = 5000
BUDGET_MAX_SCALE = 4.0
#: ``max-file-size``: files larger than this many bytes are not analysed (one SL001 says so). The largest
#: file of the real-code corpus is 450 KB; a 1 MiB file needs about 16 s of the 20 s of budget it gets,
#: so a larger one would mostly spend its whole budget (and hundreds of MB) to end in an SL001 anyway.
MAX_FILE_SIZE = 1 << 20


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ()  # empty = every default rule
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    target: str | None = None  # None = per-language default
    occupancy_threshold: float = 0.5
    exclude: tuple[str, ...] = ()
    facts: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()  # (glob, ((key, value), ...))
    time_budget: float = 5.0  # seconds per file (per BUDGET_LINES lines for longer files: budget_for)
    extension: tuple[tuple[str, str], ...] = ()  # ((".fs", "glsl"), ...): extra extension -> language
    max_file_size: int = MAX_FILE_SIZE  # bytes; larger files are not analysed (0: no limit)
    defines: tuple[str, ...] = ()  # the build's -D flags: "FUSED", "N=4" (shaderlint.languages.conditions)
    #: ``defines-complete``: the build's -D flags are all known, so a name nothing defines is undefined
    #: in ``#if`` (shaderlint.project.includes.defines_complete); None: when compile_commands.json gives them
    defines_complete: bool | None = None
    #: A compiler lint runs may call for exact figures (SL505, SL506): "none", "ptxas" or "auto".
    compiler: str = "none"
    host_code: bool = True  # read host launch code for kernel facts (shaderlint.host.index)
    #: ``include-dirs``: absolute directories ``#include`` searches after the includer's own directory
    #: (shaderlint.project.includes), given relative to the configuration file that sets them
    include_dirs: tuple[str, ...] = ()
    config_path: str | None = None

    def language_for(self, path: str) -> str | None:
        """The language of ``path``: the configured ``extension`` mapping first, then the built-in one."""
        ext = _extension(path).lower()
        for e, lang in self.extension:
            if e == ext:
                return lang
        return _builtin_extensions().get(ext)

    def budget_for(self, data: bytes) -> float:
        """The time budget for a file of ``data``: ``time_budget`` seconds, scaled up for files
        longer than :data:`BUDGET_LINES` lines (at most :data:`BUDGET_MAX_SCALE` times). The budget stops pathological inputs (which are
        small); a long file that is simply long keeps the same headroom over the typical lint
        time (about 0.2 s per 1,000 lines) as a short one, so it does not turn into an SL001 on a
        slower or busier machine."""
        lines = data.count(b"\n") + 1
        return self.time_budget * min(BUDGET_MAX_SCALE, max(1.0, lines / BUDGET_LINES))

    def key(self) -> str:
        """Everything that can change what the rules report (for the cache)."""
        return repr((self.select, self.ignore, self.extend_select, self.per_file_ignores, self.target,
                     self.occupancy_threshold, self.facts, self.extension,
                     self.base_dir() if self.config_path else None, self.max_file_size, self.defines,
                     self.defines_complete, self.compiler, compiler_identity(self.compiler), self.include_dirs))

    def base_dir(self) -> str:
        """The directory globs are relative to: the config file's, else the current one."""
        if self.config_path:
            return os.path.dirname(os.path.abspath(self.config_path))
        return os.getcwd()

    def matches(self, path: str, pattern: str) -> bool:
        return glob_match(path, pattern, self.base_dir())

    def facts_for(self, path: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for pattern, items in self.facts:
            if self.matches(path, pattern):
                out.update(dict(items))
        return out

    def ignored_for(self, path: str) -> tuple[str, ...]:
        out: list[str] = []
        for pattern, codes in self.per_file_ignores:
            if self.matches(path, pattern):
                out.extend(codes)
        return tuple(out)

    def is_excluded(self, path: str) -> bool:
        return bool(self.exclude) and any(self.matches(path, g) for g in self.exclude)

    def with_overrides(self, **kw: Any) -> "Settings":
        """Replace fields (``None`` values are ignored)."""
        return replace(self, **{k: v for k, v in kw.items() if v is not None})

    def with_cli(self, select: tuple[str, ...] | None = None, ignore: tuple[str, ...] | None = None,
                 extend_select: tuple[str, ...] | None = None, **kw: Any) -> "Settings":
        """Apply command-line options on top of a file's settings.

        Rule selection works in layers, as in ruff: ``--select`` replaces the file's
        selection (its ``select``, ``extend-select`` and ``ignore``); ``--extend-select``
        enables codes on top of it (overriding the file's ignores of those codes);
        ``--ignore`` removes codes last.
        Other keys replace the file's values.
        """
        s = self
        if select is not None:
            s = replace(s, select=tuple(select), ignore=(), extend_select=())
        if extend_select:
            # A later layer: the file's ignores inside what is extended no longer apply.
            kept = tuple(i for i in s.ignore if not any(x == "ALL" or i.startswith(x) for x in extend_select))
            s = replace(s, extend_select=s.extend_select + tuple(extend_select), ignore=kept)
        if ignore:
            s = replace(s, ignore=s.ignore + tuple(ignore))
        return s.with_overrides(**kw)


def _extension(path: str) -> str:
    """``os.path.splitext(path)[1]`` (discovery asks it of every file it walks past)."""
    if os.altsep is not None:
        return os.path.splitext(path)[1]
    dot = path.rfind(".")
    start = path.rfind(os.sep) + 1
    # (leading dots of the name start no extension: ``.bashrc``, ``..x``)
    return path[dot:] if dot > start and path[start:dot].lstrip(".") else ""


def _builtin_extensions() -> dict[str, str]:
    global _EXTENSIONS
    if _EXTENSIONS is None:
        from shaderlint.languages import EXTENSIONS  # late: the front ends import much more than settings need
        _EXTENSIONS = EXTENSIONS
    return _EXTENSIONS


_EXTENSIONS: dict[str, str] | None = None


def glob_match(path: str, pattern: str, base: str | None = None) -> bool:
    """Whether ``path`` matches ``pattern`` (relative to ``base``; see the module docstring)."""
    pattern = pattern.replace(os.sep, "/")
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, base or os.getcwd()).replace(os.sep, "/")
    candidates = [rel]
    if pattern.startswith("/") or (len(pattern) > 1 and pattern[1] == ":"):
        candidates = [absolute.replace(os.sep, "/")]
    pat = pattern[2:] if pattern.startswith("./") else pattern
    pats = [pat.rstrip("/")]
    if pat.startswith("**/"):
        pats.append(pat[3:])
    for c in candidates:
        for p in pats:
            if fnmatch.fnmatchcase(c, p) or fnmatch.fnmatchcase(c, p + "/*"):
                return True
            if "/" not in p and fnmatch.fnmatchcase(c.rsplit("/", 1)[-1], p):
                return True
            if "/" not in p and any(fnmatch.fnmatchcase(part, p) for part in c.split("/")[:-1] if part != ".."):
                return True  # a directory name anywhere on the relative path (``build``)
    return False


def _longest(code: str, prefixes: tuple[str, ...]) -> int:
    lengths = [0 if p == "ALL" else len(p) for p in prefixes if p == "ALL" or code.startswith(p)]
    return max(lengths, default=-1)


def rule_enabled(code: str, default_on: bool, select: tuple[str, ...], ignore: tuple[str, ...],
                 extend_select: tuple[str, ...] = ()) -> bool:
    """Most specific prefix wins (flake8/ruff semantics); ``ALL`` matches everything.
    Opt-in rules are enabled only by their full code (or ``ALL``)."""
    chosen = select + extend_select
    s = _longest(code, chosen)
    if not default_on and s != len(code) and "ALL" not in chosen:
        s = -1
    i = _longest(code, ignore)
    if i >= 0 and i >= s:
        return False
    if s >= 0:
        return True
    return default_on and not select


CONFIG_KEYS = ("extend", "select", "ignore", "extend-select", "per-file-ignores", "target", "occupancy-threshold",
               "exclude", "extend-exclude", "extension", "facts", "threadgroup-size", "grid-size", "dispatch",
               "time-budget", "max-file-size", "defines", "defines-complete", "compiler", "host-code", "include-dirs")
LANGUAGES = ("metal", "cuda", "glsl")
FACT_KEYS = ("threadgroup-size", "grid-size", "dispatch")
DISPATCH_VALUES = ("threads", "threadgroups")
COMPILER_VALUES = ("none", "ptxas", "auto")
CONFIG_NAMES = ("shaderlint.toml", "pyproject.toml")

_DIMS = re.compile(r"^[1-9][0-9]*(?:x[1-9][0-9]*){0,2}$")
_CODE = re.compile(r"^SL[0-9]{0,3}$")


def find_config(start: str) -> str | None:
    """The closest ``shaderlint.toml`` or ``pyproject.toml`` with ``[tool.shaderlint]``
    from ``start`` (a directory, or a file whose directory is used) upward.

    A ``pyproject.toml`` that is not valid TOML is skipped here (the language server
    uses this); :class:`SettingsResolver`, used by the CLI, reports it instead."""
    d = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(os.path.abspath(start)))
    while True:
        try:
            hit = _config_in(d)
        except ConfigError:
            hit = None
        if hit is not None:
            return hit
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _read_toml(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from e
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from e


def _table(path: str) -> dict[str, Any]:
    data = _read_toml(path)
    tool = data.get("tool")
    if os.path.basename(path) == "pyproject.toml" or (isinstance(tool, dict) and "shaderlint" in tool
                                                        and set(data) == {"tool"}):
        table = tool.get("shaderlint", {}) if isinstance(tool, dict) else {}
    else:
        table = data
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.shaderlint] must be a table")
    return table


def load_config(path: str, overrides: dict[str, Any] | None = None) -> Settings:
    """Settings from one file (and the files it ``extend``s), with ``overrides`` (``--config KEY=VALUE``)
    as a last layer. Raises :class:`ConfigError` naming the file and key."""
    settings = _load_chain(path, [])
    if overrides:
        settings = layer(settings, replace(settings_from_table(overrides, "--config"), config_path=None), overrides)
    return settings


def _load_chain(path: str, seen: list[str]) -> Settings:
    key = os.path.realpath(path)
    if key in seen:
        chain = " -> ".join(seen[seen.index(key):] + [key])
        raise ConfigError(f"{path}: 'extend' makes a cycle: {chain}")
    table = _table(path)
    own = settings_from_table(table, path)
    if "extend" not in table:
        return own
    target = table["extend"]
    if not isinstance(target, str) or not target:
        raise ConfigError(f"{path}: 'extend' must be the path of another configuration file, not {target!r}")
    base_path = os.path.join(os.path.dirname(os.path.abspath(path)), os.path.expanduser(target))
    if not os.path.isfile(base_path):
        raise ConfigError(f"{path}: 'extend': {target!r} is not a file")
    base = _load_chain(base_path, seen + [key])
    return layer(_anchored(base), own, table)


def _anchor(glob: str, base: str) -> str:
    """A glob with ``/`` relative to ``base``, made absolute (so it keeps meaning the same files when
    another file extends the one that wrote it); a glob without ``/`` matches names anywhere as is."""
    g = glob.replace(os.sep, "/")
    if "/" not in g.rstrip("/") or g.startswith("/") or (len(g) > 1 and g[1] == ":"):
        return glob
    g = g[2:] if g.startswith("./") else g
    escaped = re.sub(r"([*?\[])", r"[\1]", base.replace(os.sep, "/"))
    return escaped.rstrip("/") + "/" + g


def _anchored(s: Settings) -> Settings:
    if not s.config_path:
        return s
    base = s.base_dir()
    return replace(
        s,
        exclude=tuple(_anchor(g, base) for g in s.exclude),
        per_file_ignores=tuple((_anchor(g, base), c) for g, c in s.per_file_ignores),
        facts=tuple((g if g == "**" else _anchor(g, base), items) for g, items in s.facts),
    )


def layer(base: Settings, own: Settings, table: dict[str, Any]) -> Settings:
    """``own`` (read from ``table``) over ``base``: the keys ``table`` sets replace the base's; rule
    selection layers as on the command line; ``extend-exclude`` adds to the exclusions."""
    s = base.with_cli(select=own.select if "select" in table else None,
                      extend_select=own.extend_select, ignore=own.ignore)
    kw: dict[str, Any] = {"config_path": own.config_path or base.config_path}
    if "per-file-ignores" in table:
        kw["per_file_ignores"] = own.per_file_ignores
    for key, attr in (("target", "target"), ("occupancy-threshold", "occupancy_threshold"),
                      ("time-budget", "time_budget"), ("defines", "defines"),
                      ("defines-complete", "defines_complete"), ("compiler", "compiler"),
                      ("host-code", "host_code"), ("include-dirs", "include_dirs")):
        if key in table:
            kw[attr] = getattr(own, attr)
    if "exclude" in table:
        kw["exclude"] = own.exclude
    elif "extend-exclude" in table:
        kw["exclude"] = s.exclude + own.exclude
    if "extension" in table:
        kw["extension"] = own.extension + tuple(x for x in s.extension if x[0] not in dict(own.extension))
    if "facts" in table or any(k in table for k in FACT_KEYS):
        kw["facts"] = s.facts + own.facts  # later globs win, per key (Settings.facts_for)
    return replace(s, **kw)


def check_codes(values: Any, where: str) -> tuple[str, ...]:
    """Validate a list of rule codes or prefixes (``SL1``, ``SL101``, ``ALL``); ``where``
    prefixes the error message."""
    from shaderlint.rules.registry import RULES

    if isinstance(values, str) or not isinstance(values, (list, tuple)) \
            or not all(isinstance(x, str) for x in values):
        raise ConfigError(f"{where} must be a list of rule codes, e.g. [\"SL101\", \"SL2\"]")
    out = []
    for raw in values:
        c = raw.strip().upper()
        if c != "ALL" and not _CODE.match(c):
            raise ConfigError(f"{where}: {raw!r} is not a rule code or prefix (e.g. SL101, SL1, ALL)")
        if c != "ALL" and not any(r.code.startswith(c) for r in RULES):
            near = difflib.get_close_matches(c, [r.code for r in RULES], n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise ConfigError(f"{where}: {raw!r} matches no rule{hint}")
        out.append(c)
    return tuple(out)


def check_target(value: Any, where: str) -> str:
    from shaderlint.estimate.targets import get_target, target_names

    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a string naming a target ({', '.join(target_names())})")
    try:
        return get_target(value).name
    except KeyError:
        raise ConfigError(f"{where}: {value!r} is not a known target ({', '.join(target_names())})") from None


def check_defines(value: Any, where: str) -> tuple[str, ...]:
    """``["FUSED", "N=4"]``: macros the build defines (``-D``), ``NAME`` (defined as 1) or ``NAME=VALUE``."""
    from shaderlint.languages.conditions import parse_define

    if isinstance(value, str) or not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise ConfigError(f"{where} must be a list of macro definitions as -D takes them, e.g. [\"FUSED\", \"N=4\"]")
    for d in value:
        if parse_define(d) is None:
            raise ConfigError(f"{where}: {d!r} is not a macro definition (NAME or NAME=VALUE; no function-like macros)")
    return tuple(d.strip() for d in value)


def check_include_dirs(value: Any, where: str, config_path: str) -> tuple[str, ...]:
    """``["include", "../common"]``: directories relative to the configuration file (the current
    directory for ``--config`` overrides), returned absolute and normalized."""
    if isinstance(value, str) or not isinstance(value, list) or not all(isinstance(x, str) and x.strip() for x in value):
        raise ConfigError(f"{where} must be a list of directories, e.g. [\"include\", \"../common\"]")
    base = os.path.dirname(os.path.abspath(config_path)) if os.path.isfile(config_path) else os.getcwd()
    return tuple(os.path.normpath(os.path.join(base, os.path.expanduser(d.strip()))) for d in value)


def check_fact(key: str, value: Any, where: str) -> str:
    if key == "dispatch":
        if value not in DISPATCH_VALUES:
            raise ConfigError(f"{where}: 'dispatch' must be one of {', '.join(map(repr, DISPATCH_VALUES))}, "
                              f"not {value!r}")
        return str(value)
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not _DIMS.match(str(value).lower()):
        raise ConfigError(f"{where}: {key!r} must be a positive size like 256, \"16x16\" or \"8x8x4\", "
                          f"not {value!r}")
    return str(value).lower()


def check_extensions(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    """``{".fs" = "glsl", "h" = "cuda"}`` -> ``((".fs", "glsl"), (".h", "cuda"))`` (dot optional, any case)."""
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be a table of extension = language, e.g. {{ \".fs\" = \"glsl\" }}")
    out = []
    for ext, lang in value.items():
        e = ext.strip().lower()
        e = e if e.startswith(".") else "." + e
        if len(e) < 2 or "/" in e or os.sep in e or " " in e:
            raise ConfigError(f"{where}: {ext!r} is not a file extension")
        if lang not in LANGUAGES:
            raise ConfigError(f"{where}: {ext!r} maps to {lang!r}; languages are {', '.join(LANGUAGES)}")
        out.append((e, lang))
    return tuple(out)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _globs(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
        raise ConfigError(f"{where} must be a list of globs, e.g. [\"build\", \"third_party/**\"]")
    return tuple(value)


def settings_from_table(table: dict[str, Any], path: str = "<config>") -> Settings:
    for k in table:
        if k not in CONFIG_KEYS:
            near = difflib.get_close_matches(k, CONFIG_KEYS, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise ConfigError(f"{path}: unknown key {k!r} in [tool.shaderlint]{hint}; "
                              f"known keys: {', '.join(CONFIG_KEYS)}")

    def where(key: str) -> str:
        return f"{path}: {key!r}"

    kw: dict[str, Any] = {"config_path": path}
    for key, attr in (("select", "select"), ("ignore", "ignore"), ("extend-select", "extend_select")):
        if key in table:
            kw[attr] = check_codes(table[key], where(key))
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{where('per-file-ignores')} must be a table of \"glob\" = [codes]")
    kw["per_file_ignores"] = tuple((g, check_codes(c, f"{path}: 'per-file-ignores.{g}'")) for g, c in pfi.items())
    if "target" in table:
        kw["target"] = check_target(table["target"], where("target"))
    if "compiler" in table:
        v = table["compiler"]
        if v not in COMPILER_VALUES:
            raise ConfigError(f"{where('compiler')} must be one of {', '.join(map(repr, COMPILER_VALUES))}, not {v!r}")
        kw["compiler"] = v
    if "occupancy-threshold" in table:
        v = table["occupancy-threshold"]
        if not _number(v) or not 0 <= v <= 1:
            raise ConfigError(f"{where('occupancy-threshold')} must be a number between 0 and 1, not {v!r}")
        kw["occupancy_threshold"] = float(v)
    if "time-budget" in table:
        v = table["time-budget"]
        if not _number(v) or v <= 0:
            raise ConfigError(f"{where('time-budget')} must be a positive number of seconds, not {v!r}")
        kw["time_budget"] = float(v)
    if "max-file-size" in table:
        v = table["max-file-size"]
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ConfigError(f"{where('max-file-size')} must be a number of bytes (0: no limit), not {v!r}")
        kw["max_file_size"] = v
    if "host-code" in table:
        v = table["host-code"]
        if not isinstance(v, bool):
            raise ConfigError(f"{where('host-code')} must be true or false, not {v!r}")
        kw["host_code"] = v
    if "defines" in table:
        kw["defines"] = check_defines(table["defines"], where("defines"))
    if "defines-complete" in table:
        v = table["defines-complete"]
        if not isinstance(v, bool):
            raise ConfigError(f"{where('defines-complete')} must be true or false, not {v!r}")
        kw["defines_complete"] = v
    if "include-dirs" in table:
        kw["include_dirs"] = check_include_dirs(table["include-dirs"], where("include-dirs"), path)
    if "exclude" in table or "extend-exclude" in table:
        kw["exclude"] = (_globs(table["exclude"], where("exclude")) if "exclude" in table else ()) \
            + (_globs(table["extend-exclude"], where("extend-exclude")) if "extend-exclude" in table else ())
    if "extension" in table:
        kw["extension"] = check_extensions(table["extension"], where("extension"))
    facts: list[tuple[str, tuple[tuple[str, str], ...]]] = []
    top = tuple((k, check_fact(k, table[k], where(k))) for k in FACT_KEYS if k in table)
    if top:
        facts.append(("**", top))
    ft = table.get("facts", {})
    if not isinstance(ft, dict):
        raise ConfigError(f"{where('facts')} must be a table of \"glob\" = {{ threadgroup-size = ... }}")
    for glob, items in ft.items():
        w = f"{path}: 'facts.{glob}'"
        if not isinstance(items, dict):
            raise ConfigError(f"{w} must be a table of {', '.join(FACT_KEYS)}")
        for k in items:
            if k not in FACT_KEYS:
                raise ConfigError(f"{w}: unknown key {k!r}; facts may only set {', '.join(FACT_KEYS)}")
        facts.append((glob, tuple((k, check_fact(k, v, w)) for k, v in items.items())))
    kw["facts"] = tuple(facts)
    return Settings(**kw)


class SettingsResolver:
    """Settings for each linted path: its closest configuration file (or ``explicit``),
    with command-line options applied on top. Look-ups are cached per directory, so a
    tree of thousands of files reads each configuration file once."""

    def __init__(self, explicit: str | None = None, cli: dict[str, Any] | None = None,
                 overrides: dict[str, Any] | None = None) -> None:
        self.cli = dict(cli or {})
        self.overrides = dict(overrides or {})  # --config KEY=VALUE, over every file
        if self.overrides:
            settings_from_table(self.overrides, "--config")  # report a bad override once, up front
        self.explicit = load_config(explicit, self.overrides) if explicit else None
        self._dir_config: dict[str, str | None] = {}
        self._loaded: dict[str | None, Settings] = {}
        self._by_dir: dict[object, Settings] = {}  # a path's directory as written (and the current one) -> settings

    def config_for_dir(self, d: str) -> str | None:
        d = os.path.abspath(d)
        walked: list[str] = []
        found: str | None = None
        while True:
            if d in self._dir_config:
                found = self._dir_config[d]
                break
            walked.append(d)
            hit = _config_in(d)
            if hit is not None:
                found = hit
                break
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
        for w in walked:
            self._dir_config[w] = found
        return found

    def for_path(self, path: str) -> Settings:
        # Asked for every file and directory a run walks, lints and plans: answered by the directory
        # as written (with the current one when relative), when the last component is a name (not
        # ``..``, not empty: ``x/``). POSIX separators only.
        cut = path.rfind("/") + 1
        key: object = None
        if os.altsep is None and path[cut:] not in ("", os.curdir, os.pardir):
            key = path[:cut] if path.startswith("/") else (os.getcwd(), path[:cut])
            got = self._by_dir.get(key)
            if got is not None:
                return got
        got = self._for_path(path)
        if key is not None:
            self._by_dir[key] = got
        return got

    def _for_path(self, path: str) -> Settings:
        if self.explicit is not None:
            cfg: str | None = self.explicit.config_path
        else:
            cfg = self.config_for_dir(os.path.dirname(os.path.abspath(path)))
        if cfg not in self._loaded:
            if self.explicit is not None:
                base = self.explicit
            elif cfg:
                base = load_config(cfg, self.overrides)
            else:
                base = settings_from_table(self.overrides, "--config") if self.overrides else Settings()
                base = replace(base, config_path=None)
            self._loaded[cfg] = base.with_cli(**self.cli)
        return self._loaded[cfg]


def _config_in(d: str) -> str | None:
    for name in CONFIG_NAMES:
        p = os.path.join(d, name)
        if os.path.isfile(p) and (name == "shaderlint.toml" or "shaderlint" in _read_toml(p).get("tool", {})):
            return p
    return None


_COMPILER_IDS: dict[str, str] = {}


def compiler_identity(compiler: str) -> str | None:
    """What the lint cache must know about the configured compiler: which nvcc (path and version)
    answers, or that none is installed, and for "auto" which RADV driver (it measures GLSL impacts).
    None when no compiler is configured."""
    if compiler == "none":
        return None
    got = _COMPILER_IDS.get(compiler)
    if got is None:
        from shaderlint.estimate.ptxas import nvcc_version

        got = nvcc_version() or "no nvcc"
        if compiler == "auto":  # measured GLSL impacts come from RADV: which driver answers, if one does
            from shaderlint.estimate import radv

            got += " | " + (radv._driver_stamp(radv.radeon_icd()) if radv.unavailable_reason() is None else "no radv")
        _COMPILER_IDS[compiler] = got
    return got
