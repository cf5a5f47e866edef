"""Settings of the language server.

Two layers, most specific last:

1. the closest configuration file of the document (``shaderlint.toml`` or
   ``pyproject.toml`` ``[tool.shaderlint]``, found with
   :func:`shaderlint.config.find_config`), as the CLI reads it;
2. the client's settings: ``initializationOptions``, then the ``shaderlint``
   section of ``workspace/configuration`` (re-read on
   ``workspace/didChangeConfiguration``). Keys: ``select``, ``ignore``
   (lists of codes or prefixes), ``target`` (a GPU profile), ``codeLens``
   (bool), plus the server-only ``debounce`` (milliseconds, default 150),
   ``pushDiagnostics`` (``"auto"``: push unless the client pulls, or a bool) and
   ``maxDocumentBytes`` (documents larger than this are not analysed, default
   2 MiB; 0: no limit).

Empty values (``[]``, ``""``, null) mean "not set", so that an editor's
defaults do not override the project's configuration. Invalid values are
dropped and reported through :attr:`ClientSettings.problems`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

from shaderlint.config import ConfigError, Settings, find_config, load_config, settings_from_table
from shaderlint.languages import LANGUAGE_IDS, language_for_path
from shaderlint.languages.glsl import STAGES

DEFAULT_DEBOUNCE_MS = 150.0
#: Documents over this many bytes get one informational SL001 instead of an analysis: the engine's
#: time budget (at most 4 x 5 s of CPU) would stop most of them anyway, after seconds of work and
#: hundreds of MB of syntax tree (a 1 MB file of concatenated examples already ran into the budget).
DEFAULT_MAX_DOCUMENT_BYTES = 2 * 1024 * 1024

#: LSP language ids -> shaderlint language. VS Code says ``cuda-cpp``; some GLSL
#: extensions use the stage as the language id.
LSP_LANGUAGE_IDS: dict[str, str | None] = {
    **LANGUAGE_IDS,
    "cuda": "cuda",
    **{ext[1:]: "glsl" for ext in STAGES},
}


def language_for(language_id: str | None, path: str) -> str | None:
    """The language of a document: a known language id wins, then the file extension."""
    key = (language_id or "").strip().lower()
    if key in LSP_LANGUAGE_IDS:
        return LSP_LANGUAGE_IDS[key]
    return language_for_path(path)


@dataclass(frozen=True)
class ClientSettings:
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    target: str | None = None
    code_lens: bool = False
    debounce_ms: float = DEFAULT_DEBOUNCE_MS
    push_diagnostics: str | bool = "auto"
    max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES
    problems: tuple[str, ...] = field(default=(), compare=False)

    def merged(self, options: Any) -> "ClientSettings":
        """These settings with the values ``options`` (a client's dict) sets."""
        if not isinstance(options, dict):
            return self
        if isinstance(options.get("shaderlint"), dict) and not ({"select", "ignore", "target"} & set(options)):
            options = options["shaderlint"]
        problems: list[str] = []
        kw: dict[str, Any] = {}
        for key in ("select", "ignore", "target"):
            if key in options:
                kw[key] = _checked(key, options[key], problems)
        if "codeLens" in options and options["codeLens"] is not None:
            kw["code_lens"] = bool(options["codeLens"])
        if "debounce" in options and options["debounce"] is not None:
            v = options["debounce"]
            if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 10_000:
                kw["debounce_ms"] = float(v)
            else:
                problems.append(f"debounce must be a number of milliseconds between 0 and 10000, not {v!r}")
        if "pushDiagnostics" in options:
            v = options["pushDiagnostics"]
            if v in ("auto", True, False):
                kw["push_diagnostics"] = v
            else:
                problems.append(f"pushDiagnostics must be \"auto\", true or false, not {v!r}")
        if "maxDocumentBytes" in options and options["maxDocumentBytes"] is not None:
            v = options["maxDocumentBytes"]
            if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                kw["max_document_bytes"] = v
            else:
                problems.append(f"maxDocumentBytes must be a non-negative number of bytes (0: no limit), not {v!r}")
        return replace(self, **kw, problems=tuple(problems))

    def overrides(self) -> dict[str, Any]:
        return {k: v for k, v in (("select", self.select), ("ignore", self.ignore), ("target", self.target))
                if v is not None}


def _checked(key: str, value: Any, problems: list[str]) -> Any:
    """``value`` validated as the configuration file's ``key`` would be; None when empty or invalid."""
    if value in (None, "", []):
        return None
    if key != "target" and isinstance(value, str):
        value = value.replace(",", " ").split()
    try:
        settings = settings_from_table({key: value}, "client settings")
    except ConfigError as e:
        problems.append(f"{e} (ignored)")
        return None
    return getattr(settings, key) or None


class ConfigFiles:
    """The configuration file closest to each document, re-read when it changes on disk."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[float, Settings]] = {}

    def base(self, path: str) -> tuple[Settings, str | None]:
        """(settings from the closest config file, error message or None)."""
        if not os.path.isabs(path):
            return Settings(), None
        try:
            cfg = find_config(os.path.dirname(path))
        except OSError:
            return Settings(), None
        if cfg is None:
            return Settings(), None
        try:
            mtime = os.stat(cfg).st_mtime
            hit = self._cache.get(cfg)
            if hit is not None and hit[0] == mtime:
                return hit[1], None
            settings = load_config(cfg)
        except (ConfigError, OSError) as e:
            return Settings(), f"configuration not used: {e}"
        self._cache[cfg] = (mtime, settings)
        return settings, None

    def settings_for(self, path: str, client: ClientSettings) -> tuple[Settings, str | None]:
        base, error = self.base(path)
        return base.with_overrides(**client.overrides()), error
