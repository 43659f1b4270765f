"""compiler.numerics: the first node whose compiled value leaves eager's, on real Inductor
compiles on the CPU (planted bug, no bug, bf16, a GPT-2 training step)."""

from __future__ import annotations

import inspect

import pytest
import torch

import compiler


def test_every_private_torch_use_of_numerics_works_on_the_installed_torch():
    from compiler._compat import numerics as torch_numerics
    from compiler.parse.output_code import file_line_writes

    assert torch_numerics.is_random(torch.ops.aten.bernoulli.p)
    assert torch_numerics.is_random(torch.ops.prims.inductor_random.default)
    assert not torch_numerics.is_random(torch.ops.aten.add.Tensor)
    assert torch_numerics.is_view(torch.ops.aten.view.default)
    assert not torch_numerics.is_view(torch.ops.aten.add_.Tensor)
    assert torch_numerics.repro_tolerance() == pytest.approx(1e-3)
    assert torch_numerics.fallback_random() is False
    ref = torch.randn(2000)
    fp64 = ref.double()
    assert torch_numerics.same(ref, ref + 1e-7, fp64, 1e-3)
    assert not torch_numerics.same(ref, ref + 1, fp64, 1e-3)
    from torch._inductor.graph import GraphLowering

    before = GraphLowering.compile_to_module
    with torch_numerics.observe_intermediates(file_line_writes) as seen:
        assert GraphLowering.compile_to_module is not before
    assert GraphLowering.compile_to_module is before and seen.graphs == []


