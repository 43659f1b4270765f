"""What is computed on first read lives in one cache: equality, copies and JSON of an
Exploration compute nothing, and the cache computes each value once."""

from __future__ import annotations

import copy
import dataclasses
import json
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

import compiler
from compiler.model import Derived, Later, Node
from compiler.store.compact import Unpacker
from compiler.store.serialize import _build, _Reading

ROOT = Path(__file__).resolve().parent.parent
RECORDINGS = ROOT / "notebooks" / "recordings"
# a 3.0 file with Triton variants and their lowered stages (captured on a GPU)
GPU_RECORDING = ROOT / "tests" / "data" / "recordings" / "cuda_mlp_block_timed.json"


def _cache(exp: compiler.Exploration) -> Derived:
    caches = {
        id(g.derived.cache): g.derived.cache
        for c in exp.compiles
        for g in [*c.graphs.values(), *(g for oc in c.output_code for g in oc.graphs.values())]
        if g.derived is not None
    }
    assert len(caches) == 1, "one cache per Exploration"
    return next(iter(caches.values()))


def _loaded() -> list[compiler.Exploration]:
    return [
        compiler.load_trace(ROOT / "tests/data/traces/graph_break_eager", strict=True),
        compiler.Exploration.from_json((RECORDINGS / "transformer_block.json").read_text()),
        compiler.Exploration.from_json(GPU_RECORDING.read_text()),
    ]


def _read_all(exp: compiler.Exploration) -> list[object]:
    """Every value computed on first read, read once."""
    out: list[object] = []
    for c in exp.compiles:
        graphs = [*c.graphs.values(), *(g for oc in c.output_code for g in oc.graphs.values())]
        out += [g.nodes for g in graphs] + [g.parse_error for g in graphs]
        out += [g.file_comments for g in graphs]
        out += [ch.config for a in c.autotuning for ch in a.choices]
        if c.guards is not None:
            out.append(c.guards.guards)
        if c.bytecode is not None:
            out += [c.bytecode.decompiled, c.bytecode.decompile_error]
        for k in c.kernels():
            out.append(k.user_lines)
            out += [s.source_lines for v in k.variants for s in v.stages]
    return out


@pytest.mark.parametrize("which", [0, 1, 2], ids=["trace", "cpu_recording", "gpu_recording"])
def test_equality_copies_and_json_of_an_unread_exploration_compute_nothing(which):
    exp = _loaded()[which]
    cache = _cache(exp)
    waiting = cache.pending()
    assert waiting["graph"] and not cache.counts
    assert exp == dataclasses.replace(exp) == copy.copy(exp)
    repr(exp)
    text = exp.to_json()
    exp.to_json(compact=False)
    again = compiler.Exploration.from_json(text)
    assert again == exp
    assert not cache.counts and cache.pending() == waiting
    assert not _cache(again).counts


def test_the_gpu_recording_has_every_kind_of_value_waiting():
    waiting = _cache(_loaded()[2]).pending()
    assert {"graph", "guards", "user_lines", "lowered_lines"} <= set(waiting)


def test_a_live_captures_json_decompiles_its_frames_and_computes_nothing_else():
    def f(x):
        return torch.sin(x) + x.cos()

    exp = compiler.explore(f, torch.randn(4), backend="aot_eager")
    cache = _cache(exp)
    assert exp == copy.copy(exp) and not cache.counts
    text = exp.to_json()
    # the code object is gone with this process: the file keeps the decompiled source
    assert cache.counts == Counter({"decompile": len(exp.compiles)})
    assert compiler.Exploration.from_json(text).compiles[0].bytecode.decompiled


def test_the_cache_computes_each_value_once_and_copies_share_it():
    for exp in _loaded():
        cache = _cache(exp)
        waiting = sum(cache.pending().values())
        first = _read_all(exp)
        assert not cache.pending()
        done = Counter(cache.counts)
        # a graph's link reads other graphs, once: nothing is computed twice
        assert sum(done.values()) == waiting
        copied = copy.copy(dataclasses.replace(exp, notes=("copied",)))
        second = _read_all(copied)
        assert cache.counts == done
        assert all(a is b for a, b in zip(first, second, strict=True))


@pytest.mark.parametrize("name", ["transformer_block.json", "conv_net.json"])
def test_a_3_x_recording_reads_back_the_nodes_it_stored(name):
    """Schema 4.0 leaves nodes out of the file: a 3.x file's nodes, module stacks from a
    live capture included, are computed again, equal to what the file stored."""
    doc = json.loads((RECORDINGS / name).read_text())
    assert doc["schema_version"][0] == 3
    reading = _Reading(unknown=[], strings=Unpacker(doc["strings"]))
    exp = compiler.Exploration.from_json(json.dumps(doc))
    compiles = reading.strings.items(doc["exploration"]["compiles"])
    checked = 0
    for c, stored in zip(exp.compiles, compiles, strict=True):
        for stage, g in stored.get("graphs", {}).items():
            nodes = _build(tuple[Node, ...], g.get("nodes", []), stage, reading)
            assert c.graphs[stage].nodes == nodes, stage
            checked += bool(nodes)
    assert checked
    assert any(n.module_stack for c in exp.compiles for g in c.graphs.values() for n in g.nodes)


