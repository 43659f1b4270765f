"""Quiet where nothing is wrong: a clean model, trained, gets nothing above info and no
regional-compilation advice (two copies of a layer are not worth restructuring code
for); a run timed on the CPU gets no GPU advice (GPU rules key on the device the run was
recorded on, so GPU recordings replayed here keep theirs).

Expectations come from torch: its record that the run compiled once, without a graph
break or a recompile, and the device the capture ran on.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import torch

import compiler
from compiler.advise.gpu import recorded_on_gpu

RECORDINGS = Path(__file__).parent / "data" / "recordings"


def _clean_record(exp: compiler.Exploration) -> None:
    # torch's record: no graph break, no recompile
    assert exp.compiles and not [gb for c in exp.compiles for gb in c.graph_breaks]
    assert not [c for c in exp.compiles if c.recompile_reasons]


def _train(model: torch.nn.Module, x: torch.Tensor) -> compiler.Exploration:
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    compiled = torch.compile(model)

    def train():
        for _ in range(3):
            compiled(x).pow(2).mean().backward()
            opt.step()
            opt.zero_grad()

    return compiler.explore(train, wrap=False)


def _quiet(exp: compiler.Exploration) -> None:
    findings = exp.findings()
    assert [f.title for f in findings if f.severity != "info"] == []
    assert [f.title for f in findings if f.kind == "compile_time.regional"] == []
    assert [f.title for f in findings if f.kind.startswith("gpu.")] == []


@pytest.mark.slow
def test_a_clean_three_layer_mlp_trained_gets_nothing_above_info():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32), torch.nn.ReLU(),
        torch.nn.Linear(32, 4),
    )  # fmt: skip
    exp = _train(model, torch.randn(8, 16))
    _clean_record(exp)
    _quiet(exp)


@pytest.mark.slow
def test_a_clean_two_layer_transformer_trained_gets_nothing_above_info():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    exp = _train(model, torch.randn(2, 8, 32))
    _clean_record(exp)
    _quiet(exp)


@pytest.mark.slow
def test_a_cpu_run_timed_with_measure_gets_no_gpu_advice():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256)
    )
    exp = compiler.explore(model, torch.randn(64, 256), measure=True)
    assert exp.environment.device.startswith("cpu") and not recorded_on_gpu(exp)
    assert [f.title for f in exp.findings() if f.kind.startswith("gpu.")] == []


def test_a_gpu_recording_replayed_on_the_cpu_keeps_its_gpu_findings():
    text = gzip.decompress((RECORDINGS / "pain_mutated_input.json.gz").read_bytes()).decode()
    exp = compiler.Exploration.from_json(text)
    assert "cuda" in exp.environment.device and recorded_on_gpu(exp)
    # torch's record: Inductor skipped CUDA graphs for the mutated input
    assert any(s.skip is not None for s in compiler.cudagraphs(exp).sites)
    assert any(f.kind.startswith("gpu.") for f in exp.findings())


def test_a_cpu_call_measured_slower_than_eager_is_a_cpu_finding_with_cpu_advice():
    # on torch 2.11's machine, a busy CPU measured this MLP compiled slower than eager: a
    # measured fact stays, but as the CPU's (no CUDA graphs, no kernel launches)
    import dataclasses

    exp = compiler.explore(lambda x: (x @ x.T).relu().sum(), torch.randn(16, 16))
    assert not recorded_on_gpu(exp)
    timing = compiler.CallTiming(runs=20, eager_ms=15.97, compiled_ms=27.97,
                                 eager_spread_ms=(15.5, 16.4), compiled_spread_ms=(27.1, 29.0),
                                 device_ms=0.0, cpu_ms=27.9)  # fmt: skip
    slow = dataclasses.replace(exp, call_timing=timing)
    (f,) = [f for f in slow.findings() if f.kind.endswith("slower_than_eager")]
    assert f.kind == "cpu.slower_than_eager" and f.severity == "problem", f.kind
    text = f.title + f.suggestion
    assert "on the CPU" in f.title and "cpp_wrapper" in f.suggestion, text
    assert not any(w in text for w in ("CUDA", "kernel launches", "reduce-overhead")), text
