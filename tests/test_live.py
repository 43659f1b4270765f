"""Live recompiles through the worker process: real compiles, real edits."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import ipython_shell, torch_state

import explorer

F1 = "def f(x):\n    y = torch.relu(x)\n    return y * 2\n"
# a reduction along another dim and a matmul: more kernels than F1's single one
F2 = "def f(x):\n    y = torch.relu(x @ x)\n    return y.sum(0) * x\n"



@pytest.fixture
def live_widget():
    made = []

    def make(*args, **kwargs):
        w = explorer.live(*args, **kwargs)
        made.append(w)
        return w

    yield make
    for w in made:
        w.close()


def _output_code_text(view) -> str:
    """The output-code panes the explorer builds for its compiles, as the page receives them."""
    panes = [
        view.pane(c["key"], p["id"])
        for c in view.index["compiles"]
        for p in c["panes"]
        if p["stage"] == "inductor_output_code"
    ]
    return json.dumps(panes)


@pytest.mark.slow
def test_an_edit_that_changes_fusion_changes_the_kernels_in_the_view(live_widget):
    w = live_widget(F1, torch.randn(16, 16), debounce_ms=50)
    assert w.wait(300) and w.error is None
    first = w.view.exploration
    before = [k.name for c in first.compiles for k in c.kernels()]
    assert all(name in _output_code_text(w.view) for name in before)
    w.source = F2
    assert w.wait(300) and w.error is None
    after = [k.name for c in w.view.exploration.compiles for k in c.kernels()]
    assert len(after) != len(before)
    view_text = _output_code_text(w.view)
    assert all(name in view_text for name in after)
    assert w.history == (first, w.view.exploration)
    summary = w.diff_view.view["summary"]
    assert summary.startswith(f"{len(before)} kernel{'s' * (len(before) != 1)} -> {len(after)}")


def test_a_syntax_error_keeps_the_last_good_result_and_points_at_its_line(live_widget):
    w = live_widget(F1, torch.randn(8), backend="aot_eager", debounce_ms=50)
    assert w.wait(300) and w.error is None
    good = w.view.exploration
    w.source = "def f(x):\n    y = torch.relu(x)\n    return (y * 2\n"
    assert w.wait(120)
    assert w.error is not None and w.error.startswith("line 3: SyntaxError")
    assert w.editor.status["line"] == 3 and w.editor.status["stale"]
    assert w.view.exploration is good
    assert w.history == (good,)
    w.source = F1.replace("* 2", "* 3")
    assert w.wait(120) and w.error is None and len(w.history) == 2


def test_rapid_edits_show_only_the_last_one(live_widget):
    w = live_widget(F1, torch.randn(8), backend="aot_eager", debounce_ms=0)
    assert w.wait(300)
    for i in range(4):
        w.source = f"def f(x):\n    return torch.relu(x) + {i}\n"
    w.source = "def f(x):\n    return torch.sin(x)\n"
    assert w.wait(300) and w.error is None
    targets = [n.target for n in w.view.exploration.compiles[0].graphs["dynamo_output_graph"].nodes]
    assert "torch.sin" in targets
    # the initial version, then only the last edit: no cancelled edit's result was delivered
    assert len(w.history) == 2 and w.history[-1] is w.view.exploration


def test_a_graph_break_under_fullgraph_is_an_error_at_the_users_line(live_widget):
    w = live_widget(F1, torch.randn(8), backend="aot_eager", fullgraph=True, debounce_ms=0)
    assert w.wait(300) and w.error is None
    w.source = (
        "def f(x):\n    y = torch.relu(x)\n    if y.sum() > 0:\n        y = y * 2\n    return y\n"
    )
    assert w.wait(300)
    assert w.error is not None and w.error.startswith("line 3: fullgraph=True, but Dynamo hit")
    assert w.editor.status["line"] == 3 and len(w.history) == 1


def test_an_input_that_cannot_be_sent_is_a_clear_error(live_widget):
    w = live_widget(F1, (i for i in range(3)), backend="eager")
    assert w.wait(30)
    assert w.error == (
        "input 1 (generator) cannot be sent to the live compile worker: it does not pickle "
        "(cannot pickle 'generator' object). Pass tensors, numbers, lists, dicts or other "
        "picklable values."
    )
    assert w.history == ()


def test_a_hanging_edit_is_stopped_and_the_next_edit_compiles(live_widget):
    w = live_widget(F1, torch.randn(4), backend="aot_eager", debounce_ms=0, timeout=20)
    assert w.wait(300) and w.error is None
    w.source = "def f(x):\n    while True:\n        pass\n"
    assert w.wait(120)
    assert w.error is not None and "longer than 20 s and was stopped" in w.error
    assert w.editor.status["line"] in (2, 3)  # the loop Dynamo was tracing when stopped
    w.source = "def f(x):\n    return x.cos()\n"
    assert w.wait(300) and w.error is None


def test_a_worker_crash_is_shown_at_its_line_and_the_next_edit_compiles(live_widget):
    w = live_widget(F1, torch.randn(4), backend="eager", debounce_ms=0)
    assert w.wait(300) and w.error is None
    good = w.view.exploration
    w.source = "import ctypes\ndef f(x):\n    ctypes.string_at(0)\n    return x\n"  # a segfault
    assert w.wait(120)
    assert w.error is not None and "the live compile worker died" in w.error
    assert w.editor.status["line"] == 3 and w.view.exploration is good
    w.source = F1
    assert w.wait(300) and w.error is None


def test_live_compiles_leave_the_users_torch_state_alone(live_widget):
    before = torch_state()
    counters = dict(torch._dynamo.utils.counters["stats"])
    w = live_widget(F1, torch.randn(4), backend="aot_eager")
    assert w.wait(300) and w.error is None
    assert torch_state() == before
    assert dict(torch._dynamo.utils.counters["stats"]) == counters


def test_a_bad_mode_gets_the_one_option_checks_error_before_any_worker_starts():
    from IPython.core.error import UsageError

    import compiler

    with pytest.raises(compiler.OptionError) as checked:
        compiler.CompileSpec(mode="fast").check()
    with pytest.raises(compiler.OptionError) as given:
        explorer.live(F1, torch.randn(4), mode="fast")
    assert str(given.value) == str(checked.value)
    assert "unknown mode 'fast'. Known modes: " in str(given.value)
    ip = ipython_shell()
    ip.run_line_magic("load_ext", "explorer")
    try:
        ip.user_ns["x"] = torch.randn(8)
        with pytest.raises(UsageError) as magic:
            ip.run_cell_magic("compile", "--live --inputs x --mode fast", F1)
        assert str(magic.value) == str(checked.value)
    finally:
        ip.run_line_magic("unload_ext", "explorer")


def test_a_bad_mode_from_the_controls_is_the_checks_error_and_compiles_nothing(live_widget):
    import compiler

    w = live_widget(F1, torch.randn(8), backend="eager", debounce_ms=0)
    assert w.wait(300) and w.error is None
    with pytest.raises(compiler.OptionError) as checked:
        compiler.CompileSpec(backend="eager", mode="fast").check()
    w.editor.options = {"backend": "eager", "mode": "fast", "dynamic": None, "fullgraph": False}
    assert w.wait(60)
    assert w.error == str(checked.value) and w.editor.status["state"] == "error"
    assert len(w.history) == 1
    w.editor.options = {"backend": "eager", "mode": None, "dynamic": True, "fullgraph": False}
    assert w.wait(300) and w.error is None and len(w.history) == 2
    assert w.history[-1].options.dynamic is True


def test_compile_live_magic_makes_the_cell_an_editor_on_its_inputs():
    from IPython.core.error import UsageError
    ip = ipython_shell()
    ip.run_line_magic("load_ext", "explorer")
    try:
        ip.user_ns["x"] = torch.randn(8)
        with pytest.raises(UsageError, match=r"--live needs the example inputs: --inputs EXPR"):
            ip.run_cell_magic("compile", "--live", F1)
        ip.run_cell_magic("compile", "w --live --inputs x --backend aot_eager", F1)
        w = ip.user_ns["w"]
        try:
            assert w.wait(300) and w.error is None
            assert w.editor.magic_line == "%%compile w --live --inputs x --backend aot_eager"
            assert w.source == F1 and len(w.history) == 1
        finally:
            w.close()
    finally:
        ip.run_line_magic("unload_ext", "explorer")


def test_the_editors_requests_are_anywidget_commands(live_widget):
    import comm

    class FrontEnd(comm.DummyComm):  # the browser side of the editor's comm
        def __init__(self) -> None:
            self.sent: list[dict] = []
            super().__init__()

        def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
            self.sent.append(data)

    w = live_widget(F1, torch.randn(8), backend="aot_eager", debounce_ms=50)
    assert w.wait(300) and w.error is None
    first = w.view.exploration
    front = FrontEnd()
    w.editor.comm = front

    def invoke(call: int, name: str, msg: dict) -> None:  # what experimental.invoke sends
        command = {"id": str(call), "kind": "anywidget-command", "name": name, "msg": msg}
        w.editor._handle_custom_msg(command, [])

    invoke(0, "_edit", {"text": F1.replace("* 2", "* 3")})
    assert w.wait(120) and w.error is None and len(w.history) == 2
    assert w.editor.shown == 2
    invoke(1, "_show", {"version": 1})
    assert w.editor.shown == 1 and w.view.exploration is first
    replies = [d["content"] for d in front.sent if d.get("method") == "custom"]
    assert [(r["id"], r["kind"], r["response"]) for r in replies] == [
        ("0", "anywidget-command-response", {}),
        ("1", "anywidget-command-response", {}),
    ]