class TwoLayers(torch.nn.Module):
    def __init__(self, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.a = torch.nn.Linear(8, 32, dtype=dtype)
        self.b = torch.nn.Linear(32, 4, dtype=dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.a(x))
        return self.b(h).softmax(-1)


_LINES, _FIRST = inspect.getsourcelines(TwoLayers)
RELU_LINE = next(i for i, line in enumerate(_LINES, _FIRST) if "torch.relu" in line)


def _step(model: torch.nn.Module, opt: torch.optim.Optimizer):
    def step(x: torch.Tensor) -> torch.Tensor:
        opt.zero_grad()
        loss = (model(x) * torch.arange(4.0, dtype=x.dtype, device=x.device)).sum()
        loss.backward()
        opt.step()
        return loss

    return step


@pytest.mark.slow
def test_a_planted_relu_bug_is_the_first_divergence_with_its_kernel_and_line():
    torch.manual_seed(0)
    model = TwoLayers()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(6, 8)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    found = compiler.numerics(
        _step(model, opt), x, options={"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"}
    )
    first = found.first_divergence
    assert first is not None
    assert first.node == "relu" and first.graph == "forward"
    assert first.kernel.startswith("cpp_fused") and "relu" in first.kernel
    assert first.kernel_id.endswith(first.kernel)
    assert first.source is not None and first.source.line == RELU_LINE
    assert first.within is False and first.ratio is not None and first.ratio > 1
    assert first.max_abs is not None and first.max_abs >= 1.0 - 1e-5  # relu(x) became x + 1
    # end to end: the compiled step's loss and every gradient leave the eager rerun's
    ends = {(f.kind, f.name): f for f in found.end_to_end}
    assert set(ends) == {("output", "result")} | {
        ("gradient", f"TwoLayers.{name}") for name, _ in model.named_parameters()
    }
    assert all(f.compared and f.diverges for f in ends.values()), ends
    assert found.end_to_end_diverges
    # every node is compared or says why not
    assert all(n.compared or n.reason for n in found.nodes)
    assert {n.graph for n in found.nodes} >= {"forward", "backward"}
    assert any(n.output.startswith("gradient") and n.compared for n in found.nodes)
    # the user's model and optimizer are as they were
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert all(p.grad is None for p in model.parameters())
    assert not opt.state
    # the Exploration carries it, and the advisor names it
    exp = found.exploration
    assert exp.numerics is not None and exp.numerics.first_divergence == first
    finding = next(f for f in exp.findings() if f.kind == "numerics.divergence")
    assert f":{RELU_LINE}" in finding.title and first.kernel in finding.title
    assert "emulate_precision_casts" not in finding.suggestion  # float32: not a precision fix
    assert "TORCHDYNAMO_REPRO_AFTER" in finding.suggestion
    # the user's own result diverges too, and the finding says so, with which and how much
    assert "the target's own output `result` differs too" in finding.title
    assert any("among them output `result`" in e.text and "max abs error" in e.text
               for e in finding.evidence)  # fmt: skip
    assert not [f for f in exp.findings() if f.kind == "numerics.end_to_end"]  # one cause
    # the pane, the Markdown report and the offline page show it
    from explorer.export import all_pane_data, to_html
    from explorer.panes import build_pane
    from explorer.panes.index import build_index
    from explorer.report import summarize

    pane = build_pane(exp, None, "numerics")
    assert pane.first is not None and pane.first.node == "relu" and pane.first.level == "over"
    assert pane.first.kernel == first.kernel_id and pane.first.stage is not None
    assert [r.node for r in pane.nodes] == [n.node for n in found.nodes]
    assert "**First divergence:** `relu`" in summarize(exp)
    assert "| gradient `TwoLayers.a.weight` | float32 |" in summarize(exp)
    assert pane.end_to_end[0].name == "result" and pane.end_to_end[0].level == "over"
    assert "4 gradient(s) compared; 5 leave their tolerance" in pane.end_to_end_summary
    assert ("", "numerics") in dict(all_pane_data(exp, build_index(exp)))
    assert "renderNumerics" in to_html(exp)


@pytest.mark.slow
def test_the_same_model_without_the_bug_has_no_divergence():
    torch.manual_seed(0)
    model = TwoLayers()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    storage = [p.data_ptr() for p in model.parameters()]
    found = compiler.numerics(_step(model, opt), torch.randn(6, 8))
    assert found.first_divergence is None
    assert found.compared and all(n.within for n in found.compared)
    # end to end: the loss and the four gradients agree with an eager rerun of the step,
    # and neither run's update or gradients stay on the user's model
    assert [(f.kind, f.compared, f.within) for f in found.end_to_end] == [
        ("output", True, True), *[("gradient", True, True)] * 4
    ]
    assert not found.end_to_end_diverges
    # judged against a float64 rerun of the step, and the model is float32 again after it,
    # in the same parameters and storage
    assert all(f.rmse_bound is not None and f.closer for f in found.end_to_end)
    assert any("against a float64 rerun of the whole target" in n for n in found.notes)
    after = model.state_dict()
    assert all(after[k].dtype == before[k].dtype for k in before)
    assert [p.data_ptr() for p in model.parameters()] == storage
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert all(p.grad is None for p in model.parameters()) and not opt.state
    assert any(note.startswith("End to end: the target ran again eagerly") for note in found.notes)
    assert not [f for f in found.exploration.findings() if f.kind.startswith("numerics.")]


@pytest.mark.slow
@pytest.mark.parametrize("bug", ["accuracy", None])
def test_a_divergence_only_a_later_call_shows_is_found_end_to_end(bug):
    # relu(x) * w with the planted relu bug (relu(x) becomes x + 1): its first call has w = 0,
    # which hides the bug at every node compared; the second call (w = 1), which numerics
    # does not compare node by node, shows it in what the target returns
    scaled = torch.compile(lambda x, w: torch.relu(x) * w,
                           options={"cpp.inject_relu_bug_TESTING_ONLY": bug})  # fmt: skip

    def twice(x: torch.Tensor) -> torch.Tensor:
        return scaled(x, torch.zeros(16)) + scaled(x, torch.ones(16))

    torch.manual_seed(0)
    found = compiler.numerics(twice, torch.randn(16))
    assert found.first_divergence is None and found.compared
    kinds = [f.kind for f in found.exploration.findings() if f.kind.startswith("numerics.")]
    if bug is None:
        assert not found.end_to_end_diverges and kinds == []
        return
    (result,) = found.end_to_end
    assert result.diverges and result.max_abs is not None and result.max_abs >= 1.0 - 1e-5
    assert kinds == ["numerics.end_to_end"]
    finding = next(f for f in found.exploration.findings() if f.kind == "numerics.end_to_end")
    assert "output `result`" in finding.title and "no compared node differs" in finding.title
    assert finding.evidence[0].text.startswith("output `result` (torch.float32): max abs error 1")
    assert "1 later call(s) of a graph were not compared" in finding.evidence[-1].text
    assert "fused" in finding.evidence[-1].text  # the relu, computed inside the mul's kernel
    assert "aot_eager" in finding.suggestion and "TORCHDYNAMO_REPRO_AFTER" in finding.suggestion


def fused_bf16(x: torch.Tensor) -> torch.Tensor:
    return ((x.sin() * 1.7 + x.cos()).exp() - x) * 0.3


@pytest.mark.slow
def test_bf16_compiled_differs_from_eager_within_tolerance_and_says_which_is_closer():
    torch.manual_seed(0)
    x = torch.randn(4096, dtype=torch.bfloat16)
    given = x.clone()
    found = compiler.numerics(fused_bf16, x)
    assert found.low_precision == "bfloat16"
    assert found.first_divergence is None
    last = found.compared[-1]
    assert last.max_abs, "Inductor keeps the fused chain in float32; eager rounds every op"
    assert last.assert_close is not None and last.closer == "compiled"
    assert any("closer to float64" in note and "not a bug" in note for note in found.notes)
    # end to end, the result is judged against a float64 rerun (the input cast in place and
    # put back), as torch's same() does: differing from eager's bf16 is no divergence
    (result,) = found.end_to_end
    assert result.max_abs and result.rmse_bound is not None and result.closer == "compiled"
    assert result.within and not found.end_to_end_diverges
    assert not [f for f in found.exploration.findings() if f.kind.startswith("numerics.")]
    assert x.dtype == torch.bfloat16 and torch.equal(x, given)


def made_in_float32(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x @ torch.ones(8, 4, dtype=torch.float32))


@pytest.mark.slow
def test_a_target_that_cannot_run_in_float64_is_judged_allclose_and_says_so():
    x = torch.randn(3, 8)
    found = compiler.numerics(made_in_float32, x)
    (result,) = found.end_to_end
    assert result.compared and result.within and result.rmse_bound is None
    note = next(n for n in found.notes if n.startswith("End to end"))
    assert "allclose only: the float64 rerun raised RuntimeError" in note
    assert x.dtype == torch.float32


def _only_float32(x: torch.Tensor) -> torch.Tensor:
    if x.dtype != torch.float32:
        raise TypeError("this op is float32 only")  # as torch's efficient attention is
    return x * 2


torch.fx.wrap("_only_float32")  # a call node of its own in a traced graph


def test_a_graph_that_stops_in_float64_names_the_node_and_the_place():
    # on the H200 one graph's float64 run stopped with "TypeError: 'NoneType' object is not
    # subscriptable" and nothing said whose it was: torch's op or this package's code
    from compiler.numerics.reference import run_reference

    gm = torch.fx.symbolic_trace(lambda x: _only_float32(torch.relu(x)) + 1)
    ref = run_reference(gm, [torch.randn(4)], (torch.get_rng_state(), None))
    assert not ref.error and set(ref.values) >= {"relu", "add"}
    assert ref.fp64_error.startswith("TypeError: this op is float32 only (at node `_only_float32")
    assert "test_numerics.py:" in ref.fp64_error, ref.fp64_error
    assert ref.fp64["relu"].dtype == torch.float64  # what ran before the stop is kept


class KeptInFloat32(torch.nn.Module):
    """Autocast around it, one layer the user keeps in float32 (autocast off inside)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(64, 128)
        self.b = torch.nn.Linear(128, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.gelu(self.a(x))
        with torch.autocast("cpu", enabled=False):
            y = self.b(h.float())
        return y.softmax(-1)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
def test_numerics_inside_cpu_autocast_compares_the_float32_layer_in_float32(dtype):
    # The references replay the post-grad graph, which holds autocast's casts; run under the
    # caller's autocast they cast the float32 layer down again ("dtype: compiled float32,
    # eager bfloat16" on addmm_1 and after it) until autocast was turned off around them.
    torch.manual_seed(0)
    model = KeptInFloat32()
    with torch.autocast("cpu", dtype=dtype):
        found = compiler.numerics(model, torch.randn(32, 64))
    assert found.low_precision == str(dtype).removeprefix("torch.")
    assert found.first_divergence is None
    assert not [n for n in found.nodes if n.reason.startswith("dtype")]
    by_name = {n.node: n for n in found.compared}
    assert by_name["addmm"].dtype == str(dtype) and by_name["addmm_1"].dtype == "torch.float32"
    # the fused gelu skips eager's rounding to low precision before the float32 layer
    assert by_name["addmm_1"].max_abs and by_name["addmm_1"].closer == "compiled"
    assert any("compiled is closer to float64" in note for note in found.notes)
    (out,) = found.end_to_end
    assert out.name == "result" and out.compared and out.within


@pytest.mark.slow
def test_a_gpt2_training_step_is_compared_node_by_node_or_says_why_not():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, n_positions=32,
                                     vocab_size=128)  # fmt: skip
    model = transformers.GPT2LMHeadModel(config)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(0, 128, (2, 16))

    def step(ids: torch.Tensor) -> torch.Tensor:
        opt.zero_grad()
        loss = model(ids, labels=ids).loss
        loss.backward()
        opt.step()
        return loss

    before = {k: v.clone() for k, v in model.state_dict().items()}
    found = compiler.numerics(step, ids, options={"fallback_random": True})
    assert found.nodes and all(n.compared or n.reason for n in found.nodes)
    graphs = {n.graph for n in found.nodes}
    assert "forward" in graphs and "backward" in graphs
    assert len(found.compared) > 50
    assert any(n.output.startswith("gradient") and n.compared for n in found.nodes)
    assert found.first_divergence is None, found.first_divergence
    # the embeddings' gradients, each named for the kernel that wrote it (not an addmm that
    # read it after), and end to end the loss and every gradient against an eager rerun
    puts = [n for n in found.compared if "index_put" in n.target]
    assert len(puts) == 2 and all(n.kernel.startswith("cpp_fused") for n in puts), puts
    assert [f.name for f in found.end_to_end if f.kind == "output"] == ["result"]
    grads = {f.name for f in found.end_to_end if f.kind == "gradient" and f.compared}
    assert grads == {f"GPT2LMHeadModel.{n}" for n, _ in model.named_parameters()}
    assert not found.end_to_end_diverges
    # its dropout draws random numbers, which a float64 rerun would draw differently: the
    # end-to-end verdict is allclose, and the notes say why
    assert all(f.rmse_bound is None for f in found.end_to_end)
    assert any("allclose only: no float64 rerun, as the graphs draw random numbers" in n
               for n in found.notes)  # fmt: skip
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert not opt.state
    # the record goes through the file form and back
    exp = found.exploration
    assert compiler.Exploration.from_json(exp.to_json()).numerics == exp.numerics


def test_the_h200_recording_of_the_planted_triton_bug_replays_on_the_cpu():
    """Recorded by ``scripts/record_numerics_gpu.py`` (skipped until it is committed)."""
    import gzip
    from pathlib import Path

    path = Path(__file__).parent / "data" / "recordings" / "cuda_numerics_relu_bug.json.gz"
    if not path.exists():
        pytest.skip(f"{path.name} not recorded yet: python3 scripts/record_numerics_gpu.py OUT")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        exp = compiler.Exploration.from_json(f.read())
    first = exp.numerics.first_divergence
    assert first is not None and first.node == "relu" and first.kernel.startswith("triton_")
    assert first.source is not None and first.source.line == RELU_LINE
    from explorer.panes import build_pane

    pane = build_pane(exp, None, "numerics")
    assert pane.first is not None and pane.first.kernel == first.kernel_id
    assert any(f.kind == "numerics.divergence" for f in exp.findings())


def dropped(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.dropout(x.sin(), 0.5, training=True) * 3


@pytest.mark.slow
def test_random_ops_are_named_unless_fallback_random_makes_them_eagers():
    x = torch.randn(256)
    own = compiler.numerics(dropped, x)
    assert own.first_divergence is None
    assert any(n.reason.startswith("random:") for n in own.nodes)
    # Inductor's own draws against eager's rerun: differences that say nothing of the code
    (result,) = own.end_to_end
    assert not result.compared and result.reason.startswith("random: the compiled run drew")
    assert any(note.startswith("End to end, nothing was compared after all") for note in own.notes)
    torch.manual_seed(0)
    same = compiler.numerics(dropped, x, options={"fallback_random": True})
    assert not any(n.reason.startswith("random:") for n in same.nodes)
    assert same.first_divergence is None and same.compared[-1].output
    (result,) = same.end_to_end
    assert result.compared and result.within and result.max_abs < 1e-5  # the same mask


# A GPU output code's backward of an embedding, written by hand after Inductor's Triton
# wrapper: ``index_put`` of a clone lowers to the clone's buffer (its origin node is the
# index_put) and a Scatter that mutates it with no origin node of its own; the C++ backend
# fills and scatters in one kernel, Triton zero-fills in one kernel and adds atomically in a
# later one. The "kernels" here are Python, so the test runs on the CPU.
GPU_EMBEDDING_BACKWARD = "gpu_embedding_backward.output_code.txt"  # in tests/data


def _embedding_backward() -> torch.fx.GraphModule:
    """The post-grad graph of that code: ``index_put`` (accumulate) into zeros, times 2."""
    import functools

    aten, graph = torch.ops.aten, torch.fx.Graph()
    primals_1, tangents_1 = graph.placeholder("primals_1"), graph.placeholder("tangents_1")
    node = functools.partial(graph.create_node, "call_function")
    full = node(aten.full.default, ([8, 4], 0.0), {"dtype": torch.float32}, name="full")
    index_put = node(aten.index_put.default, (full, [primals_1], tangents_1, True),
                     name="index_put")  # fmt: skip
    graph.output((node(aten.mul.Tensor, (index_put, 2.0), name="mul"),))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


# The same code with the adding kernel given a flat view of buf0 (``reinterpret_tensor``):
# the write goes to buf0's storage, so it is buf0's last write all the same.
GPU_EMBEDDING_BACKWARD_VIEW = "gpu_embedding_backward_view.output_code.txt"  # in tests/data


@pytest.mark.parametrize("fixture", [GPU_EMBEDDING_BACKWARD, GPU_EMBEDDING_BACKWARD_VIEW])
def test_a_buffer_a_later_triton_kernel_adds_into_is_compared_after_the_adds(tmp_path, fixture):
    import importlib.util
    from pathlib import Path

    from compiler._compat import numerics as torch_numerics
    from compiler.numerics.nodes import GraphLinks, graph_nodes
    from compiler.numerics.reference import run_reference
    from compiler.parse.output_code import file_line_writes, line_callees

    text = (Path(__file__).parent / "data" / fixture).read_text()
    path = tmp_path / "gpu_output_code.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("gpu_output_code", path)
    assert spec is not None and spec.loader is not None
    code = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(code)
    module = _embedding_backward()
    assert [n.name for n in module.graph.nodes][2:5] == ["full", "index_put", "mul"]
    # what GraphLowering holds for this code (Inductor 2.11-2.14): the scatter buf1 mutates
    # buf0 and has no origin node; buf0's origin node is the index_put
    lowered = torch_numerics.LoweredGraph(
        module=module, path=str(path), call_code=code.call.__code__,
        origin={"buf0": "index_put", "buf2": "mul"},
        origins={"buf0": ("full", "index_put"), "buf1": ("index_put",), "buf2": ("mul",)},
        inputs=("primals_1", "tangents_1"), mutates={"buf1": "buf0"},
    )  # fmt: skip
    first = code.call.__code__.co_firstlineno
    writes = {line: tuple(n for n in names if n in lowered.origins)
              for line, names in file_line_writes(str(path), first).items()}  # fmt: skip
    # both kernels write buf0, the second through its view where the fixture passes one
    assert [names for names in writes.values() if "buf0" in names] == [("buf0",)] * 2
    seen = torch_numerics.Intermediates()
    observed = torch_numerics._observed_call(code.call, lowered, writes, seen, [True])
    ids, grad = torch.tensor([1, 3, 1, 6, 0, 1]), torch.randn(6, 4)
    (out,) = observed([ids, grad])
    assert not seen.errors and torch.equal(out, module(ids, grad)[0])
    call = lowered.calls[0]
    links = GraphLinks(graph="backward", compile_id="0/0",
                       callees=line_callees(text, first))  # fmt: skip
    rows = graph_nodes(lowered, call, run_reference(module, call.inputs, call.rng), links,
                       tol=1e-3, fallback_random=False, start=0)  # fmt: skip
    index_put = next(r for r in rows if r.node == "index_put")
    # compared after the atomic adds (kernel 11), not after the zero-fill (kernel 10), where
    # a GPT-2's tied embedding gradient came out with max relative error 1.0 on an H200
    assert index_put.compared and index_put.buffer == "buf0"
    assert index_put.kernel.startswith("triton_poi_fused_embedding_dense_backward_11")
    assert index_put.within and index_put.max_abs == 0.0
    assert all(r.within for r in rows if r.compared)


def test_a_kernel_line_writes_only_what_the_kernel_does_not_just_read():
    # a later kernel that only reads a buffer a mutation rewrites must not be taken for its
    # last write (a CPU GPT-2's embedding gradient was credited to the addmm that read it)
    from compiler.parse.output_code import line_writes

    code = "\n".join([
        "triton_poi_k_0 = async_compile.triton('triton_poi_k_0', '''",
        "def triton_poi_k_0(in_ptr0, in_out_ptr0, out_ptr1, xnumel, XBLOCK : tl.constexpr):",
        "''')",
        "cpp_fused_k_1 = async_compile.cpp_pybinding(['const float*', 'float*'], r'''",
        "''')",
        "def call(args):",
        "    triton_poi_k_0.run(buf0, buf1, buf2, 16, stream=stream0)",
        "    cpp_fused_k_1(buf2, buf3)",
        "    extern_kernels.addmm(buf3, buf0, buf1, alpha=1, beta=1, out=buf4)",
        "    buf5 = torch.ops.aten.index_put_.default(buf4, [buf0], buf1, True)",
        "    unknown_kernel(buf5)",
    ])  # fmt: skip
    # (names that are no buffer, as the stream, are dropped by the caller)
    assert line_writes(code, 6) == {
        7: ("buf1", "buf2", "stream0"), 8: ("buf3",), 9: ("buf4",), 10: ("buf5", "buf4", "buf1"),
        11: ("buf5",),
    }
    # a view of a buffer passed where the kernel writes is a write of that buffer; one passed
    # where it only reads, or an extern kernel's input, is not
    viewed = "\n".join([
        "triton_poi_k_0 = async_compile.triton('triton_poi_k_0', '''",
        "def triton_poi_k_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):",
        "''')",
        "def call(args):",
        "    triton_poi_k_0.run(reinterpret_tensor(buf0, (4, ), (1, ), 0), "
        "reinterpret_tensor(buf1, (4, ), (1, ), 0), 4)",
        "    extern_kernels.mm(reinterpret_tensor(buf1, (2, 2), (2, 1), 0), buf0, "
        "out=reinterpret_tensor(buf2, (2, 2), (4, 1), 0))",
    ])  # fmt: skip
    assert line_writes(viewed, 4) == {5: ("buf1",), 6: ("buf2",)}


def test_a_float64_rerun_puts_back_the_very_tensors_gradients_and_optimizer_state():
    # the end-to-end float64 reference casts the user's own objects in place: afterwards each
    # holds its own storage, dtype, gradient object and optimizer state entries again
    from compiler.capture.state import snapshot
    from compiler.numerics.float64 import in_float64

    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    x = torch.randn(5, 4)
    model(x).sum().backward()
    opt.step()  # state (exp_avg, step) and gradients exist before

    def step(x: torch.Tensor) -> torch.Tensor:
        loss = model(x).square().sum()
        loss.backward()
        opt.step()
        return loss

    tensors = [*model.parameters(), *model.buffers(), x]
    kept = [(t, t.data_ptr(), t.dtype, t.grad) for t in tensors]
    state = {id(p): {k: id(v) for k, v in s.items()} for p, s in opt.state.items()}
    saved = snapshot(step, x)
    with in_float64(saved) as cast:
        assert step(x).dtype == torch.float64
        assert model[0].weight.grad is not None and model[0].weight.grad.dtype == torch.float64
    saved.restore()
    assert cast == 7  # 4 parameters, BatchNorm's 2 running statistics, the input
    for t, ptr, dtype, grad in kept:
        assert t.data_ptr() == ptr and t.dtype == dtype and t.grad is grad
    assert {id(p): {k: id(v) for k, v in s.items()} for p, s in opt.state.items()} == state
    assert model[1].num_batches_tracked.dtype == torch.int64
