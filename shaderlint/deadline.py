"""The per-file time budget: a watchdog that stops analysis running past its deadline.

``with Deadline(seconds) as d:`` runs its block normally; once ``seconds`` have
passed, :class:`TimeBudgetExceeded` is raised *inside* the block, wherever the
thread happens to be (a model build on a huge file, a slow rule, a rule stuck
in a loop). The engine catches it and reports SL001 "time budget exceeded"
instead of spending minutes on one file.

How: one daemon watchdog thread per process holds the active deadlines and,
when one passes, schedules the exception in the owning thread with CPython's
``PyThreadState_SetAsyncExc``; the interpreter raises it at the next bytecode
boundary. This works in any thread (the language server lints off the main
thread, where ``SIGALRM`` is not available) and needs no cooperation from the
rules. ``TimeBudgetExceeded`` derives from ``BaseException`` so that the
``except Exception`` clauses of rules and helpers cannot swallow it.

Long calls into C are not interrupted (the exception waits for the call to
return): code that can spend long in one C call checks :meth:`Deadline.expired`
itself, as the front ends do through the tree-sitter parser's progress callback
(:func:`progress_callback`), which cancels the parse.

Other interpreters (no ``ctypes.pythonapi``) fall back to cooperative checks
only: the engine's checks between rules and the parser callback.

**The budget is CPU time of the thread doing the work** (where the platform
gives a thread's CPU clock to other threads: Linux and most Unixes; elsewhere,
macOS and Windows, it is wall-clock time). A file's result must not depend on
how busy the machine is: with wall-clock time, a file that needs 1.3 s got an
"analysis stopped" SL001 on a loaded CI machine and none on an idle one, which
also made baselines flaky. :func:`clock` gives the matching clock to code that
keeps its own account of a budget (the engine, between rules).
"""

from __future__ import annotations

import ctypes
import itertools
import os
import threading
import time

__all__ = ["Deadline", "TimeBudgetExceeded", "clock", "progress_callback"]


class TimeBudgetExceeded(BaseException):
    """Raised inside a :class:`Deadline` block whose time is up."""


try:
    _set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    _set_async_exc.argtypes = (ctypes.c_ulong, ctypes.py_object)
    _set_async_exc.restype = ctypes.c_int
except (AttributeError, OSError):  # pragma: no cover - not CPython
    _set_async_exc = None

_active: dict[int, "Deadline"] = {}  # token -> deadline; plain dict operations are atomic under the GIL
_tokens = itertools.count()
_watcher_pid: int | None = None  # the process whose watchdog thread is running (fork leaves none)
_POLL = 0.05  # the watchdog wakes at least this often (deadline precision)
_wake = threading.Event()  # set by Deadline.expire_now: the watchdog looks again at once

def _cpu_clock(thread_id: int):
    """A function reading the CPU time of thread ``thread_id`` (from any thread), or None."""
    getid = getattr(time, "pthread_getcpuclockid", None)
    if getid is None:
        return None
    try:
        clk = getid(thread_id)
        time.clock_gettime(clk)
    except (OSError, OverflowError, ValueError, TypeError):
        return None
    return lambda: time.clock_gettime(clk)


def clock():
    """The clock budgets of the calling thread are counted in: its CPU time where it can be read
    by the watchdog, else wall-clock (monotonic) time."""
    return _cpu_clock(threading.get_ident()) or time.monotonic


# No lock is ever held by a thread that may receive the exception: an asynchronous exception raised
# just after ``lock.acquire()`` returned would leave the lock held for good. The two threads agree
# through flags instead (see ``Deadline.__exit__``).


def _after_fork_in_child() -> None:
    global _active, _watcher_pid
    _active = {}  # the parent's watchdog thread does not exist in the child
    _watcher_pid = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _watch() -> None:
    while True:
        wall = time.monotonic()
        nxt = wall + _POLL
        for d in list(_active.values()):
            try:
                now = d.clock()
            except OSError:  # the thread has ended (its block is over): nothing to stop
                _active.pop(d.token, None)
                continue
            if d.when <= now:
                d.firing = True
                if not d.done:
                    d.fired = d.sent = True
                    _set_async_exc(d.thread_id, TimeBudgetExceeded)
                d.firing = False
                _active.pop(d.token, None)
            else:  # a thread's CPU time advances no faster than wall-clock time: wake by then
                nxt = min(nxt, wall + (d.when - now))
        _wake.wait(max(0.0005, nxt - time.monotonic()))
        _wake.clear()


def _ensure_watcher() -> None:
    global _watcher_pid
    if _watcher_pid != os.getpid():
        _watcher_pid = os.getpid()
        threading.Thread(target=_watch, name="shaderlint-deadline", daemon=True).start()


class Deadline:
    """A time budget for the enclosed block (``seconds`` <= 0 or ``None``: no budget)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.clock = time.monotonic  # set to the owning thread's clock on entry
        self.start = time.monotonic()
        self.when = self.start + seconds if seconds and seconds > 0 else float("inf")
        self.thread_id = threading.get_ident()
        self.token = next(_tokens)
        self.done = False  # the block has finished: the watchdog must not fire any more
        self.firing = False  # the watchdog is deciding whether to fire
        self.fired = False  # the exception was scheduled (or raised by check())
        self.sent = False  # the watchdog scheduled the exception

    def expired(self) -> bool:
        return self.clock() >= self.when

    def expire_now(self) -> None:
        """End the budget now (from any thread): the block is interrupted as if its time were up.
        The language server uses it to stop a background lint when the user types again."""
        if self.when != float("inf"):
            self.when = float("-inf")
            _wake.set()

    def remaining(self) -> float:
        return max(0.0, self.when - self.clock())

    def check(self) -> None:
        """Raise :class:`TimeBudgetExceeded` if the budget is spent (a cooperative check)."""
        if self.expired():
            self.fired = True
            raise TimeBudgetExceeded

    def __enter__(self) -> "Deadline":
        self.thread_id = threading.get_ident()
        self.clock = clock() if self.seconds and self.seconds > 0 else time.monotonic
        self.start = self.clock()
        if self.seconds and self.seconds > 0:
            self.when = self.start + self.seconds
        self.done = self.firing = self.fired = self.sent = False
        if self.when != float("inf") and _set_async_exc is not None:
            _ensure_watcher()
            _active[self.token] = self
        return self

    def __exit__(self, *exc) -> bool:
        self.done = True
        if self.when != float("inf") and _set_async_exc is not None:
            _active.pop(self.token, None)
            # The watchdog sets ``firing`` before it reads ``done`` and clears it after scheduling:
            # once ``firing`` is clear, it either saw ``done`` (and will not fire) or has fired.
            while self.firing:
                time.sleep(0)
            if self.sent and (exc[0] is None or issubclass(exc[0], TimeBudgetExceeded)):
                # Fired just as the block finished, or just after the block ended by a TimeBudgetExceeded
                # of its own (check(), a cancelled parse): drop the exception scheduled but not yet
                # raised, so that it cannot surface in the caller (a no-op when it was raised).
                _set_async_exc(self.thread_id, ctypes.py_object())
        return False


def progress_callback(deadline: Deadline | None):
    """A tree-sitter ``progress_callback`` that cancels parsing once ``deadline`` has passed
    (``None`` when there is no deadline)."""
    if deadline is None or deadline.when == float("inf"):
        return None
    def cb(_offset: int, _has_error: bool) -> bool:
        return deadline.expired()  # (reads ``when`` each time: expire_now may have moved it)

    return cb
