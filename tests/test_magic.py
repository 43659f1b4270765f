"""``%%compile`` and ``ExplorationWidget``, in a real IPython shell with real torch.compile."""

from __future__ import annotations

import json
import linecache
import subprocess
import sys
import textwrap
from pathlib import Path

import comm
import pytest
import torch
from conftest import ipython_shell
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import compiler
import explorer
from explorer.magics.compile_magic import CompileMagics
from explorer.widget import SELECTION_KEYS, ExplorationWidget

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def shell():
    ip = ipython_shell()
    ip.run_line_magic("load_ext", "explorer")
    yield ip
    ip.run_line_magic("unload_ext", "explorer")


@pytest.fixture
def ip(shell):
    shell.user_ns.update(torch=torch, x=torch.arange(4.0))
    for name in ("exp", "exp2", "y", "z", "f", "g", "Net", "net", "_"):
        shell.user_ns.pop(name, None)
    return shell


def run(ip, line: str, cell: str):
    """Run ``%%compile line`` on ``cell``; returns the captured stdout, stderr, displays."""
    with capture_output() as io:
        ip.run_cell_magic("compile", line, textwrap.dedent(cell))
    return io


def widgets(io) -> list[dict]:
    return [o.data[WIDGET_MIME] for o in io.outputs if WIDGET_MIME in o.data]


def in_cell(ip, filename: str) -> bool:
    """Whether ``filename`` is a cell kept in IPython's compiler cache (shown as ``Cell In[N]``)."""
    return ip.compile.format_code_name(filename) is not None


def node(exp: compiler.Exploration, compile_index: int, name: str) -> compiler.Node:
    found = exp.compiles[compile_index].graphs["dynamo_output_graph"].node(name)
    assert found is not None, f"no node {name} in {exp.compiles[compile_index].label}"
    return found


# -- shape (a): a snippet, compiled as a function of what it reads ---------------------------


def test_snippet_is_compiled_as_a_function_of_the_tensors_it_reads(ip):
    io = run(ip, "exp --backend eager", "y = torch.sin(x) + 1\ny * 2\n")
    exp = ip.user_ns["exp"]
    first = exp.compiles[0]
    assert first.code_name.startswith("cell_")
    assert in_cell(ip, first.filename)
    assert first.graphs["dynamo_output_graph"].nodes[0].name == "l_x_"
    sin = node(exp, 0, "sin")
    assert (sin.source.line, sin.source.code) == (1, "y = torch.sin(x) + 1")
    assert linecache.getline(sin.source.filename, 2) == "y * 2\n"
    assert torch.equal(ip.user_ns["y"], torch.sin(torch.arange(4.0)) + 1)
    assert torch.equal(ip.user_ns["_"], ip.user_ns["y"] * 2)  # shown as the cell's result
    assert len(widgets(io)) == 1


def test_snippet_with_a_graph_break_keeps_its_print_and_points_at_its_lines(ip):
    io = run(ip, "exp --backend eager", "y = x.cos()\nprint('between')\nz = y + 1\n")
    exp = ip.user_ns["exp"]
    assert io.stdout.startswith("between\n")
    assert len(exp.compiles) == 2 and exp.compiles[1].is_resume
    (brk,) = exp.graph_breaks
    assert brk.location.line == 2 and in_cell(ip, brk.location.filename)
    assert node(exp, 1, "z").source.line == 3
    assert torch.equal(ip.user_ns["z"], torch.arange(4.0).cos() + 1)
    assert "_" not in ip.user_ns  # no trailing expression, no result


def test_snippet_that_reassigns_what_it_reads_updates_the_notebook_variable(ip):
    ip.user_ns["n"] = 3
    run(ip, "exp --backend eager --no-view", "x = x * n\nif x.sum() > 0:\n    w = x + 1\n")
    assert torch.equal(ip.user_ns["x"], torch.arange(4.0) * 3)
    assert torch.equal(ip.user_ns["w"], torch.arange(4.0) * 3 + 1)


def test_snippet_ending_in_a_semicolon_shows_no_result(ip):
    run(ip, "--backend eager --no-view exp", "x.sin();\n")
    assert "_" not in ip.user_ns
    assert ip.user_ns["exp"].compiles


# -- shape (b): a cell that defines and calls -----------------------------------------------


PROGRAM = """\
def helper(t):
    return t * 2

def f(t):
    u = helper(t).relu()
    print("halfway")
    return u + 1

z = f(x)
z.sum()
"""


