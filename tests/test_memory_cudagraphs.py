"""Issue 35, memory and CUDA graphs: ``compiler.memory`` against torch's own backward
graph, and the GPU recordings of ``scripts/record_pain_gpu.py`` replayed on a CPU."""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path
from typing import Any

import torch
from torch._inductor.custom_graph_pass import CustomGraphPass

import compiler
from compiler.gpu.memory_peak import PeakMemory, as_counters


class SavedInputs(CustomGraphPass):
    """Inductor post-grad pass: per backward graph, the bytes of its placeholders that are
    not tangents, from torch's fake tensors (what the backward receives as saved)."""

    def __init__(self) -> None:
        self.totals: list[int] = []
        self.names: list[set[str]] = []

    def __call__(self, graph: torch.fx.Graph) -> None:
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        if not any(n.name.startswith("tangents") for n in placeholders):
            return
        saved = [
            n
            for n in placeholders
            if not n.name.startswith("tangents") and isinstance(n.meta.get("val"), torch.Tensor)
        ]
        self.totals.append(sum(n.meta["val"].numel() * n.meta["val"].element_size() for n in saved))
        self.names.append({n.name for n in saved})

    def uuid(self) -> Any:
        return None


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln = torch.nn.LayerNorm(32)
        self.a = torch.nn.Linear(32, 64)
        self.b = torch.nn.Linear(64, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.b(torch.nn.functional.gelu(self.a(self.ln(x)))).softmax(-1)


def test_saved_for_backward_matches_torchs_backward_placeholders():
    rec = SavedInputs()
    model = Block()
    compiled = torch.compile(model, options={"post_grad_custom_pre_pass": rec})

    def step(x: torch.Tensor) -> None:
        compiled(x).pow(2).mean().backward()

    exp = compiler.explore(step, torch.randn(4, 8, 32))
    mem = compiler.memory(exp)
    assert len(rec.totals) == 1 and len(mem.compiles) == 1
    (cm,) = mem.compiles
    assert cm.total_bytes == rec.totals[0] > 0
    assert {s.node for s in cm.saved if s.kind != "symint"} == rec.names[0]
    # activations carry the user's line; parameters are told apart from the input
    acts = [s for s in cm.saved if s.kind == "activation"]
    assert acts and all(s.source is not None for s in acts)
    assert any(s.kind == "parameter" and s.module == "a" for s in cm.saved)
    assert any(s.kind == "input" for s in cm.saved)
    assert "| 0/0 |" in mem.table()


def test_measured_peaks_survive_json_and_raise_above_eager():
    exp = compiler.Exploration(source="live")
    mib = 2**20
    peaks = [PeakMemory("eager", 100 * mib, 300 * mib, 0), PeakMemory("compiled", 90 * mib,
                                                                       400 * mib, 0)]
    exp = compiler.Exploration(source="live", counters=as_counters(peaks))
    back = compiler.Exploration.from_json(exp.to_json())
    assert compiler.memory(back).peaks == tuple(sorted(peaks, key=lambda p: p.label))
    found = [f for f in back.findings() if f.kind == "memory.above_eager"]
    assert [f.cause for f in found] == ["memory|above_eager|backward"]
    assert "activation_memory_budget" in found[0].suggestion


def test_activation_memory_budget_is_torchs_config():
    # the advice names torch's own knobs: they must exist in this torch
    import torch._functorch.config as fconfig
    import torch._inductor.config as iconfig

    assert 0 < fconfig.activation_memory_budget <= 1
    assert iconfig.triton.cudagraph_skip_dynamic_graphs is False
    assert callable(torch.compiler.cudagraph_mark_step_begin)




def test_skip_reason_in_torchs_words_links_the_users_line_and_node():
    # the reason as torch formats it (cudagraph_utils), with a stack Dynamo recorded
    from torch._inductor.cudagraph_utils import format_default_skip_message

    def mutated(x: torch.Tensor, buf: torch.Tensor) -> torch.Tensor:
        buf.add_(1)
        return (x * buf).sin()

    exp = compiler.explore(mutated, torch.randn(8), torch.zeros(8), backend="eager")
    (c,) = exp.compiles
    node = next(n for n in c.graphs["dynamo_output_graph"].nodes if "add_" in n.target)
    assert node.source is not None
    where = f'File "{node.source.filename}", line {node.source.line}, in mutated'
    stack = f"  {where}\n    buf.add_(1)\n"
    reason = format_default_skip_message(f"mutated inputs (1 instances). Found from : \n {stack}")
    metrics = dataclasses.replace(c.metrics, cudagraph_skip_reason=reason)
    exp = dataclasses.replace(exp, compiles=(dataclasses.replace(c, metrics=metrics),))
    (site,) = compiler.cudagraphs(exp).sites
    assert site.status == "skipped" and site.skip is not None and site.skip.cause == "mutated"
    assert site.nodes == (node.name,)
    found = [f for f in exp.findings() if f.kind == "cudagraph.skipped"]
    assert len(found) == 1 and "buf.add_(1)" in found[0].title
    assert found[0].evidence[0].node == node.name


# -- GPU recordings (scripts/record_pain_gpu.py on an H100, torch 2.11), replayed on a CPU --

RECORDINGS = Path(__file__).parent / "data" / "recordings"


def _recording(name: str) -> compiler.Exploration:
    text = gzip.decompress((RECORDINGS / name).read_bytes()).decode()
    return compiler.Exploration.from_json(text)


def test_gpt2_step_memory_table_eager_against_compiled():
    exp = _recording("pain_gpt2_step.json.gz")
    mem = compiler.memory(exp)
    eager, compiled = mem.peak("eager"), mem.peak("compiled")
    assert eager is not None and compiled is not None
    assert eager.backward_bytes and compiled.backward_bytes
    assert sum(c.total_bytes for c in mem.compiles) > 0
    table = mem.table()
    assert "| eager |" in table and "| compiled |" in table
