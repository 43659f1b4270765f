"""compiler.explore_export: torch.export's program as stages of an Exploration."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import compiler
from compiler.capture.exported import TEXT_STAGES
from explorer.panes import build_index


class Scaled(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)
        self.register_buffer("scale", torch.full((3,), 2.0))

    def forward(self, x):
        y = self.lin(x).relu()
        return y * self.scale


class DataDependent(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x


def _line_of(text: str) -> int:
    import inspect

    lines, first = inspect.getsourcelines(Scaled.forward)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("strict", [False, True])
def test_the_exported_program_becomes_a_graph_stage_linked_to_the_source(strict):
    exp = compiler.explore_export(
        Scaled(), (torch.randn(2, 4),), dynamic_shapes={"x": {0: Dim("batch")}}, strict=strict
    )
    (c,) = exp.compiles
    graph = c.graphs["exported_program"]
    targets = [n.target for n in graph.nodes if n.op == "call_function"]
    assert "torch.ops.aten.relu.default" in targets and "torch.ops.aten.mul.Tensor" in targets
    relu = next(n for n in graph.nodes if n.target == "torch.ops.aten.relu.default")
    assert relu.source is not None and relu.source.line == _line_of(".relu()")
    assert relu.annotation.startswith("f32[s") and relu.annotation.endswith(", 3]"), (
        "the batch size is symbolic"
    )
    assert ("dynamo_output_graph" in c.graphs) is strict
    assert c.code_name == "Scaled.forward" or strict


def test_signature_ranges_and_call_graph_are_text_stages_and_artifacts():
    exp = compiler.explore_export(
        Scaled(), (torch.randn(2, 4),), dynamic_shapes={"x": {0: Dim("batch", min=2, max=64)}}
    )
    c = exp.compiles[0]
    signature, ranges, calls = (c.graphs[s].text for s in TEXT_STAGES)
    assert "PARAMETER target='lin.weight'" in signature and "BUFFER target='scale'" in signature
    assert "USER_INPUT" in signature
    assert "VR[2, 64]" in ranges
    assert calls.splitlines()[0].startswith("(root)(x)") and "lin" in calls.splitlines()
    assert {s: c.artifacts[s] for s in TEXT_STAGES} == {s: c.graphs[s].text for s in TEXT_STAGES}


def test_the_decomposed_stage_is_the_program_after_run_decompositions_when_asked():
    model, x = torch.nn.Linear(4, 3), torch.randn(2, 4)
    exp = compiler.explore_export(model, x)
    graphs = exp.compiles[0].graphs
    core = torch.export.export(model, (x,)).run_decompositions()
    assert graphs["exported_program_decomposed"].text == core.graph_module.print_readable(
        print_output=False
    )
    assert graphs["exported_program_decomposed"].text != graphs["exported_program"].text
    kept = compiler.explore_export(model, x, decompose=False).compiles[0].graphs
    assert "exported_program_decomposed" not in kept
    assert kept["exported_program"].text == graphs["exported_program"].text


def test_an_exported_exploration_round_trips_and_the_explorer_shows_its_stages():
    exp = compiler.explore_export(Scaled(), (torch.randn(2, 4),))
    assert compiler.Exploration.from_json(exp.to_json()) == exp
    panes = [p.stage for p in build_index(exp).compiles[0].panes]
    assert panes[0] == "exported_program"
    assert set(TEXT_STAGES) <= set(panes)


@pytest.mark.parametrize("strict", [False, True])
def test_an_export_failure_names_the_user_line(strict):
    import inspect

    lines, first = inspect.getsourcelines(DataDependent.forward)
    line = first + next(i for i, text in enumerate(lines) if "x.sum()" in text)
    expected = rf"torch.export.export\(strict={strict}\) could not export DataDependent at "
    expected += rf".*test_exported.py:{line}: .*torch.cond"
    with pytest.raises(compiler.CompileError, match=expected) as info:
        compiler.explore_export(DataDependent(), (torch.randn(3),), strict=strict)
    assert info.value.exploration is not None
    assert info.value.exploration.errors[-1].stage == "exported_program"


def test_explore_export_refuses_a_plain_function():
    with pytest.raises(compiler.TargetError, match=r"exports an nn\.Module, but got a function"):
        compiler.explore_export(lambda x: x.relu(), (torch.randn(3),))


class Counting:
    """A backend that counts its compiles (and runs the graph as it is)."""

    def __init__(self) -> None:
        self.compiles = 0

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]):
        self.compiles += 1
        return gm.forward


def test_explore_export_leaves_what_the_user_compiled_before_compiled():
    # no process-wide reset: a function compiled before does not compile again after
    backend = Counting()
    f = torch.compile(lambda x: x.cos() + 1, backend=backend)
    x = torch.randn(4)
    f(x)
    exp = compiler.explore_export(Scaled(), (torch.randn(2, 4),))
    assert exp.compiles and not exp.errors, exp.errors
    f(x)
    assert backend.compiles == 1


def test_strict_export_says_that_torch_itself_resets_dynamo():
    # torch 2.13's strict export calls torch._dynamo.reset() (functional_export.py), as it
    # does without the explorer: the explorer adds no reset of its own, and says so
    backend = Counting()
    f = torch.compile(lambda x: x.cos() + 1, backend=backend)
    x = torch.randn(4)
    f(x)
    exp = compiler.explore_export(Scaled(), (torch.randn(2, 4),), strict=True)
    f(x)
    reset = backend.compiles == 2
    assert any("resets Dynamo" in n for n in exp.notes) is reset, exp.notes