def test_program_compiles_the_target_while_the_cell_runs_then_restores_it(ip):
    io = run(ip, "exp --backend eager --target f", PROGRAM)
    exp = ip.user_ns["exp"]
    assert exp.target == "f" and exp.options.backend == "eager"
    assert exp.compiles[0].code_name == "f"
    (brk,) = exp.graph_breaks
    assert (brk.location.line, brk.location.code) == (6, 'print("halfway")')
    mul = node(exp, 0, "mul")
    assert mul.source.line == 2 and mul.source.function == "helper"
    assert "halfway" in io.stdout
    assert torch.equal(ip.user_ns["_"], (torch.arange(4.0) * 2).relu().sum() + 4)
    assert in_cell(ip, ip.user_ns["f"].__code__.co_filename)  # plain again
    assert len(widgets(io)) == 1


def test_program_with_one_definition_compiles_it_without_target(ip):
    run(ip, "exp --backend eager --no-view", "def g(t):\n    return t.exp()\nz = g(x)\n")
    assert ip.user_ns["exp"].target == "g"
    assert [c.code_name for c in ip.user_ns["exp"].compiles] == ["g"]


def test_program_with_several_definitions_and_no_target_is_a_usage_error(ip):
    with pytest.raises(UsageError, match=r"the cell defines helper, f: pick the one"):
        run(ip, "--backend eager", PROGRAM)


def test_target_may_be_defined_in_an_earlier_cell(ip):
    ip.run_cell("def g(t):\n    return t.tanh() * 3\n")
    run(ip, "exp --backend eager --target g --no-view", "z = g(x) + 1\n")
    assert [c.code_name for c in ip.user_ns["exp"].compiles] == ["g"]


def test_module_class_target_compiles_forward_and_restores_the_class(ip):
    cell = """\
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 2)

        def forward(self, t):
            return torch.relu(self.lin(t))

    net = Net()
    y = net(x)
    """
    run(ip, "exp --backend aot_eager --no-view", cell)
    exp = ip.user_ns["exp"]
    assert exp.target == "Net"
    assert [c.code_name for c in exp.compiles] == ["forward"]
    assert "aot_forward_graph" in exp.compiles[0].graphs
    assert in_cell(ip, ip.user_ns["Net"].forward.__code__.co_filename)


def test_unknown_target_is_a_usage_error(ip):
    with pytest.raises(UsageError, match=r"--target nope: no such name in the cell"):
        run(ip, "--target nope", "y = x + 1\n")


# -- options --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "expected"), [("--dynamic", True), ("--no-dynamic", False), ("", None)]
)
def test_dynamic_flags_are_three_way(ip, flag, expected):
    run(ip, f"exp --backend eager --no-view {flag}", "x + 1\n")
    assert ip.user_ns["exp"].options.dynamic is expected


def test_options_is_a_dict_expression_evaluated_in_the_notebook(ip):
    run(ip, "exp --backend eager --no-view --options \"{'trace.enabled': False}\"", "x + 1\n")
    assert ip.user_ns["exp"].options.options == {"trace.enabled": "False"}
    ip.user_ns["opts"] = {"max_autotune": False}
    run(ip, "exp --backend eager --no-view --options opts", "x + 1\n")
    assert ip.user_ns["exp"].options.options == {"max_autotune": "False"}


def test_options_that_are_not_a_dict_are_a_usage_error(ip):
    with pytest.raises(UsageError, match=r"--options \[1\]: expected a dict"):
        run(ip, "--options [1]", "x + 1\n")
    with pytest.raises(UsageError, match=r"--options nothing_here: evaluating it failed"):
        run(ip, "--options nothing_here", "x + 1\n")


def test_unknown_flag_and_unknown_backend_are_usage_errors(ip):
    with pytest.raises(UsageError, match=r"unrecognized arguments: --bogus"):
        run(ip, "--bogus", "x + 1\n")
    with pytest.raises(UsageError, match=r"unknown backend 'nope'"):
        run(ip, "--backend nope", "x + 1\n")
    with pytest.raises(UsageError, match=r"unknown backend 'nope'. Known backends: "):
        run(ip, "--backend nope --target f", PROGRAM)  # the same check for both shapes


@pytest.mark.slow
def test_inductor_with_options_records_the_generated_kernels(ip):
    run(ip, "exp --no-view --options \"{'trace.enabled': False}\"", "torch.sin(x) * 2\n")
    exp = ip.user_ns["exp"]
    assert exp.options.backend == "inductor"
    assert exp.compiles[0].kernels()[0].language == "cpp"


