"""Every function of compiler._compat, called on the installed torch."""

from __future__ import annotations

import logging

import programs
import pytest
import torch

from compiler import _compat


def test_trace_logger_is_torchs_structured_trace_logger():
    assert _compat.trace_logger().name == "torch.__trace"


def test_fusion_ir_loggers_exist_for_both_artifacts():
    for artifact in _compat.FUSION_IR_ARTIFACTS:
        logger = _compat.fusion_ir_logger(artifact)
        assert isinstance(logger, logging.Logger)
        assert getattr(logger, "artifact_name", None) == artifact


def test_current_compile_id_is_none_outside_a_compile_and_set_inside():
    assert _compat.current_compile_id() is None
    seen = []

    def hook(original, transformed):
        seen.append(_compat.current_compile_id())

    handle = _compat.register_bytecode_hook(hook)
    try:
        torch.compile(lambda x: x + 1, backend="eager")(torch.randn(2))
    finally:
        handle.remove()
    assert seen and seen[0][:3] == (0, 0, 0)


def test_patched_configs_restore_values():
    import torch._functorch.config as fc
    import torch._inductor.config as ic

    before = (ic.fx_graph_cache, fc.enable_autograd_cache)
    with _compat.patched_configs(
        {"fx_graph_cache": not before[0]}, {"enable_autograd_cache": not before[1]}
    ):
        assert (ic.fx_graph_cache, fc.enable_autograd_cache) == (not before[0], not before[1])
    assert (ic.fx_graph_cache, fc.enable_autograd_cache) == before


def test_option_and_mode_names():
    assert "trace.provenance_tracking_level" in _compat.inductor_option_names()
    assert {"default", "max-autotune"} <= _compat.inductor_mode_names()


def test_is_compiled_and_error_predicates():
    f = torch.compile(lambda x: x, backend="eager")
    m = torch.compile(torch.nn.Linear(2, 2), backend="eager")
    assert _compat.is_compiled(f) and _compat.is_compiled(m)
    assert not _compat.is_compiled(lambda x: x)
    assert not _compat.is_compiled(torch.compiler.disable(lambda x: x))
    from torch._dynamo.exc import Unsupported

    assert _compat.is_graph_break_error(Unsupported("x"))
    assert _compat.is_dynamo_error(Unsupported("x"))
    assert not _compat.is_backend_failure(ValueError())

    def failing_backend(gm, inputs):
        raise ValueError("no")

    with pytest.raises(Exception) as raised:
        torch.compile(lambda x: x + 1, backend=failing_backend)(torch.randn(2))
    assert _compat.is_backend_failure(raised.value)
    assert not _compat.is_graph_break_error(raised.value)


def test_counters_snapshot_counts_graph_breaks():
    before = _compat.counters_snapshot()
    torch.compile(lambda x: print("hi") or x + 1, backend="eager")(torch.randn(2))
    after = _compat.counters_snapshot()
    assert after.get("stats.unique_graphs", 0) > before.get("stats.unique_graphs", 0)


def test_config_snapshots_and_version():
    assert "fx_graph_cache" in _compat.inductor_config_snapshot()
    assert "enable_autograd_cache" in _compat.functorch_config_snapshot()
    assert (
        "cache_size_limit" in _compat.dynamo_config_snapshot() or _compat.dynamo_config_snapshot()
    )
    assert _compat.torch_version() == torch.__version__


def test_cudagraph_trees_logger_is_the_cudagraphs_artifact_logger():
    assert getattr(_compat.cudagraph_trees_logger(), "artifact_name", None) == "cudagraphs"


def test_autotune_listener_removal_keeps_other_listeners():
    from torch._inductor import select_algorithm

    def theirs(*args):
        pass

    select_algorithm.add_feedback_saver(theirs)
    try:
        remove = _compat.add_autotune_listener(lambda *args: None)
        savers = select_algorithm.get_algorithm_selector_cache().feedback_saver_fns
        assert len(savers) >= 2
        remove()
        assert savers == [theirs] or (theirs in savers and len(savers) == 1)
    finally:
        select_algorithm.clear_feedback_savers()


