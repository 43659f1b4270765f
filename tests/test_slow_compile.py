"""Issue 35, point 1: advice for a slow compile (regional compilation, warm caches,
dynamic shapes), on real programs.

``cpu_gpt2_compile_{cold,warm}.json.gz`` (tests/data/recordings) are a 2-layer GPT-2
(transformers config, width 128) explored on the CPU with caches on in two fresh
processes sharing one cache folder: ``scripts/record_compile_gpu.py OUT --cpu``.
Expectations come from torch's records in them: the Dynamo graph's ``nn_module_stack``,
the guard tree's module types, its chromium spans and cache artifacts.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
import torch

import compiler
from compiler.advise import compile_time
from compiler.costs.caches import cache_records
from compiler.model.stages import DYNAMO_GRAPH

RECORDINGS = Path(__file__).parent / "data" / "recordings"


def _load(name: str) -> compiler.Exploration:
    text = gzip.decompress((RECORDINGS / name).read_bytes()).decode()
    return compiler.Exploration.from_json(text)


@pytest.fixture(scope="module")
def cold() -> compiler.Exploration:
    return _load("cpu_gpt2_compile_cold.json.gz")


@pytest.fixture(scope="module")
def warm() -> compiler.Exploration:
    return _load("cpu_gpt2_compile_warm.json.gz")


def _found(exp: compiler.Exploration, kind: str) -> list[compiler.Finding]:
    # the compile-time family alone (the whole advisor reads every stage of the model)
    return [r.finding for r in compile_time.findings(exp) if r.finding.kind == kind]


def test_regional_advice_names_the_repeated_block_and_the_call(cold):
    cls = "GPT2Block"  # transformers' class of a GPT-2 layer
    # torch's guard tree types the first layer so; its module stacks hold 2 layers
    (c,) = cold.compiles
    layer = "L['self']._modules['transformer']._modules['h']._modules['0']"
    assert f"source={layer}, type=<class 'transformers.models.gpt2.modeling_gpt2.{cls}'>" in (
        c.guards.tree
    )
    layers = {p for n in c.graphs[DYNAMO_GRAPH].nodes for p in n.module_stack
              if re.fullmatch(r"transformer\.h\.\d+", p)}  # fmt: skip
    assert len(layers) == 2
    # 2 layers: compiling the block once saves at most half its time, under a third of
    # the compile at the measured efficiency: not advised
    assert not _found(cold, "compile_time.regional")
    slow = replace(c, metrics=replace(c.metrics, entire_frame_seconds=600.0))
    assert not _found(replace(cold, compiles=(slow,)), "compile_time.regional")


class _Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(16)
        self.up = torch.nn.Linear(16, 32)
        self.down = torch.nn.Linear(32, 16)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x)))) * 0.5


class _Stack(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList(_Block() for _ in range(8))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def test_regional_advice_on_a_deep_stack_in_a_slow_compile_names_the_class():
    exp = compiler.explore(_Stack(), torch.randn(2, 16), backend="eager")
    (c,) = exp.compiles
    # Dynamo's module stacks hold the 8 blocks; its guard tree types them
    blocks = {p for n in c.graphs[DYNAMO_GRAPH].nodes for p in n.module_stack
              if re.fullmatch(r"blocks\.\d+", p)}  # fmt: skip
    assert len(blocks) == 8 and "_Block'>" in c.guards.tree
    # a compile of a second is left alone
    quick = replace(c, metrics=replace(c.metrics, entire_frame_seconds=1.0))
    assert not _found(replace(exp, compiles=(quick,)), "compile_time.regional")
    # the same graph in a 30 s compile (as under Inductor on a real model): advised
    slow = replace(c, metrics=replace(c.metrics, entire_frame_seconds=30.0))
    (f,) = _found(replace(exp, compiles=(slow,)), "compile_time.regional")
    assert "8 copies of `_Block`" in f.title and "[i]" not in f.title
    assert f.cause == "compile_time.regional|_Block"
    assert "torch.compiler.nested_compile_region(_Block.forward)" in f.suggestion
    assert "for block in model.blocks:" in f.suggestion
    assert "1.68x" in f.suggestion and "(estimated)" in f.impact


def test_cold_build_advice_follows_torchs_spans_and_caches(cold, warm):
    (c,) = cold.compiles
    built = sum(p.seconds for p in c.metrics.phases
                if p.name in ("compile_file", "async_compile.wait"))  # fmt: skip
    # torch's own figures: most of the cold compile built kernels, and its caches missed
    assert built > 0.5 * c.metrics.entire_frame_seconds
    assert {r.state for r in cache_records(c)} == {"miss"}
    (f,) = _found(cold, "compile_time.cold_build")
    assert "torch.compiler.save_cache_artifacts()" in f.suggestion
    assert "load_cache_artifacts(artifact_bytes)" in f.suggestion
    # the phase note about the same build is left to this one
    assert not [x for x in _found(cold, "compile_time.phase") if "kernel compilation" in x.title]
    # warm: torch's caches hit, so no cold-build advice
    assert {r.state for r in cache_records(warm.compiles[0])} == {"hit"}
    assert not _found(warm, "compile_time.cold_build")


def test_cache_diff_of_the_two_processes_follows_torchs_records(cold, warm):
    diff = compiler.cache_diff(cold, warm)
    (row,) = diff.compiles
    assert row.states("a") == {"fx_graph": "miss", "aotautograd": "miss"}
    assert row.states("b") == {"fx_graph": "hit", "aotautograd": "hit"}
    # torch's FX key is the same in both: so is every C++ kernel's source
    fx = [json.loads(c.compiles[0].artifacts[f"fx_graph_cache_{s}"])["key"]
          for c, s in ((cold, "miss"), (warm, "hit"))]  # fmt: skip
    assert fx[0] == fx[1]
    cpp = [k for k in warm.compiles[0].kernels() if k.language == "cpp"]
    assert len(row.kernels) == len(cpp) and {k.state for k in row.kernels} == {"same key"}
    text = str(diff)
    assert f"C++ kernel cache: {len(cpp)} kernels: {len(cpp)} same key" in text
    assert f"fxgraph_cache_hit {warm.counters['inductor.fxgraph_cache_hit']}" in text


def test_recompiles_that_take_a_third_of_compile_time_ask_for_dynamic():
    # torch's log of one frame compiled for four shapes (tests/data/traces/recompiles)
    exp = compiler.load_trace(Path(__file__).parent / "data" / "traces" / "recompiles")
    recompiles = [c for c in exp.compiles if c.is_recompile]
    assert len(recompiles) == 3
    spent = sum(c.metrics.entire_frame_seconds or 0 for c in recompiles)
    total = sum(c.metrics.entire_frame_seconds or 0 for c in exp.compiles)
    assert spent >= total / 3
    (f,) = _found(exp, "compile_time.recompiles")
    assert "dynamic=True" in f.suggestion and "mark_dynamic" in f.suggestion
    assert f.cause == "compile_time.recompiles|flat"
    assert f"{spent:.1f} s of {total:.1f} s" in f.title
    # torch's own reason for each recompile is the evidence
    assert {e.text.split(": ", 1)[1] for e in f.evidence} == {
        c.recompile_reasons[0].reason for c in recompiles
    }