@pytest.mark.slow
def test_compile_twice_on_one_cell_and_after_a_plain_compile_keeps_every_kernel(ip):
    # issue 17's notebook workflow with Inductor's caches on, as a user has them:
    # a plain compiled cell above, then the same model under %%compile, twice
    cell = "def g(t):\n    return (t.cos() * 3).relu()\nz = g(x)\n"
    ip.run_cell("plain = torch.compile(lambda t: (t.cos() * 3).relu())\nplain(x)")
    names = []
    for _ in range(2):
        run(ip, "exp --no-view --keep-caches", cell)
        (kernel,) = [k for k in ip.user_ns["exp"].compiles[0].kernels() if k.language == "cpp"]
        assert kernel.source.strip(), kernel.name
        names.append(kernel.name)
    assert names[0] == names[1]
    again = ip.run_cell("plain(x)")
    assert again.error_in_exec is None, again.error_in_exec
    assert torch.allclose(again.result, (ip.user_ns["x"].cos() * 3).relu())


# -- failures -------------------------------------------------------------------------------


def _assert_no_explorer_frames(text: str) -> None:
    assert "explorer/" not in text and "compiler/" not in text
    assert "compile_magic.py" not in text and "explore.py" not in text


def test_fullgraph_on_a_snippet_with_a_print_is_one_paragraph_and_no_traceback(ip):
    io = run(ip, "exp --backend eager --fullgraph", "y = x * 2\nprint(y)\ny + 1\n")
    assert io.stderr.startswith(
        "CompileError: fullgraph=True, but Dynamo hit a graph break at line 2 of the cell: "
    )
    assert len(io.stderr.strip().splitlines()) == 1
    assert "Traceback" not in io.stdout + io.stderr
    _assert_no_explorer_frames(io.stdout + io.stderr)
    assert "exp" not in ip.user_ns
    assert isinstance(sys.last_value, Exception)  # %tb shows torch's full message


def test_fullgraph_on_a_program_names_the_line_of_the_graph_break(ip):
    io = run(ip, "exp --backend eager --fullgraph --target f", PROGRAM)
    assert io.stderr.startswith(
        "CompileError: fullgraph=True, but Dynamo hit a graph break at line 6 of the cell: "
    )
    assert "Remove fullgraph=True" in io.stderr
    assert "Traceback" not in io.stdout + io.stderr
    assert in_cell(ip, ip.user_ns["f"].__code__.co_filename)


def test_cell_that_raises_shows_the_users_traceback_and_keeps_earlier_results(ip):
    run(ip, "exp --backend eager --no-view", "x + 1\n")
    earlier = ip.user_ns["exp"]
    io = run(
        ip, "exp --backend eager", "def f(t):\n    return t + 1\nf(x)\nraise ValueError('boom')\n"
    )
    assert io.stderr.startswith(
        "InputError: the cell raised ValueError at line 4 of the cell: boom. "
    )
    assert "exp was left as it was" in io.stderr
    assert "ValueError: boom" in io.stdout  # IPython's traceback, the user's frames only
    assert "----> 4 raise ValueError('boom')" in io.stdout
    _assert_no_explorer_frames(io.stdout)
    assert ip.user_ns["exp"] is earlier
    assert len(widgets(io)) == 1  # the compile of f before the failure
    assert ip.run_cell("1 + 1").result == 2  # the shell goes on


def test_snippet_that_fails_eagerly_is_an_input_error_with_the_users_frame(ip):
    io = run(ip, "exp --backend eager", "y = x.sin()\nx.reshape(7)\n")
    assert io.stderr.startswith(
        "InputError: the cell fails on these inputs even without torch.compile: "
        "RuntimeError at line 2 of the cell: shape '[7]' is invalid for input of size 4"
    )
    _assert_no_explorer_frames(io.stdout + io.stderr)
    assert "exp" not in ip.user_ns


def test_show_raises_the_same_clear_error_in_python():
    def f(t):
        print("no")
        return t

    with pytest.raises(compiler.CompileError, match=r"^fullgraph=True, but Dynamo hit") as info:
        explorer.show(f, torch.ones(2), backend="eager", fullgraph=True)
    assert info.value.exploration is not None


# -- the extension ----------------------------------------------------------------------------