def test_interned_strings_map_indices_to_file_names():
    torch.compile(lambda x: x - 1, backend="eager")(torch.randn(2))
    table = _compat.interned_strings()
    assert table and all(isinstance(i, int) and isinstance(s, str) for i, s in table.items())
    assert __file__ in table.values()


def test_graph_module_of_trace_call_finds_dynamos_graph_in_a_trace_handler():
    found = {}

    class Handler(logging.Handler):
        def emit(self, record):
            meta = getattr(record, "metadata", {})
            if "dynamo_output_graph" in meta:
                found["gm"] = _compat.graph_module_of_trace_call()

    logger = _compat.trace_logger()
    handler = Handler(logging.DEBUG)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        lin = torch.nn.Linear(2, 2)
        torch.compile(lambda x: lin(x).relu(), backend="eager")(torch.randn(3, 2))
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    gm = found["gm"]
    assert isinstance(gm, torch.fx.GraphModule)
    assert any("nn_module_stack" in n.meta for n in gm.graph.nodes)
    assert _compat.graph_module_of_trace_call() is None  # outside a trace call


def _fusion_ir_texts(fn, *inputs):
    """The ir_pre_fusion and ir_post_fusion texts Inductor logs for one fresh compile."""
    texts = []

    class Handler(logging.Handler):
        def emit(self, record):
            texts.append(record.getMessage())

    loggers = [_compat.fusion_ir_logger(a) for a in _compat.FUSION_IR_ARTIFACTS]
    saved = [(lg, lg.level, lg.propagate) for lg in loggers]
    handler = Handler(logging.DEBUG)
    for lg in loggers:
        lg.setLevel(logging.DEBUG)
        lg.propagate = False
        lg.addHandler(handler)
    try:
        torch.compiler.reset()
        with torch._inductor.config.patch(fx_graph_cache=False):
            torch.compile(fn)(*inputs)
    finally:
        for lg, level, propagate in saved:
            lg.removeHandler(handler)
            lg.setLevel(level)
            lg.propagate = propagate
    return texts


def _norm_softmax(x, w):
    y = torch.nn.functional.layer_norm(x, x.shape[-1:], w)
    return torch.softmax(y @ y.transpose(-1, -2), dim=-1).sum(-1) * 0.5


def test_fusion_ir_formatted_once_writes_the_text_torch_writes_and_restores_torch():
    from sympy.core._print_helpers import Printable
    from torch._inductor.debug import DebugFormatter
    from torch._inductor.loop_body import LoopBodyBlock

    inputs = (torch.randn(2, 8, 16), torch.randn(16))
    before = (
        DebugFormatter.__dict__["_write_ir"],
        LoopBodyBlock.__dict__["debug_str"],
        Printable.__dict__["__str__"],
    )
    plain = _fusion_ir_texts(_norm_softmax, *inputs)
    with _compat.fusion_ir_formatted_once() as active:
        faster = _fusion_ir_texts(_norm_softmax, *inputs)
    assert active, "the hook points exist on the torch this project pins"
    assert len(plain) == 2 and plain[0].startswith("BEFORE FUSION")
    # more loop bodies than are checked against torch's printing, so some take the fast path
    assert plain[0].count("_loop_body:") > _compat.fusion_ir._BLOCKS_CHECKED
    assert faster == plain
    after = (
        DebugFormatter.__dict__["_write_ir"],
        LoopBodyBlock.__dict__["debug_str"],
        Printable.__dict__["__str__"],
    )
    assert after == before


def test_a_torch_older_than_the_tests_cover_is_refused_with_what_to_do():
    assert _compat.torch_release() >= _compat.OLDEST_TORCH
    _compat.require_supported_torch()  # the installed one
    with pytest.raises(ImportError, match=r"needs torch 2\.11 or newer.*2\.10\.0.*pip install"):
        _compat.require_supported_torch("2.10.0+cpu")
    _compat.require_supported_torch("2.15.0")


def test_pyprojects_lower_bound_for_torch_is_the_oldest_torch_the_tests_cover():
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    oldest = ".".join(map(str, _compat.OLDEST_TORCH))
    assert f"torch>={oldest}" in project["project"]["dependencies"]


