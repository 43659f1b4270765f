"""Real torch.compile runs of the seed programs, each checked for the stages it must produce."""

from __future__ import annotations

import inspect

import programs
import pytest
import torch

import compiler


def _line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    for offset, line in enumerate(lines):
        if text in line:
            return first + offset
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def test_pointwise_function_records_dynamo_and_aot_graphs_with_source_lines():
    exp = compiler.explore(programs.pointwise, torch.randn(4, 4), backend="aot_eager")
    assert [str(c.compile_id) for c in exp.compiles] == ["0/0"]
    c = exp.compiles[0]
    assert c.status == "ok" and c.code_name == "pointwise"
    graph = c.graphs["dynamo_output_graph"]
    ops = [(n.op, n.target) for n in graph.nodes]
    assert ("call_function", "torch.sin") in ops
    assert ops[0][0] == "placeholder" and ops[-1][0] == "output"
    sin = next(n for n in graph.nodes if n.target == "torch.sin")
    assert sin.source is not None
    assert sin.source.line == _line_of(programs.pointwise, "torch.sin(x)")
    assert sin.meta[0].shape == ("4", "4") and sin.meta[0].dtype == "f32"
    # the decomposed graph is in ATen ops
    aten = c.graphs["aot_inference_graph"]
    assert any(n.target == "torch.ops.aten.sin.default" for n in aten.nodes)
    # bytecode before and after Dynamo, both as dis text
    assert c.bytecode is not None and "LOAD_GLOBAL" in (c.bytecode.original or "")
    assert c.bytecode.transformed and c.bytecode.transformed != c.bytecode.original
    assert c.bytecode.decompiled or c.bytecode.decompile_error
    assert c.guards is not None and any(g.kind == "TENSOR_MATCH" for g in c.guards.guards)
    assert c.metrics.entire_frame_seconds and c.metrics.entire_frame_seconds > 0
    assert exp.environment.torch == torch.__version__



def _decorated(fn):
    return fn


@_decorated
def _decorated_sin(x):
    return x.sin() * 2


def test_recorded_source_is_what_inspect_reads_for_each_frame():
    """Capture reads a frame's source through linecache; inspect is the oracle, also
    for a graph break's resume function, a lambda and code with no file."""
    namespace: dict[str, object] = {}
    exec("def from_exec(x):\n    return x.cos() + 1\n", namespace)
    targets = [programs.data_dependent, _decorated_sin, lambda x: x.tan() - 1]
    targets.append(namespace["from_exec"])
    for target in targets:
        exp = compiler.explore(target, torch.randn(8), backend="eager")
        assert exp.compiles
        for c in exp.compiles:
            assert c.bytecode is not None
            code = target.__code__  # type: ignore[attr-defined]
            if c.code_name == code.co_name:
                try:
                    expected = inspect.getsource(code)
                except OSError:
                    expected = None
                assert c.bytecode.source == expected
            elif c.bytecode.source is not None:  # a resume function: its own lines of the file
                assert c.bytecode.source in inspect.getsource(programs)


def test_decompiling_waits_until_the_decompiled_source_is_first_read(monkeypatch):
    import compiler.decompile as decompiler

    calls = []
    decompile = decompiler.decompile

    def counted(code):
        calls.append(code.co_name)
        return decompile(code)

    monkeypatch.setattr(decompiler, "decompile", counted)
    exp = compiler.explore(programs.pointwise, torch.randn(4, 4), backend="eager")
    bytecode = exp.compiles[0].bytecode
    assert bytecode is not None and bytecode.transformed_lines
    assert calls == [], "the compile itself does not run the decompiler"
    assert bytecode.decompiled and "def " in bytecode.decompiled
    assert bytecode.decompile_error is None
    assert bytecode.decompiled == exp.compiles[0].bytecode.decompiled
    assert len(calls) == 1
    loaded = compiler.Exploration.from_json(exp.to_json())
    assert loaded.compiles[0].bytecode.decompiled == bytecode.decompiled

