"""Settings: what to check and the facts the linter cannot see.

``Settings`` is immutable and hashable (its ``key()`` feeds the cache). Files
(``pyproject.toml`` ``[tool.shaderlint]`` or ``shaderlint.toml``) are read by
:func:`load_config`; CLI flags override them.
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from dataclasses import dataclass, field, replace
from typing import Any


class ConfigError(Exception):
    """A configuration file or value that cannot be used (exit code 2)."""


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
    time_budget: float = 5.0  # seconds per file
    config_path: str | None = None

    def key(self) -> str:
        return repr((self.select, self.ignore, self.extend_select, self.per_file_ignores, self.target,
                     self.occupancy_threshold, self.facts))

    def facts_for(self, path: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for pattern, items in self.facts:
            if _glob_match(path, pattern):
                out.update(dict(items))
        return out

    def ignored_for(self, path: str) -> tuple[str, ...]:
        out: list[str] = []
        for pattern, codes in self.per_file_ignores:
            if _glob_match(path, pattern):
                out.extend(codes)
        return tuple(out)

    def with_overrides(self, **kw: Any) -> "Settings":
        return replace(self, **{k: v for k, v in kw.items() if v is not None})


def _glob_match(path: str, pattern: str) -> bool:
    p = path.replace(os.sep, "/")
    if fnmatch.fnmatch(p, pattern) or fnmatch.fnmatch(os.path.basename(p), pattern):
        return True
    return fnmatch.fnmatch(p, "*/" + pattern.lstrip("/"))


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


CONFIG_KEYS = {"select", "ignore", "extend-select", "per-file-ignores", "target", "occupancy-threshold",
               "exclude", "facts", "threadgroup-size", "grid-size", "dispatch", "time-budget"}
FACT_KEYS = ("threadgroup-size", "grid-size", "dispatch")


def find_config(start: str) -> str | None:
    """The closest ``shaderlint.toml`` or ``pyproject.toml`` with ``[tool.shaderlint]`` from ``start`` upward."""
    d = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(os.path.abspath(start)))
    while True:
        for name in ("shaderlint.toml", "pyproject.toml"):
            p = os.path.join(d, name)
            if os.path.isfile(p):
                if name == "shaderlint.toml":
                    return p
                try:
                    with open(p, "rb") as fh:
                        data = tomllib.load(fh)
                except (OSError, tomllib.TOMLDecodeError):
                    continue
                if "shaderlint" in data.get("tool", {}):
                    return p
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def load_config(path: str) -> Settings:
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from e
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e}") from e
    table = data.get("tool", {}).get("shaderlint", {}) if path.endswith("pyproject.toml") else data.get("tool", {}).get("shaderlint", data)
    return settings_from_table(table, path)


def settings_from_table(table: dict[str, Any], path: str = "<config>") -> Settings:
    from shaderlint.estimate.targets import TARGETS

    unknown = set(table) - CONFIG_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown key {sorted(unknown)[0]!r} in [tool.shaderlint]")

    def codes(key: str) -> tuple[str, ...]:
        v = table.get(key, [])
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise ConfigError(f"{path}: {key!r} must be a list of rule codes")
        for c in v:
            if c != "ALL" and not (c.startswith("SL") and c[2:].isdigit() or c == "SL"):
                raise ConfigError(f"{path}: {key!r}: {c!r} is not a rule code or prefix (e.g. SL101, SL1)")
        return tuple(v)

    kw: dict[str, Any] = {"select": codes("select"), "ignore": codes("ignore"), "extend_select": codes("extend-select"),
                          "config_path": path}
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{path}: 'per-file-ignores' must be a table of glob = [codes]")
    kw["per_file_ignores"] = tuple((g, tuple(c)) for g, c in pfi.items())
    if "target" in table:
        if table["target"] not in TARGETS:
            raise ConfigError(f"{path}: 'target' = {table['target']!r} is not a known target ({', '.join(sorted(TARGETS))})")
        kw["target"] = table["target"]
    if "occupancy-threshold" in table:
        v = table["occupancy-threshold"]
        if not isinstance(v, (int, float)) or not 0 <= v <= 1:
            raise ConfigError(f"{path}: 'occupancy-threshold' must be a number between 0 and 1")
        kw["occupancy_threshold"] = float(v)
    if "time-budget" in table:
        v = table["time-budget"]
        if not isinstance(v, (int, float)) or v <= 0:
            raise ConfigError(f"{path}: 'time-budget' must be a positive number of seconds")
        kw["time_budget"] = float(v)
    ex = table.get("exclude", [])
    if not isinstance(ex, list):
        raise ConfigError(f"{path}: 'exclude' must be a list of globs")
    kw["exclude"] = tuple(ex)
    facts: list[tuple[str, tuple[tuple[str, str], ...]]] = []
    top = tuple((k, str(table[k])) for k in FACT_KEYS if k in table)
    if top:
        facts.append(("*", top))
    ft = table.get("facts", {})
    if not isinstance(ft, dict):
        raise ConfigError(f"{path}: 'facts' must be a table of glob = {{threadgroup-size = ...}}")
    for glob, items in ft.items():
        if not isinstance(items, dict) or set(items) - set(FACT_KEYS):
            raise ConfigError(f"{path}: facts.{glob!r} may only set {', '.join(FACT_KEYS)}")
        facts.append((glob, tuple((k, str(v)) for k, v in items.items())))
    kw["facts"] = tuple(facts)
    return Settings(**kw)
