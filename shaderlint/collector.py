"""The cyclic garbage collector's pause over a file's analysis (:func:`collector_paused`), apart from
:mod:`shaderlint.engine` (which re-exports it): the runner also pauses it over a run's cache look-ups,
which need not import the analysis."""

from __future__ import annotations

import gc

#: Tokens of the analyses running with the cyclic garbage collector paused (:func:`collector_paused`);
#: several threads of the language server may lint at once.
_PAUSES: set[int] = set()
_PAUSED_BY_US = False


def collector_paused():
    """A context manager: the cyclic garbage collector is off inside, and back on when the last analysis
    inside one ends (the next allocation then runs the collection the analysis's allocations called for).
    A file's analysis allocates hundreds of thousands of objects that live until it ends (tree
    wrappers, the model, the estimator's walk), so the collections
    the allocations would trigger in between find nearly nothing to free and, once the older generations
    fill, traverse everything the process holds. Nested and concurrent uses share one pause. A collector
    the embedding program turned off stays off. (``gc.freeze()`` per file instead kept every file's
    cyclic garbage for good: 608 MB over the real-code corpus.)"""
    return _CollectorPause()


class _CollectorPause:
    __slots__ = ("token",)

    def __enter__(self) -> None:
        global _PAUSED_BY_US
        self.token = None
        if not gc.isenabled() and not _PAUSED_BY_US:
            return  # turned off by the embedding program: its choice
        self.token = id(self)
        _PAUSES.add(self.token)
        _PAUSED_BY_US = True
        gc.disable()

    def __exit__(self, *exc) -> bool:
        global _PAUSED_BY_US
        if self.token is None:
            return False
        # Robust against an asynchronous TimeBudgetExceeded (a caller's Deadline) landing in here: the
        # collector is turned back on before the bookkeeping can be interrupted, and a pause whose
        # exit was cut short is ended by the next analysis's exit (``_PAUSED_BY_US`` stays set).
        _PAUSES.discard(self.token)
        if not _PAUSES:
            gc.enable()
            _PAUSED_BY_US = False
            # The collection the analysis's allocations call for runs at the next allocation, in the
            # generation CPython's thresholds choose (gc.get_threshold: the young one, every tenth time
            # the middle one, now and then a full one). An explicit young collection each time instead
            # never let an automatic one run: the cycles of models dropped a few lints later (a language
            # server's) piled up in the older generations, 300 lints of a small file: 48 -> 133 MB.
        return False
