"""The cyclic garbage collector is paused while a file is analysed (``shaderlint.collector.collector_paused``)
and back on after it, whatever way the analysis ends; the garbage of many files does not pile up."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest

import shaderlint.collector as collector
from shaderlint.config import Settings
from shaderlint.engine import collector_paused, lint_source
from shaderlint.rules.sl201_variable_integer_division import VariableIntegerDivision
from shaderlint.runner import lint_files
from tests.robustness.conftest import GOOD

SL201 = dict(extend_select=("SL201",))  # (opt-in) the rule the tests replace


@pytest.fixture(autouse=True)
def _collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    collector._PAUSES.clear()
    collector._PAUSED_BY_US = False
    (gc.enable if was else gc.disable)()


def _recording_check(seen: list, raise_exc: BaseException | None = None):
    def check(self, model, ctx):
        seen.append(gc.isenabled())
        if raise_exc is not None:
            raise raise_exc
        yield from ()
    return check


def test_off_while_a_file_is_analysed_and_on_after(monkeypatch):
    seen: list[bool] = []
    monkeypatch.setattr(VariableIntegerDivision, "check", _recording_check(seen))
    lint_source("k.cu", GOOD.encode(), Settings(**SL201))
    assert seen == [False]
    assert gc.isenabled()
    assert not collector._PAUSES


@pytest.mark.parametrize("exc", [RuntimeError("boom"), KeyboardInterrupt()])
def test_on_again_when_the_analysis_fails(monkeypatch, exc):
    seen: list[bool] = []
    monkeypatch.setattr(VariableIntegerDivision, "check", _recording_check(seen, exc))
    if isinstance(exc, Exception):  # a rule's failure is reported, not raised
        r = lint_source("k.cu", GOOD.encode(), Settings(**SL201))
        assert any("rule SL201 failed" in d.message for d in r.diagnostics)
    else:
        with pytest.raises(KeyboardInterrupt):
            lint_source("k.cu", GOOD.encode(), Settings(**SL201))
    assert seen == [False] and gc.isenabled()


def test_on_again_after_a_time_budget_stop(monkeypatch):
    def check(self, model, ctx):
        yield from ()
        while True:
            pass
    monkeypatch.setattr(VariableIntegerDivision, "check", check)
    r = lint_source("k.cu", GOOD.encode(), Settings(time_budget=0.2, **SL201))
    assert r.timed_out and gc.isenabled()


def test_a_collector_the_embedding_program_turned_off_stays_off():
    gc.disable()
    lint_source("k.cu", GOOD.encode(), Settings(**SL201))
    assert not gc.isenabled()


def test_nested_pauses_end_with_the_outermost():
    with collector_paused():
        lint_source("k.cu", GOOD.encode(), Settings(**SL201))
        assert not gc.isenabled()
    assert gc.isenabled()


def test_concurrent_analyses_share_one_pause(monkeypatch):
    """Two threads (the language server's): the first to finish leaves the collector off for the other."""
    inside, release = threading.Event(), threading.Event()
    seen: list[bool] = []

    def check(self, model, ctx):
        if threading.current_thread().name == "slow":
            inside.set()
            release.wait(10)
            seen.append(gc.isenabled())
        yield from ()

    monkeypatch.setattr(VariableIntegerDivision, "check", check)
    t = threading.Thread(target=lint_source, args=("k.cu", GOOD.encode(), Settings(**SL201)), name="slow")
    t.start()
    assert inside.wait(10)
    lint_source("k.cu", GOOD.encode(), Settings(**SL201))  # starts and ends while the slow one runs
    assert not gc.isenabled()
    release.set()
    t.join(10)
    assert seen == [False] and gc.isenabled()


def test_an_exit_cut_short_is_healed_by_the_next_analysis():
    """An asynchronous TimeBudgetExceeded (a caller's Deadline) may land between the end of the pause's
    bookkeeping and the collector's restart: the next analysis turns it back on."""
    gc.disable()
    collector._PAUSED_BY_US = True  # the state such an interrupted exit leaves
    lint_source("k.cu", GOOD.encode(), Settings(**SL201))
    assert gc.isenabled()


def test_the_garbage_of_many_files_does_not_pile_up(tmp_path):
    paths = []
    for i in range(30):
        p = tmp_path / f"k{i}.cu"
        p.write_text(GOOD.replace("scale", f"scale{i}"))
        paths.append(str(p))
    lint_files(paths[:5], lambda _p: Settings(), jobs=1, use_cache=False)
    gc.collect()
    before = len(gc.get_objects()) + gc.get_freeze_count()  # (frozen objects are not in get_objects)
    results = lint_files(paths, lambda _p: Settings(), jobs=1, use_cache=False)
    grown = len(gc.get_objects()) + gc.get_freeze_count() - before
    kept = sum(len(r.diagnostics) + len(r.suppressions) for r in results)
    # what the results hold (sources, diagnostics); a file's model and tree are ~10,000 objects
    assert grown < 200 * len(paths) + 50 * kept, grown


def test_models_dropped_later_are_collected():
    """A language server keeps a document's result (its model) for a few lints, then drops it: those
    cycles outlive the collection after their own lint and must still be collected later (an explicit
    young collection after each lint left them in the older generations for good)."""
    data = (Path(__file__).parents[2] / "examples" / "softmax_fp16.cu").read_bytes()
    keep = []

    def lint_many(n):
        for _ in range(n):
            keep.append(lint_source("k.cu", data, Settings(**SL201)))
            if len(keep) > 3:
                keep.pop(0)

    lint_many(20)
    before = len(gc.get_objects())
    lint_many(200)
    grown = len(gc.get_objects()) - before
    assert grown < 20_000, grown  # 200 models of this file that piled up: about 190,000 objects
