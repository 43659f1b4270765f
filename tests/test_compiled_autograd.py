"""Compiled autograd: the backward graph it captured is a compile of its own (``!0/...``),
live and from a TORCH_TRACE log, with the graph torch printed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import torch

import compiler

PROGRAM = """
import torch
import torch._dynamo.config

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
x = torch.randn(4, 8)


def train(x):
    loss = model(x).sum()
    loss.backward()  # inside the compiled function: compiled autograd captures it
    return loss


def run():
    with torch._dynamo.config.patch(compiled_autograd=True):
        return torch.compile(train, backend="aot_eager")(x)
"""


def _program(folder: Path):
    path = folder / "ca_program.py"
    path.write_text(textwrap.dedent(PROGRAM))
    namespace: dict = {"__name__": "ca_program", "__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return path, namespace["run"]


def _backward_compiles(exp):
    return [
        c
        for c in exp.compiles
        if c.compile_id.compiled_autograd_id is not None and "dynamo_output_graph" in c.graphs
    ]


def test_compiled_autograds_backward_graph_is_captured_live_and_from_a_trace(tmp_path):
    from torch._dynamo.utils import counters

    _, run = _program(tmp_path)
    counters.clear()
    with compiler.recording() as rec:
        run()
    live = rec.exploration()
    captured = _backward_compiles(live)
    assert captured, [str(c.compile_id) for c in live.compiles]
    # torch's own count of the graphs compiled autograd captured
    assert len(captured) == counters["compiled_autograd"]["captures"]
    for c in captured:
        graph = c.graphs["dynamo_output_graph"]
        assert graph.parse_error is None and graph.nodes
        assert "compiled_autograd" in graph.text  # its nodes come from compiled autograd

    trace_dir = tmp_path / "trace"
    code = f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import ca_program; ca_program.run()"
    env = {**os.environ, "TORCH_TRACE": str(trace_dir)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=300)
    loaded = compiler.load_trace(str(trace_dir), strict=True)
    from_trace = _backward_compiles(loaded)
    assert [str(c.compile_id) for c in from_trace] == [str(c.compile_id) for c in captured]
    for a, b in zip(captured, from_trace, strict=True):
        ops = [(n.op, n.target) for n in a.graphs["dynamo_output_graph"].nodes]
        assert ops == [(n.op, n.target) for n in b.graphs["dynamo_output_graph"].nodes]
    assert torch.is_grad_enabled()
