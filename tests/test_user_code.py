"""``Kernel.user_lines`` and ``GraphBreak.user_frames`` (compiler/link/user_code.py) on real
captures, traces and schema 1.x recordings."""

from __future__ import annotations

import inspect
from pathlib import Path

import programs
import pytest
import torch

import compiler
from compiler.link.user_code import is_user_file

ROOT = Path(__file__).resolve().parent.parent
RECORDINGS = ROOT / "notebooks" / "recordings"


@pytest.fixture(scope="module")
def blocks():
    torch.manual_seed(0)
    return compiler.explore(programs.Blocks(), torch.randn(4, 8))


def _lines_of(fn) -> range:
    lines, first = inspect.getsourcelines(fn)
    return range(first, first + len(lines))


def _post_grad_sources(oc: compiler.OutputCode) -> dict[str, compiler.SourceLoc]:
    graph = oc.graphs["inductor_post_grad_graph"]
    return {n.name: n.source for n in graph.nodes if n.source is not None}


@pytest.mark.slow
def test_a_fused_kernel_names_the_user_lines_of_the_post_grad_nodes_it_ran(blocks):
    (c,) = blocks.compiles
    block_forward = _lines_of(type(programs.Blocks().h[0]).forward)
    fused = [k for oc in c.output_code for k in oc.kernels if k.language == "cpp"]
    assert fused
    for oc in c.output_code:
        sources = _post_grad_sources(oc)
        for k in oc.kernels:
            expected = {
                (s.filename, s.line)
                for s in (*k.user_stack, *(sources[n] for n in k.post_grad_nodes if n in sources))
            }
            got = [(loc.filename, loc.line) for loc in k.user_lines]
            assert len(got) == len(set(got)), k.id
            assert set(got) == expected, k.id
    # relu(lin(x)) + x and the norm are fused: their lines are in Block.forward
    lines = [loc for k in fused for loc in k.user_lines]
    assert any(
        loc.filename == programs.__file__ and loc.line in block_forward for loc in lines
    )


def test_a_loaded_exploration_parses_no_post_grad_graph_until_a_kernels_lines_are_read():
    exp = compiler.Exploration.from_json((RECORDINGS / "transformer_block.json").read_text())
    kernels = [k for c in exp.compiles for k in c.kernels()]
    assert kernels
    cache = kernels[0].derived.cache
    assert cache.counts["graph"] == 0 and cache.pending()["user_lines"] == len(kernels)
    assert all(isinstance(k.user_lines, tuple) for k in kernels)
    assert cache.counts["user_lines"] == len(kernels) and not cache.pending()["user_lines"]
    # the post-grad graphs only: the Dynamo and AOT graphs wait for their own readers
    post_grad = sum(len(oc.graphs) for c in exp.compiles for oc in c.output_code)
    assert 0 < cache.counts["graph"] <= post_grad + sum(len(c.graphs) for c in exp.compiles)


@pytest.mark.parametrize("name", ["graph_break.json", "transformer_block.json", "conv_net.json"])
def test_schema_1_recordings_get_kernel_user_lines_in_the_recorded_program(name):
    exp = compiler.Exploration.from_json((RECORDINGS / name).read_text())
    files = {c.filename for c in exp.compiles}
    kernels = [k for c in exp.compiles for k in c.kernels()]
    assert kernels
    for c in exp.compiles:
        for oc in c.output_code:
            sources = _post_grad_sources(oc)
            for k in oc.kernels:
                ran = {sources[n] for n in (*k.post_grad_nodes, *k.source_nodes) if n in sources}
                assert set(k.user_lines) <= {*k.user_stack, *ran}, k.id
                # a kernel that ran nodes of the compiled function names its lines
                assert k.user_lines or not {s for s in ran if s.filename in files}, k.id
    assert any(loc.filename in files for k in kernels for loc in k.user_lines)
    assert compiler.Exploration.from_json(exp.to_json()) == exp


def test_a_graph_breaks_user_frames_are_the_compiled_functions_not_its_callers():
    exp = compiler.explore(programs.with_print, torch.randn(3), backend="eager")
    breaks = exp.graph_breaks
    assert breaks
    for gb in breaks:
        assert len(gb.user_frames) == len(gb.user_stack)
        flags = dict(zip(gb.user_stack, gb.user_frames, strict=True))
        # the caller (this test, compiler.explore) is on the stack but is not the user's code
        assert any(not user for user in flags.values())
        assert [loc.filename for loc, user in flags.items() if user] == [programs.__file__]
        assert all(loc.filename == programs.__file__ for loc, user in flags.items() if user)
    again = compiler.Exploration.from_json(exp.to_json())
    assert again.graph_breaks == breaks


def test_a_resume_function_says_which_line_of_which_function_it_resumes():
    exp = compiler.explore(programs.data_dependent, torch.ones(4), backend="eager")
    resumes = [c for c in exp.compiles if c.is_resume]
    assert resumes
    lines, first = inspect.getsourcelines(programs.data_dependent)
    for c in resumes:
        r = c.resumes
        assert r is not None and r.function == "data_dependent"
        assert r.filename == programs.__file__
        # Dynamo resumes at the line of the graph break in the function it left
        assert first <= r.line < first + len(lines)
        assert any(gb.location.line == r.line for gb in exp.compile(c.parent).graph_breaks)
    assert all(c.resumes is None for c in exp.compiles if not c.is_resume)
    from explorer.panes import build_index

    names = {e.key: e.name for e in build_index(exp).compiles}
    assert {names[c.key] for c in resumes} == {f"resume data_dependent at line {r.line}"}


def test_user_code_is_all_but_torch_this_project_and_what_python_generates():
    import explorer

    for library in (torch.__file__, compiler.__file__, explorer.__file__, "<frozen runpy>"):
        assert not is_user_file(library), library
    assert not is_user_file("<string>")
    for user in (__file__, programs.__file__, "<ipython-input-3-0f41a3dd8c3b>"):
        assert is_user_file(user), user
    # an installed package is the user's code where torch.compile compiled code of it (a
    # transformers model), and tooling otherwise (pytest, IPython)
    assert not is_user_file(pytest.__file__)
    assert is_user_file(pytest.__file__, frozenset({pytest.__file__}))


def test_a_failure_names_the_innermost_user_line_of_its_traceback():
    def deep(x):
        return programs.pointwise(x).reshape(7)

    with pytest.raises(compiler.InputError) as info:
        compiler.explore(deep, torch.randn(4), backend="eager")
    line = inspect.getsourcelines(deep)[1] + 1
    assert f" at {__file__}:{line}: " in str(info.value)
