"""Host facts in the language server: one host index per project root, built in the background.

The command line reads the host code that launches a kernel (:mod:`shaderlint.host.index`) and
gives the kernel's findings the facts it finds there (the threadgroup size of a ``<<<>>>`` launch
in a ``.cpp`` file, a Metal dispatch mode, Vulkan specialization constants). The editor lints one
buffer at a time; to give it the same facts, the server keeps a :class:`HostIndex` per *root*:

* the directory of the document's configuration file when it has one (the directory pre-commit and
  ``shaderlint FILE`` read host code under, :func:`shaderlint.host.index.host_roots`),
* else the workspace folder the document is in (what ``shaderlint .`` run there reads);
* a document in neither, or with ``host-code = false``, gets no host facts.

An index is built with every kernel file under its root (what a run over the root lints), in a
worker thread, so a lint never waits for it: until it is there the document is linted without
host facts, and when it arrives (or changes) the open documents whose facts changed are linted
again. It is rebuilt when a file under the root that can change a link is saved or changes on
disk (``didSave``; ``workspace/didChangeWatchedFiles`` where the client sends it): a host file, a
kernel file (its kernel names decide which launches link), a configuration file. A rebuild scans
again only the files whose content changed: :func:`shaderlint.host.index.scan_file` keeps scans by
content in memory, and in the lint cache's directory when the root has a configuration file.

Host files are read from disk (as the command line reads them): an unsaved edit of a host file
counts once it is saved.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from shaderlint.config import CONFIG_NAMES, Settings
from shaderlint.host.index import _norm, within

log = logging.getLogger(__name__)


def _under(path: str, root: str) -> bool:
    return within(path, [root])


@dataclass
class _Root:
    index: object = None  # shaderlint.host.index.HostIndex once built
    building: Future | None = None
    stale: bool = False  # a file changed while it was being built: build again after
    builds: int = 0


@dataclass
class HostIndexes:
    """The server's host indexes, one per root (see the module).

    ``settings_for(path)``: a file's settings as the server lints it; ``on_ready(root)``: called on
    the event loop's thread when the index of ``root`` is (re)built; ``workspace_folders()``: the
    client's workspace folders (paths)."""

    settings_for: Callable[[str], Settings]
    on_ready: Callable[[str, object, object], None]
    workspace_folders: Callable[[], list[str]] = lambda: []
    roots: dict[str, _Root] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # ---- which root ------------------------------------------------------------------------------
    def root_for(self, path: str, settings: Settings) -> str | None:
        if not os.path.isabs(path) or not settings.host_code:
            return None
        if settings.config_path:
            return _norm(settings.base_dir())
        best = None
        for folder in self.workspace_folders():
            if _under(path, folder) and (best is None or len(_norm(folder)) > len(best)):
                best = _norm(folder)
        return best

    # ---- facts for a lint ------------------------------------------------------------------------
    def facts_for(self, path: str, settings: Settings):
        """The :class:`shaderlint.host.index.HostFacts` of ``path`` from the index of its root as it is
        now (None while none is built: a build is started, and the document linted again when it is
        there). Never waits."""
        root = self.root_for(path, settings)
        if root is None:
            return None
        entry = self.roots.get(root)
        if entry is None:
            entry = self.roots[root] = _Root()
            self._start(root, entry)
        if entry.index is None:
            return None
        try:
            return entry.index.facts_for(path)
        except Exception:
            return None

    # ---- refreshing ------------------------------------------------------------------------------
    def changed(self, path: str) -> list[str]:
        """A file changed on disk (saved, created, deleted): rebuild the indexes it can matter to.
        Returns their roots."""
        if not self._relevant(path):
            return []
        out = []
        for root, entry in list(self.roots.items()):
            if _under(path, root):
                out.append(root)
                if entry.building is not None:
                    entry.stale = True
                else:
                    self._start(root, entry)
        return out

    @staticmethod
    def _relevant(path: str) -> bool:
        from shaderlint.host import scanners_for
        from shaderlint.host.index import load_scanners
        from shaderlint.languages import language_for_path

        if os.path.basename(path) in CONFIG_NAMES:  # a change can change every link under it
            return True
        load_scanners()
        return bool(scanners_for(path)) or language_for_path(path) is not None

    def _start(self, root: str, entry: _Root) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no event loop (in-process use): no background builds; see build_now
        entry.stale = False
        fut: Future = Future()
        entry.building = fut

        def run(root=root, fut=fut) -> None:
            # A daemon thread (not an executor's): a build still running when the client exits the
            # server must not hold the process up. Builds of different roots take turns (the lock).
            try:
                with self._lock:
                    fut.set_result(self.build(root))
            except BaseException as exc:
                fut.set_exception(exc)

        def done(f: Future, root=root, entry=entry) -> None:
            loop.call_soon_threadsafe(self._installed, root, entry, f)

        fut.add_done_callback(done)
        threading.Thread(target=run, name="shaderlint-host", daemon=True).start()

    def _installed(self, root: str, entry: _Root, fut: Future) -> None:
        if self.roots.get(root) is not entry:
            return
        entry.building = None
        try:
            index = fut.result()
        except Exception as exc:  # never fail the server over host facts
            log.warning("the host index of %s could not be built: %s", root, exc)
            index = None
        old, entry.index = entry.index, index
        entry.builds += 1
        if entry.stale:
            self._start(root, entry)
        try:
            self.on_ready(root, old, index)
        except Exception:
            log.exception("relinting after the host index of %s", root)

    def build(self, root: str):
        """The host index of ``root`` (runs in the worker thread; also usable directly)."""
        from shaderlint.discovery import discover
        from shaderlint.host.index import HostIndex

        by_dir: dict[str, Settings] = {}

        def settings(p: str) -> Settings:
            d = os.path.dirname(p)
            st = by_dir.get(d)
            if st is None:
                st = by_dir[d] = self.settings_for(p)
            return st

        kernels = [p for p in discover([root], (), [], is_excluded=lambda p: settings(p).is_excluded(p),
                                       language_for=lambda p: settings(p).language_for(p))
                   if settings(p).language_for(p) is not None]
        cache_dir = None
        st = settings(os.path.join(root, "x"))
        if st.config_path and _norm(st.base_dir()) == _norm(root):
            from shaderlint.cache import cache_dir_for
            cache_dir = cache_dir_for(st)
        return HostIndex.build([root], kernels, settings, cache_dir=cache_dir)