def test_dynamo_config_names_values_and_a_patch_that_restores_them():
    import torch._dynamo.config as dynamo_config

    assert _compat.dynamo_config_name("cache_size_limit") == "cache_size_limit"
    # the renamed setting resolves to a name this torch has, under either spelling
    renamed = _compat.dynamo_config_name("ignore_logging_functions")
    assert renamed in {"ignore_logging_functions", "ignore_logger_methods"}
    assert hasattr(dynamo_config, renamed)
    before = _compat.dynamo_config_value("assume_static_by_default")
    assert before == dynamo_config.assume_static_by_default
    with _compat.patched_dynamo_config({"assume_static_by_default": not before}):
        assert _compat.dynamo_config_value("assume_static_by_default") == (not before)
    assert _compat.dynamo_config_value("assume_static_by_default") == before
    # a set-valued setting gets the set given, and the old set back on exit
    ignored = set(_compat.dynamo_config_value("ignore_logging_functions"))
    with _compat.patched_dynamo_config({renamed: {*ignored, print}}):
        assert set(_compat.dynamo_config_value("ignore_logging_functions")) == {*ignored, print}
    assert set(_compat.dynamo_config_value("ignore_logging_functions")) == ignored


def test_is_constraint_violation_knows_a_specialised_dynamic_dimension():
    x = torch.randn(4, 3)
    torch._dynamo.mark_dynamic(x, 0)
    with pytest.raises(Exception) as info:
        torch.compile(programs.specialises_on_size, backend="eager")(x)
    assert _compat.is_constraint_violation(info.value)
    assert not _compat.is_constraint_violation(ValueError("not torch's"))


def test_traced_line_is_the_line_dynamo_is_tracing_in_its_own_frames():
    import sys

    found = []

    def backend(gm, example_inputs):
        # the graph is compiled from inside the instruction translator that traced it
        frame = sys._getframe()
        while frame is not None:
            found.append(_compat.traced_line(frame, __file__))
            frame = frame.f_back
        return gm.forward

    def traced(x):
        y = x + 1
        return y * 2  # the instruction being traced when the graph is compiled

    torch.compile(traced, backend=backend)(torch.randn(2))
    first = traced.__code__.co_firstlineno
    lines = {line for line in found if line is not None}
    assert lines == {first + 2}
    assert _compat.traced_line(sys._getframe(), __file__) is None  # a frame of no translator


def test_cudagraph_input_copy_bytes_without_cuda_graphs_is_empty():
    if torch.cuda.is_available():
        pytest.skip("the GPU tests record CUDA graphs; here: none recorded")
    assert _compat.cudagraph_input_copy_bytes() == []


def test_triton_cache_dir_is_the_environments_or_an_existing_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    assert _compat.triton_cache_dir() == tmp_path
    monkeypatch.delenv("TRITON_CACHE_DIR")
    found = _compat.triton_cache_dir()
    assert found is None or found.is_dir()


def test_loaded_output_module_finds_the_module_inductor_loaded():
    from torch._inductor.codecache import PyCodeCache

    torch.compile(lambda x: x.cos() * 3, backend="inductor")(torch.randn(8))
    module = PyCodeCache.modules[-1]
    assert _compat.loaded_output_module(module.__file__) is module
    assert _compat.loaded_output_module("") is None
    assert _compat.loaded_output_module("/no/such/output_code.py") is None


@pytest.mark.slow
def test_aoti_compile_and_package_writes_a_package_that_runs(tmp_path):
    # one pointwise kernel: the C++ build is the cost, tests/test_aoti.py covers the stages
    model = torch.nn.ReLU().eval()
    x = torch.randn(2, 4)
    program = torch.export.export(model, (x,))
    path = _compat.aoti_compile_and_package(program, str(tmp_path / "small.pt2"))
    assert path == str(tmp_path / "small.pt2") and (tmp_path / "small.pt2").is_file()
    with torch.no_grad():
        torch.testing.assert_close(torch._inductor.aoti_load_package(path)(x), model(x))


def test_converted_codes_holds_what_dynamo_converted_until_a_reset():
    def f(x):
        return x + 1

    torch.compile(f, backend="eager")(torch.ones(1))
    from compiler._compat import converted_codes

    assert f.__code__ in converted_codes()
    torch.compiler.reset()
    assert f.__code__ not in converted_codes()
