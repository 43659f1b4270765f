"""Live recompile on the notebook's own code: its helpers, a module instance with its
constructor arguments and weights, a library model's method, and state that cannot cross.

Each test defines its code in the test IPython shell, as a notebook does (so functions
and classes live in ``__main__`` and must cross to the worker by value), and reads the
outcome from Dynamo's own graph of each version: the ops it traced, the parameters and
buffers it lifted.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from conftest import ipython_shell, torch_state

BLOCK = '''
import threading, torch, explorer
def scale(t):
    return t * 3
class Block(torch.nn.Module):
    def __init__(self, n, act):
        super().__init__()
        self.lin = torch.nn.Linear(n, n)
        self.act = act
        self.register_buffer("shift", torch.full((n,), 0.5))
    def forward(self, x):
        return self.act(self.lin(x)) + self.shift
blk = Block(8, torch.nn.GELU())
x = torch.randn(2, 8)
'''


@pytest.fixture
def shell():
    ip = ipython_shell()
    ip.run_line_magic("load_ext", "explorer")
    made = set(ip.user_ns)
    yield ip
    for name in set(ip.user_ns) - made:
        if hasattr(ip.user_ns[name], "wait") and hasattr(ip.user_ns[name], "close"):
            ip.user_ns[name].close()  # a LiveExplorer: its worker processes
    ip.run_line_magic("unload_ext", "explorer")


def _run(ip, code: str) -> None:
    result = ip.run_cell(code)
    assert result.success, result.error_in_exec or result.error_before_exec


def _graph(w):
    """Dynamo's graph of the version on show: (op targets, placeholder names)."""
    nodes = w.view.exploration.compiles[0].graphs["dynamo_output_graph"].nodes
    return [str(n.target) for n in nodes if n.op != "placeholder"], [
        str(n.target) for n in nodes if n.op == "placeholder"
    ]


def test_a_module_instance_with_constructor_arguments_and_a_helper_compile_live(
    shell, tmp_path
):
    before = torch_state()
    _run(shell, BLOCK)
    _run(shell, 'w = explorer.live(blk, x, backend="aot_eager", debounce_ms=0)')
    w = shell.user_ns["w"]
    assert w.wait(300) and w.error is None, w.error
    assert w.source.startswith("class Block(torch.nn.Module):")
    ops, inputs = _graph(w)
    # the instance the notebook built: its Linear(8, 8), its GELU and its buffer
    assert "torch._C._nn.gelu" in ops
    assert {"L_self_modules_lin_parameters_weight_", "L_self_buffers_shift_"} <= set(inputs)
    state_file = w._engine._fixed.path
    edited = w.source.replace("return self.act(self.lin(x))", "return scale(self.lin(x))")
    w.source = edited
    assert w.wait(300) and w.error is None, w.error
    ops, inputs = _graph(w)
    assert "torch._C._nn.gelu" not in ops and "operator.mul" in ops  # scale's t * 3
    assert "L_self_buffers_shift_" in inputs and len(w.history) == 2
    # an edit of the source alone sends no state again
    assert w._engine._fixed.path == state_file
    # and the state's file has no name left to outlive the kernel: only its descriptor
    folder = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())
    assert not (folder / state_file.partition("?")[2]).exists()
    # the notebook's class is untouched: only the worker's copy was edited
    assert "act" in shell.user_ns["Block"].forward.__code__.co_names

    # a lock put on the module cannot cross: named by its variable and attribute
    _run(shell, "blk.guard = threading.Lock()")
    w.recompile()
    assert w.wait(60) and w.error is not None
    assert w.error.startswith(
        "blk.guard (_thread.lock) cannot be sent to the live compile worker: "
        "cannot pickle '_thread.lock' object."
    ), w.error
    assert len(w.history) == 2
    # the kernel goes on, and once the lock is off the module, the edit compiles again
    _run(shell, "del blk.guard\nok = blk(x).shape")
    assert shell.user_ns["ok"] == (2, 8)
    w.recompile()
    assert w.wait(300) and w.error is None, w.error

    # an open file held by a helper's global: named, with the helper that uses it
    _run(shell, f"LOG = open({str(tmp_path / 'log.txt')!r}, 'w')\n"
         "def logged(t):\n    print('step', file=LOG)\n    return t\n")  # fmt: skip
    w.source = edited.replace("scale(self.lin(x))", "logged(self.lin(x))")
    assert w.wait(60) and w.error is not None
    assert w.error.startswith(
        "LOG (a global that logged uses) (_io.TextIOWrapper) cannot be sent"
    ), w.error
    _run(shell, "LOG.close()")
    assert torch_state() == before