def test_many_threads_reading_one_value_run_its_recipe_once():
    cache = Derived()
    runs: list[int] = []

    def slow() -> int:
        runs.append(1)
        time.sleep(0.2)  # every reader arrives while the recipe runs
        return len(runs)

    later = cache.later("graph", slow)
    with ThreadPoolExecutor(16) as pool:
        got = list(pool.map(lambda _: later.get(), range(16)))
    assert got == [1] * 16 and runs == [1] and cache.counts == Counter({"graph": 1})


def test_nested_recipes_across_threads_compute_each_value_once():
    """A graph's links read another graph: recipes that read values of their own cache,
    asked for from many threads in every order, neither deadlock nor run twice."""
    cache = Derived()
    runs: Counter[str] = Counter()

    def recipe(name: str, *needs: str) -> Callable[[], str]:
        def run() -> str:
            runs[name] += 1
            time.sleep(0.05)
            return name + "".join(laters[n].get() for n in needs)

        return run

    laters: dict[str, Later] = {}
    laters["a"] = cache.later("graph", recipe("a"))
    laters["b"] = cache.later("graph", recipe("b", "a"))
    laters["c"] = cache.later("graph", recipe("c", "b", "a"))
    order = ["c", "b", "a", "c", "a", "b"] * 4
    with ThreadPoolExecutor(len(order)) as pool:
        got = list(pool.map(lambda n: laters[n].get(), order))
    assert got == [{"a": "a", "b": "ba", "c": "cbaa"}[n] for n in order]
    assert runs == Counter({"a": 1, "b": 1, "c": 1}) and cache.counts["graph"] == 3
    assert not cache.pending()


def test_a_recipe_that_raises_runs_again_next_time_in_every_thread():
    cache = Derived()
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        time.sleep(0.05)
        if len(calls) < 3:
            raise ValueError("not yet")
        return "done"

    later = cache.later("guards", flaky)
    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(lambda _: _outcome(later), range(8)))
    # the two failures reach the threads that ran them; every other thread waits, then
    # reads the value of the third run, the only one kept
    assert outcomes.count("not yet") == 2 and outcomes.count("done") == 6
    assert len(calls) == 3 and cache.counts == Counter({"guards": 1})
    assert later.get() == "done" and len(calls) == 3


def _outcome(later: Later) -> str:
    try:
        return str(later.get())
    except ValueError as e:
        return str(e)


def test_a_recipe_that_reads_its_own_value_is_a_recursion_error():
    cache = Derived()
    laters: list[Later] = []
    laters.append(cache.later("graph", lambda: cache.later("graph", laters[0].get).get()))
    with pytest.raises(RecursionError):
        laters[0].get()
    assert cache.pending()["graph"] == 2  # both kept: a later read tries again


def test_findings_and_divergence_are_values_of_the_explorations_own_cache():
    exp = compiler.load_trace(ROOT / "tests/data/traces/graph_break_eager", strict=True)
    assert not exp.derived.counts
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda _: exp.findings(), range(4)))
    assert all(f is found[0] for f in found) and exp.derived.counts["findings"] == 1
    assert compiler.divergence(exp) is compiler.divergence(exp)
    assert compiler.memory(exp) is compiler.memory(exp)
    # the advisor reads the memory too: each judged once
    assert exp.derived.counts == Counter({"findings": 1, "divergence": 1, "memory": 1})
    # neither equality, JSON nor a copy made with replace carries them
    replaced = dataclasses.replace(exp)
    assert replaced == exp and not replaced.derived.counts
    assert "findings" not in exp.to_json() and replaced.findings() == found[0]
    assert replaced.findings() is not found[0]


def test_a_deep_copy_of_an_exploration_reads_the_same_cache():
    """``copy.deepcopy`` of a loaded Exploration works (the cache holds a lock, which
    cannot be copied) and the copy's graphs read the values the original computed."""
    import copy
    from pathlib import Path

    import compiler

    exp = compiler.load_trace(Path(__file__).parent / "data" / "traces" / "graph_break_eager")
    twin = copy.deepcopy(exp)
    assert twin == exp
    graph = next(g for c in exp.compiles for g in c.graphs.values())
    twin_graph = next(g for c in twin.compiles for g in c.graphs.values())
    assert twin_graph.nodes == graph.nodes
    assert twin.findings() == exp.findings()