def test_data_dependent_branch_is_a_graph_break_at_the_if_line():
    exp = compiler.explore(programs.data_dependent, torch.ones(4), backend="eager")
    breaks = exp.graph_breaks
    assert len(breaks) == 1
    gb = breaks[0]
    assert gb.location is not None
    assert gb.location.line == _line_of(programs.data_dependent, "if x.sum() > 0")
    assert "x.sum() > 0" in gb.location.code
    assert "data-dependent" in gb.reason.lower() or "data dependent" in gb.reason.lower()
    # the rest of the function runs in a resume function, compiled as its own frame
    resumes = [c for c in exp.compiles if c.is_resume]
    assert resumes and resumes[0].bytecode is not None


def test_module_that_prints_breaks_at_the_print_with_a_hint():
    model = programs.Printer()
    exp = compiler.explore(model, torch.randn(2, 8), backend="eager")
    assert exp.target == "Printer"
    gb = exp.graph_breaks[0]
    assert gb.location is not None and "print(" in gb.location.code
    assert gb.hints, "torch gives hints for print graph breaks"
    first = exp.compiles[0]
    assert first.status == "graph_break"
    assert any("linear" in n.target for n in first.graphs["dynamo_output_graph"].nodes)


def test_new_shapes_recompile_with_the_failed_guard_as_reason():
    exp = compiler.explore(
        programs.shape_loop, lambda f: torch.compile(f, backend="eager", dynamic=False), wrap=False
    )
    ids = [str(c.compile_id) for c in exp.compiles]
    assert ids == ["0/0", "0/1", "0/2"]
    second = exp.compile("0/1")
    assert second.recompile_reasons
    reason = second.recompile_reasons[0]
    assert reason.previous == "0/0"
    assert "size mismatch" in reason.reason and "expected 4, actual 8" in reason.reason
    assert [c.compile_id for c in exp.recompiles] == [c.compile_id for c in exp.compiles[1:]]


def test_dynamic_true_records_symbolic_shapes_and_shape_guards():
    exp = compiler.explore(
        programs.dynamic_fn, torch.randn(4, 8), torch.randn(8, 5), backend="aot_eager", dynamic=True
    )
    graph = exp.compiles[0].graphs["dynamo_output_graph"]
    dims = {d for n in graph.nodes for m in n.meta for d in m.shape}
    assert any(d.startswith("s") for d in dims), dims
    assert exp.options is not None and exp.options.dynamic is True


def test_training_step_records_joint_forward_and_backward_graphs():
    step = programs.mlp_training_step("aot_eager")
    exp = compiler.explore(step, wrap=False)
    c = exp.compiles[0]
    for stage in ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph"):
        assert stage in c.graphs, sorted(c.graphs)
    backward = c.graphs["aot_backward_graph"]
    assert any("tangents" in n.name for n in backward.nodes if n.op == "placeholder")
    assert any(n.target.startswith("torch.ops.aten.") for n in backward.nodes)


def test_nodes_link_inputs_and_users_both_ways():
    exp = compiler.explore(programs.pointwise, torch.randn(3), backend="aot_eager")
    for graph in exp.compiles[0].graphs.values():
        by_name = {n.name: n for n in graph.nodes if n.module == ""}
        for node in by_name.values():
            for inp in node.inputs:
                assert node.name in by_name[inp].users, (graph.stage, node.name, inp)


@pytest.mark.slow
def test_inductor_on_cpu_records_schedule_kernels_and_provenance():
    exp = compiler.explore(programs.pointwise, torch.randn(64, 64))
    c = exp.compiles[0]
    assert {"before_pre_grad_graph", "after_pre_grad_graph", "aot_inference_graph"} <= set(c.graphs)
    (out,) = c.output_code
    assert out.graph == "inference" and out.aot_id.endswith("inference")
    assert "inductor_post_grad_graph" in out.graphs
    kernels = [k for k in out.kernels if k.language == "cpp"]
    assert kernels, "Inductor on CPU writes C++ kernels"
    k = kernels[0]
    # the kernel source is verbatim inside the output code
    assert k.source in out.text
    assert 'extern "C"' in k.source
    assert out.text.split("\n")[k.first_line - 1].startswith(f"{k.name} = async_compile.")
    assert k.call_lines, "the wrapper calls the kernel"
    # provenance: kernel -> post-grad nodes -> Dynamo nodes -> user line
    assert {"sin", "relu"} & set(k.post_grad_nodes)
    assert any(loc.line == _line_of(programs.pointwise, "torch.sin(x)") for loc in k.user_stack)
    assert out.provenance.pre_to_post
    # the fused schedule from Inductor's scheduler
    assert out.schedule is not None and out.schedule.post_fusion
    assert out.schedule.fused and all(f.members for f in out.schedule.fused)
    assert out.schedule.pre_fusion and "op0" in out.schedule.pre_fusion
    assert c.metrics.inductor_seconds and c.metrics.inductor_seconds > 0
    assert c.metrics.fx_cache_hits == 0