def test_unload_removes_the_magic_and_load_brings_it_back(shell):
    shell.run_line_magic("unload_ext", "explorer")
    try:
        assert "compile" not in shell.magics_manager.magics["cell"]
        with pytest.raises(UsageError, match="Cell magic `%%compile` not found"):
            shell.run_cell_magic("compile", "", "1\n")
    finally:
        shell.run_line_magic("load_ext", "explorer")
    assert "compile" in shell.magics_manager.magics["cell"]


def test_help_documents_every_option():
    doc = CompileMagics.compile_cell.__doc__
    assert doc.splitlines()[0].startswith("::")  # magic_arguments' usage block
    for option in (
        "name", "--target", "--backend", "--mode", "--dynamic", "--no-dynamic", "--fullgraph",
        "--options", "--keep-caches", "--no-decompile", "--no-reset", "--no-view",
    ):  # fmt: skip
        assert option in doc, option
    assert "Compile the cell with torch.compile" in doc


def test_importing_explorer_imports_no_ipython_or_widgets(subprocess_env):
    code = (
        "import sys, explorer; "
        "print(sorted({'IPython', 'anywidget', 'ipywidgets', 'torch'} & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=subprocess_env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


# -- the widget ---------------------------------------------------------------------------------


class FrontEnd(comm.DummyComm):
    """The browser side of the widget's comm: keeps what the kernel sends it."""

    def __init__(self) -> None:
        self.sent: list[tuple[dict, list]] = []
        super().__init__()

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        self.sent.append((data, buffers))


def _SIN_PLUS_ONE(t):
    return t.sin() + 1


@pytest.fixture
def two_explorations():
    one = compiler.explore(_SIN_PLUS_ONE, torch.randn(4), backend="eager")

    def broken(t):
        t = t * 2
        print("break")
        return t.cos()

    two = compiler.explore(broken, torch.randn(4), backend="eager")
    return one, two


def test_widget_syncs_the_view_and_a_small_selection(two_explorations):
    one, _ = two_explorations
    w = ExplorationWidget(one)
    assert w.exploration is one
    assert [c["key"] for c in w.index["compiles"]] == ["0/0"]
    assert "panes" in w.index["compiles"][0] and "nodes" not in json.dumps(w.index)
    assert set(w.selection) == set(SELECTION_KEYS)
    assert w.selection["compile"] == "0/0"
    data, _ = w._repr_mimebundle_()
    assert data["text/plain"] == repr(w) == f"ExplorationWidget({one!r})"
    assert WIDGET_MIME in data


def test_select_opens_a_pane_by_id_and_names_the_panes_there_are(two_explorations):
    _, two = two_explorations
    w = ExplorationWidget(two)  # a graph break: a resume function, whose bytecode Dynamo logs
    resume = next(c for c in two.compiles if c.is_resume)
    assert w.select("bytecode", resume.key) is w
    assert w.selection == {
        **dict.fromkeys(SELECTION_KEYS),
        "compile": resume.key,
        "stage": "bytecode",
    }
    # without a compile: the one on show when it has the pane
    assert w.select("dynamo_output_graph").selection["compile"] == resume.key
    with pytest.raises(ValueError, match=r"no pane 'autotuning'.*dynamo_output_graph"):
        w.select("autotuning")
    with pytest.raises(ValueError, match="no compile '9/9'"):
        w.select("bytecode", "9/9")


def test_update_replaces_the_index_in_place_and_keeps_what_still_exists(two_explorations):
    one, two = two_explorations
    w = ExplorationWidget(one)
    graph = w.pane("0/0", "dynamo_output_graph")
    sin = graph["sources"][graph["nodes"]["source"][graph["nodes"]["name"].index("sin")]]
    chosen = {**w.selection, "stage": "dynamo_output_graph", "node": "sin", "src": sin["src"]}
    w.selection = chosen
    # the same program again (a recompile after an edit): everything is still there
    w.update(compiler.explore(_SIN_PLUS_ONE, torch.randn(4), backend="eager"))
    assert w.selection == chosen
    # another program: the compile and stage are kept, the node and line it lacks are not
    w.update(two)
    assert w.exploration is two
    assert [c["key"] for c in w.index["compiles"]] == ["0/0", "1/0"]
    assert w.selection == {**chosen, "node": None, "src": None}


def _invoke(w: ExplorationWidget, name: str, msg: dict, call: int) -> None:
    """What the front-end's ``experimental.invoke(name, msg)`` arrives as."""
    w._handle_custom_msg(
        {"id": f"call-{call}", "kind": "anywidget-command", "name": name, "msg": msg}, []
    )


def _replies(front: FrontEnd) -> dict[str, dict]:
    sent = [d["content"] for d, _ in front.sent if d.get("method") == "custom"]
    assert all(r["kind"] == "anywidget-command-response" for r in sent)
    return {r["id"]: r["response"] for r in sent}


def test_a_pane_command_is_answered_with_the_pane_built_once(two_explorations):
    one, _ = two_explorations
    w = ExplorationWidget(one)
    front = FrontEnd()
    w.comm = front
    for call in range(2):
        _invoke(w, "_pane", {"compile": "0/0", "pane": "dynamo_output_graph"}, call)
    _invoke(w, "_pane", {"compile": "0/0", "pane": "nope"}, 2)
    replies = _replies(front)
    assert sorted(replies) == ["call-0", "call-1", "call-2"]
    assert replies["call-0"]["data"] is replies["call-1"]["data"]  # built once, then cached
    graph = replies["call-0"]["data"]
    assert graph["kind"] == "graph" and graph["nodes"]["name"]
    assert replies["call-2"] == {
        "error": "could not build pane nope of compile 0/0: compile 0/0 has no pane 'nope'"
    }


def test_the_export_command_is_answered_with_the_html_page(two_explorations):
    one, _ = two_explorations
    w = ExplorationWidget(one)
    front = FrontEnd()
    w.comm = front
    _invoke(w, "_export_html", {}, 0)
    w._handle_custom_msg({"type": "something_else"}, [])  # not a command: no reply
    (reply,) = _replies(front).values()
    assert reply["data"] == w.to_html()
    assert "<html" in reply["data"].lower()


def test_widget_refuses_what_is_not_an_exploration():
    with pytest.raises(TypeError, match=r"shows a compiler.Exploration, not a dict"):
        ExplorationWidget({})


def test_load_reads_a_trace_directory_and_an_exploration_json(tmp_path):
    trace = Path(__file__).parent / "data" / "traces" / "graph_break_eager"
    w = explorer.load(trace)
    assert w.exploration == compiler.load_trace(trace)
    saved = tmp_path / "exp.json"
    saved.write_text(w.exploration.to_json(), encoding="utf-8")
    assert explorer.load(saved).exploration == w.exploration
    with pytest.raises(compiler.TraceFormatError):
        explorer.load(tmp_path / "missing")


def test_target_that_is_never_called_says_nothing_was_compiled(ip):
    io = run(ip, "exp --backend eager --no-view", "def g(t):\n    return t + 1\n")
    assert io.stderr == (
        "%%compile: nothing was compiled: g was not called while the cell ran (or ran no tensor "
        "operations). Call it in the cell, after its definition.\n"
    )
    assert ip.user_ns["exp"].compiles == ()


def test_a_cells_functions_keep_their_source_and_the_report_skips_the_shells_frames(ip):
    import inspect

    from explorer.report import summarize

    run(ip, "exp --backend eager --no-view", "def g(t):\n    return t.exp()\nz = g(x)\n")
    exp = ip.user_ns["exp"]
    assert inspect.getsource(ip.user_ns["g"]) == "def g(t):\n    return t.exp()\n"
    # the compile was reached from the cell's line that called g (torch's own record drops
    # that frame; the capture keeps it), not from IPython's frames that ran the cell
    (reached,) = [ln for ln in summarize(exp).splitlines() if ln.startswith("- **Reached from:**")]
    assert reached.endswith(":3` in `<module>`: `z = g(x)`"), reached
    assert "IPython" not in reached and "interactiveshell" not in reached


def test_the_compiler_runs_a_cell_without_ipython():
    import ast

    from compiler.capture.cell import explore_cell

    ns = {"torch": torch, "x": torch.arange(4.0)}
    cell = "def g(t):\n    return t.exp()\nz = g(x)\nz + 1\n"
    eager = compiler.CompileSpec(backend="eager")
    run = explore_cell(ast.parse(cell), "<cell>", ns, target="g", spec=eager)
    assert [c.code_name for c in run.exploration.compiles] == ["g"]
    assert run.has_value and torch.equal(run.value, torch.arange(4.0).exp() + 1)
    assert ns["g"].__code__.co_filename == "<cell>"  # the plain function, put back
    with pytest.raises(compiler.TargetError, match=r"z is a Tensor; compile a function"):
        explore_cell(ast.parse("z + 1\n"), "<cell2>", ns, target="z", spec=eager)