def test_a_library_models_method_is_live_edited(shell):
    pytest.importorskip("transformers")
    _run(shell, BLOCK)
    _run(shell, (
        "from transformers import GPT2Config, GPT2LMHeadModel\n"
        "from transformers.models.gpt2.modeling_gpt2 import GPT2MLP\n"
        "config = GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=64, n_positions=16,\n"
        "                    bos_token_id=0, eos_token_id=0)\n"
        "gpt = GPT2LMHeadModel(config).eval()\n"
        "ids = torch.randint(0, 64, (1, 8))\n"
        "original = GPT2MLP.forward\n"
        'w = explorer.live(gpt, ids, edit=GPT2MLP.forward, backend="aot_eager", debounce_ms=0)\n'
    ))  # fmt: skip
    w = shell.user_ns["w"]
    assert w.wait(300) and w.error is None, w.error
    assert w.source.startswith("def forward(self, hidden_states")
    ops, _ = _graph(w)
    # GPT-2's gelu_new: a tanh in each of the 2 blocks' MLP
    assert ops.count("torch.tanh") == 2 and "torch.relu" not in ops
    good = w.view.exploration
    # an edit that raises: its line, and the last good result kept
    lines = w.source.splitlines()
    at = next(i for i, line in enumerate(lines) if "self.act(" in line)
    w.source = w.source.replace("self.act(", "undefined_activation(")
    assert w.wait(300) and w.error is not None
    assert "undefined_activation" in w.error and w.editor.status["line"] == at + 1
    assert w.view.exploration is good
    # the activation changed in the patched forward: relu in both blocks, no tanh
    w.source = w.source.replace("undefined_activation(", "torch.relu(")
    assert w.wait(300) and w.error is None, w.error
    ops, _ = _graph(w)
    assert ops.count("torch.relu") == 2 and "torch.tanh" not in ops
    # the diff of the two good versions names the nodes that changed: the relu nodes
    summary = w.diff_view.view["summary"]
    relus = [n.name for n in w.view.exploration.compiles[0].graphs["dynamo_output_graph"].nodes
             if str(n.target) == "torch.relu"]  # fmt: skip
    assert len(relus) == 2 and all(name in summary for name in relus), summary
    # the kernel's class still has transformers' forward
    assert shell.user_ns["GPT2MLP"].forward is shell.user_ns["original"]


def test_a_compile_live_cell_calls_a_helper_and_an_edit_re_sends_only_changed_panes(shell):
    # the helper is an earlier cell's; a graph break makes two compiles, and the edit is
    # after the break, so the first compile's graph stays the same
    source = (
        "def f(x):\n    y = scale(torch.relu(x))\n    print('break')\n"
        "    return torch.sin(y) * 2\n"
    )
    _run(shell, "import torch\ndef scale(t):\n    return t * 3\nx = torch.randn(8)")
    shell.run_cell_magic("compile", "w --live --inputs x --backend aot_eager", source)
    w = shell.user_ns["w"]
    assert w.wait(300) and w.error is None, w.error
    ops, _ = _graph(w)
    assert ops[:2] == ["torch.relu", "operator.mul"]  # scale's t * 3, traced
    first, resume = (c.key for c in w.view.exploration.compiles)
    held = {k: w.view.pane_digest(k, "dynamo_output_graph") for k in (first, resume)}
    w.view.selection = {**w.view.selection, "compile": resume}
    w.source = source.replace("* 2", "* 3")
    assert w.wait(300) and w.error is None, w.error

    def ask(key: str) -> dict:  # what the front-end sends: the digest of the pane it holds
        reply, _ = w.view._pane({"compile": key, "pane": "dynamo_output_graph",
                                 "have": held[key]}, [])  # fmt: skip
        return reply

    assert ask(first) == {"unchanged": True, "digest": held[first]}
    changed = ask(resume)
    assert changed["digest"] != held[resume] and changed["data"]["kind"] == "graph"
    # the selection stays on the compile that still exists
    assert w.view.selection["compile"] == resume