@pytest.mark.slow
def test_conv_feature_pyramid_under_inductor_has_convolutions_and_fused_kernels():
    model = programs.FeaturePyramid().eval()
    with torch.no_grad():
        exp = compiler.explore(model, torch.randn(1, 3, 16, 16))
    c = exp.compiles[0]
    aten = c.graphs["aot_inference_graph"]
    convs = [n for n in aten.nodes if n.target == "torch.ops.aten.convolution.default"]
    assert len(convs) == 4
    (out,) = c.output_code
    languages = {k.language for k in out.kernels}
    assert "cpp" in languages
    fused = [k for k in out.kernels if k.language == "cpp" and len(k.post_grad_nodes) > 1]
    assert fused, "at least one kernel fuses several post-grad nodes"
    extern = [k for k in out.kernels if k.language == "extern"]
    assert extern and all(k.call_lines for k in extern)


@pytest.mark.slow
def test_training_step_under_inductor_records_forward_and_backward_output_code():
    step = programs.mlp_training_step("inductor")
    exp = compiler.explore(step, wrap=False)
    c = exp.compiles[0]
    kinds = [o.graph for o in c.output_code]
    assert kinds == ["forward", "backward"]
    for out in c.output_code:
        assert out.kernels and "inductor_post_grad_graph" in out.graphs
    assert c.metrics.backward_seconds is not None
    forward, backward = c.output_code
    # the weight gradients are library matmuls; torch names them even in the backward
    # graph, whose node map is empty on torch 2.13 (and that gap is labelled)
    assert any(k.name == "extern_kernels.mm" and k.call_lines for k in backward.kernels)
    if not backward.provenance.kernel_to_post:
        assert any(e.stage == "provenance" for e in backward.errors)
    assert any(k.post_grad_nodes for k in forward.kernels)
    # forward and backward each log fx_graph_runnable: both are kept
    assert "fx_graph_runnable" in c.artifacts and "fx_graph_runnable#2" in c.artifacts


def test_file_names_survive_an_earlier_compile_in_the_same_process():
    # torch logs each file name once per process; a later capture must still know it
    torch.compile(programs.data_dependent, backend="eager")(torch.ones(2))
    exp = compiler.explore(programs.with_print, torch.randn(3), backend="eager")
    assert exp.compiles[0].filename == programs.__file__
    assert exp.graph_breaks[0].location.filename == programs.__file__


def test_recording_captures_compiles_of_arbitrary_code():
    f = torch.compile(programs.pointwise, backend="eager")
    with compiler.recording() as rec:
        f(torch.randn(5))
    exp = rec.exploration()
    assert len(exp.compiles) == 1 and "dynamo_output_graph" in exp.compiles[0].graphs


def test_counters_record_what_the_capture_triggered():
    exp = compiler.explore(programs.with_print, torch.randn(3), backend="eager")
    assert exp.counters["stats.unique_graphs"] == 2
    assert exp.counters["resumes.torch_dynamo_resume_in_with_print_at_26"] == 1
    breaks = [k for k in exp.counters if k.startswith("graph_break.")]
    assert len(breaks) == 1 and "print" in breaks[0]


def test_keep_caches_is_recorded_with_a_note():
    exp = compiler.explore(programs.pointwise, torch.randn(3), backend="eager", keep_caches=True)
    assert exp.options is not None and exp.options.keep_caches
    assert any("cache" in note for note in exp.notes)
