"""The line scanner, the one parser of graph text in the product, reads every graph as
Python's own ``ast`` does.

Differential: every graph the suite holds or captures (the trace of tests/data/traces,
the notebook and advisor recordings, a 2-layer transformers GPT-2 training step,
``torch.cond`` branches and flex_attention score functions through Dynamo, AOT and
Inductor, an exported program) and, where ``benchmarks/model_traces.py`` made them, the
real-model benchmark traces, is parsed by ``parse_nodes`` and by the ``ast`` oracle
(tests/graph_text_oracle.py), and the (nodes, parse error) pairs compared. Hand-made
texts then push what torch does not print: the scanner gives the oracle's nodes or a
parse error naming the line, never other nodes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from graph_text_oracle import parse_nodes_with_ast

import compiler
from compiler.parse.graph_text import parse_nodes

ROOT = Path(__file__).resolve().parent.parent
# where benchmarks/model_traces.py writes by default; TCE_TRACES names another folder
TRACES = Path(os.environ.get("TCE_TRACES", ROOT.parent / "traces"))
BENCHMARK_TRACES = ("gpt2_train", "bert_infer", "resnet_infer", "t5_infer")


def _texts(exp: compiler.Exploration) -> list[str]:
    return [
        g.text
        for c in exp.compiles
        for g in [*c.graphs.values(), *(g for oc in c.output_code for g in oc.graphs.values())]
        if g.text
    ]


def _assert_same(texts: list[str]) -> None:
    """Both parsers on every text: the same nodes, and no error (these are real graphs)."""
    assert texts
    for text in texts:
        nodes, error = parse_nodes(text)
        assert error is None, error
        assert (nodes, error) == parse_nodes_with_ast(text)


def test_the_scanner_reads_every_graph_of_a_real_trace_as_ast_does():
    _assert_same(
        _texts(compiler.load_trace(ROOT / "tests" / "data" / "traces" / "graph_break_eager"))
    )


RECORDINGS = sorted(
    p
    for folder in (
        ROOT / "notebooks" / "recordings",
        ROOT / "tests" / "advisor_corpus" / "recordings",
    )
    for p in folder.glob("*.json")
    # the machine's description and torch's facts measured apart: not Explorations
    if p.name not in ("environment.json", "advisor_models_gpu_facts.json")
)


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda p: p.stem)
def test_the_scanner_reads_the_graphs_of_each_recording_as_ast_does(recording):
    _assert_same(_texts(compiler.Exploration.from_json(recording.read_text())))


def test_the_scanner_reads_a_gpt2_training_steps_graphs_as_ast_does():
    pytest.importorskip("transformers")
    import programs

    texts = _texts(compiler.explore(*programs.gpt2_training_step(2), backend="aot_eager"))
    assert sum(t.count("\n") for t in texts) > 1000  # joint graph included
    _assert_same(texts)


def _cond(x):
    return torch.cond(x.sum() > 0, lambda x: x.sin() + 1, lambda x: x.cos() * 2, (x,))


def _score(score, b, h, q, kv):
    return score + (q - kv) * 0.5


def _flex(q, k, v):
    from torch.nn.attention.flex_attention import flex_attention

    return flex_attention(q, k, v, score_mod=_score)


def _flex_inputs():
    return tuple(torch.randn(1, 2, 16, 8) for _ in range(3))


def _submodules(texts: list[str]) -> set[str]:
    return {n.module for text in texts for n in parse_nodes(text)[0]} - {""}


def test_the_scanner_reads_higher_order_op_subgraphs_as_ast_does():
    """``torch.cond`` branches and a flex_attention score function are nested classes;
    flex_attention's graph holds a dict display and an in-place subscript store."""
    cond = _texts(compiler.explore(_cond, torch.randn(4), backend="aot_eager"))
    flex = _texts(compiler.explore(_flex, *_flex_inputs(), backend="aot_eager"))
    assert {"cond_true_0", "cond_false_0"} <= _submodules(cond)
    assert "score_mod_0" in _submodules(flex)
    assert any("] = " in t and "{'" in t for t in flex)
    _assert_same(cond + flex)


def _leaf(t):
    return torch.nn.functional.gelu(t) * 1.5


def test_the_scanner_reads_a_nonstrict_trace_call_as_torch_built_it():
    """A ``nonstrict_trace`` function is one opaque call whose inputs are attributes torch
    prints with an unquoted type (``f_callable : torch._higher_order_ops...``)."""
    received = []

    def backend(gm, example_inputs):
        received.append([(n.op, n.name) for n in gm.graph.nodes])
        return gm.forward

    opaque = torch._dynamo.nonstrict_trace(_leaf)
    exp = compiler.explore(lambda t: opaque(t + 1).sum(), torch.randn(8), backend=backend)
    graph = exp.compiles[0].graphs["dynamo_output_graph"]
    assert " : torch." in graph.text
    assert [(n.op, n.name) for n in graph.nodes] == received[0]
    assert {n.annotation for n in graph.nodes if n.op == "get_attr"} >= {
        "torch.utils._pytree.TreeSpec"
    }
    _assert_same([graph.text])


def _asserted(x, n):
    k = n.item()
    torch._check(k >= 0)
    return x * k


def test_the_scanner_reads_runtime_assertions_as_ast_does():
    """A runtime assertion's message quotes a node's name inside a double-quoted string."""
    with torch._dynamo.config.patch(capture_scalar_outputs=True):
        exp = compiler.explore(_asserted, torch.randn(4), torch.tensor(3), backend="aot_eager")
    texts = _texts(exp)
    assert any("_assert_scalar" in t for t in texts)
    if not any("node '" in t for t in texts):
        pytest.skip(f"torch {torch.__version__} names no node in its runtime assertions")
    _assert_same(texts)


def _operators(x):
    y = x * -1 + (-x) @ x.T
    y += 1
    y //= 2
    return y, 2**-x, x[..., None]


def test_the_scanner_reads_the_operators_torch_prints_as_ast_does():
    """A negative operand (``x * -1``) and in-place operators (``y //= 2;  y_1 = y``)."""
    texts = _texts(compiler.explore(_operators, torch.randn(3, 3), backend="aot_eager"))
    assert any(" * -1" in t and " //= 2;" in t for t in texts)
    _assert_same(texts)


class _Branching(torch.nn.Module):
    def forward(self, x):
        return _cond(x)


def test_the_scanner_reads_an_exported_programs_graphs_as_ast_does():
    exp = compiler.explore_export(_Branching(), (torch.randn(3),))
    texts = [
        exp.compiles[0].graphs[s].text for s in ("exported_program", "exported_program_decomposed")
    ]
    assert {"true_graph_0", "false_graph_0"} <= _submodules(texts)
    _assert_same(texts)


@pytest.mark.slow
def test_the_scanner_reads_inductor_graphs_of_higher_order_ops_as_ast_does():
    """Through Inductor too: its pre- and post-grad passes print the subgraphs again."""
    cond = compiler.explore(_cond, torch.randn(4))
    stages = {s for c in cond.compiles for oc in c.output_code for s in oc.graphs}
    assert any("post_grad" in s for s in stages)
    _assert_same(_texts(cond) + _texts(compiler.explore(_flex, *_flex_inputs())))


@pytest.mark.parametrize("name", BENCHMARK_TRACES)
def test_the_scanner_reads_the_benchmark_traces_as_ast_does(name):
    trace = TRACES / name
    if not any(trace.glob("*.log")):
        pytest.skip(
            f"no {trace}: make it with benchmarks/model_traces.py (TCE_TRACES names the folder)"
        )
    _assert_same(_texts(compiler.load_trace(trace)))


_HEADER = "class GraphModule(torch.nn.Module):\n"
_ODD = [
    # nested lists, tuples, keywords, operators, method and submodule calls, a
    # multi-line return: shapes the scanner reads itself (checked below)
    '    def forward(self, x: "f32[4][1]cpu"):\n'
    "        a = torch.ops.aten.add.Tensor(x, 'it', [[1, 2], [3]], (x,), alpha = -2)\n"
    '        b: "f32[4][1]cpu" = a * 2;  c = a.view(x.size(0), -1) + 1\n'
    "        d = a[0];  e = -a;  f = a == x;  g = not a;  h = x @ a\n"
    "        i, j = a;  k = self.sub.weight;  l = self.sub(x, y = a);  s = a.t()\n"
    "        n = ();  o = [a, ];  p = 1e-08;  q = 0.5;  r = 'a#b';  t = x\n"
    "        u = f(a, {'k': 1, 'j': [x]}, {});  a[(d, e)] = x;  setitem = a\n"
    "        v = a[x, slice(None, 1, None)];  w = x * -1;  y = -x + 1;  z = x << 2\n"
    "        x //= 2;  x_1 = x;  m = f({1, 2}, 'é', \"'q'\")\n"
    "        return (a, b, c,  # out\n            d)\n",
    # escaped strings (an assertion message quotes a name), then what torch does not
    # print: a chain of operators, brackets, an escape Python reads its own way
    "    def forward(self, x):\n"
    "        a = f(x, 'it\\'s', \"'b'\", '\\x41\\n')\n        return a\n",
    "    def forward(self, x):\n        h = x @ x ** 2;  m = (x);  k = a * -1\n        return h\n",
    # comments, blank lines, a multi-line signature and a nested submodule class
    '    def forward(self, L_x_: "f32[2][1]cpu",  # in\n        L_y_):\n'
    "        # File: /m.py:3 in f, code: return x + y\n"
    "        l_x_ = L_x_\n\n        add = l_x_ + L_y_;  l_x_ = None\n"
    "        return (add,)\n\n    class sub(torch.nn.Module):\n"
    "        def forward(self, a):\n            b = torch.sin(a);  a = None\n"
    "            return b\n",
    # a statement that starts on a continuation line, source comments inside a call
    "    def forward(self, x):\n        # File: /m.py:1 in f, code: a\n"
    "        y = f(x,\n        # File: /m.py:2 in f, code: b\n"
    "            x);  z = g(\n            y);  w = x[0]\n        return z\n",
    # a tab inside a source comment (user code may hold one): read; outside one: refused
    "    def forward(self, x):\n        # File: /m.py:1 in f, code: y = g(x)\t# why\n"
    "        y = f(x)\n        return y\n",
    "    def forward(self, x):\n        y = f(x)  # a\tb\n        return y\n",
    # Python the ast path rejects or reads its own way
    "    def forward(self, x):\n        y = f(a=1, b)\n        return y\n",
    "    def forward(self, x):\n        y = f(x)\n          z = g(y)\n        return z\n",
    "    def forward(self, x):\n        y = f(x\n",
    "    def forward(self, x):\n",
    "    def forward(self, x):\n        y = 007\n        return y\n",
    "    def forward(self, x):\n        y = 1.50\n        return y\n",
    "    def forward(self, x):\n        y = f(x)\n\treturn y\n",
    "    def forward(self, x, x):\n        return x\n",
    "    def forward(self, x):\n        None = f(x)\n        return x\n",
    "    def forward(self, x):\n        y = x.é\n        return y\n",
    "    def forward(self, x):\n        y = f(x, key = 1, key = 2)\n        return y\n",
    "    def forward(self, x):\n        y = f(x, 'a\\d')\n        return y\n",
    "    def forward(self, x):\n        y = torch.ops.aten.lambda.default(x)\n        return y\n",
]


def test_the_scanner_itself_reads_the_rarer_shapes_torch_prints():
    for body in (_ODD[0], _ODD[1], _ODD[3], _ODD[4], _ODD[5]):
        text = _HEADER + body
        assert parse_nodes(text)[1] is None
        assert parse_nodes(text) == parse_nodes_with_ast(text)


@pytest.mark.parametrize("body", _ODD)
def test_shapes_torch_does_not_print_give_what_ast_gives_or_an_error_naming_the_line(body):
    text = _HEADER + body
    nodes, error = parse_nodes(text)
    reference = parse_nodes_with_ast(text)
    if error is None:
        assert (nodes, error) == reference
    else:
        assert nodes == ()
        assert error.startswith("line ") and " of the graph text " in error, error


def test_an_unreadable_line_is_named_with_what_it_holds():
    text = _HEADER + _ODD[2]
    assert parse_nodes_with_ast(text)[1] is None  # Python reads it; torch never prints it
    nodes, error = parse_nodes(text)
    assert nodes == ()
    assert error is not None and error.startswith("line 3 of the graph text ")
    assert "more than one binary operator" in error and error.endswith("k = a * -1")


def test_a_lambda_class_header_and_no_class_at_all_agree_with_ast():
    text = "class <lambda>(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
    assert parse_nodes(text) == parse_nodes_with_ast(text)
    for text in ["x = 1\n", ""]:
        nodes, error = parse_nodes(text)
        assert nodes == () and error is not None and "class" in error


def test_nodes_built_by_their_slots_equal_nodes_built_by_the_dataclass():
    from dataclasses import fields

    from compiler.model import Node, SourceLoc, TensorMeta
    from compiler.parse.graph_text import new_node

    values = dict(
        name="add", op="call_function", target="torch.add", args=("x", "1"),
        kwargs={"alpha": "2"}, inputs=("x",), users=("out",),
        meta=(TensorMeta(dtype="f32", shape=("4",), stride=("1",), device="cpu"),),
        annotation="f32[4][1]cpu", source=SourceLoc(filename="m.py", line=3, function="f",
        code="y = x + 1"), module="sub", line=7, kernels=("forward/k0",),
        module_stack=("h.0", "h.0.attn"),
    )  # fmt: skip
    assert [f.name for f in fields(Node)] == list(values)  # every field given a value
    built = new_node(**values)
    assert built == Node(**values)
    assert hash(built.source) == hash(values["source"])
    # every node the scanner builds reads back like a constructed one
    text = _HEADER + _ODD[0]
    for n in parse_nodes(text)[0]:
        assert n == Node(**{f.name: getattr(n, f.name) for f in fields(Node)})


def test_graphs_logged_twice_parse_once_and_read_as_their_own_text_would():
    from compiler.parse import shared_parses
    from compiler.parse.shared_parses import SharedParses

    recording = ROOT / "notebooks" / "recordings" / "transformer_block.json"
    exp = compiler.Exploration.from_json(recording.read_text())
    texts = _texts(exp)
    parses = SharedParses()
    later = [parses.later(t) for t in texts]  # every graph registered, as a load does
    results = [parse() for parse in later]
    for text, result in zip(texts, results, strict=True):
        assert result == parse_nodes(text)
    # torch logs Dynamo's graph again before the pre-grad passes, with a graph id comment
    first = exp.compiles[0].graphs  # the first texts of _texts, in this order
    stages = list(first)
    dynamo = results[stages.index("dynamo_output_graph")]
    assert dynamo[0] is results[stages.index("before_pre_grad_graph")][0]
    assert not parses._done and not parses._waiting  # nothing held once all are read
    # texts that only hash alike are not taken for each other
    a, b = _HEADER + _ODD[1], _HEADER + _ODD[2]
    key = shared_parses._key(a)
    parses._waiting[key] = 2
    parses._parse(key, a)
    assert parses._parse(key, b) == parse_nodes(b)
    # a parse error is shared only by the very same text: its message names a line
    broken = _HEADER + "    def forward(self, x):\n        y = f(x\n"
    pair = (broken, broken + "\n# graph id: 1\n")
    later = [parses.later(text) for text in pair]
    for text, parse in zip(pair, later, strict=True):
        assert parse() == parse_nodes(text)


def test_a_damaged_graph_gives_the_ast_nodes_or_an_error_never_other_nodes():
    """A recorded training step's graphs with a few characters deleted or inserted or
    lines swapped, seeded: whatever the scanner reads must be what ``ast`` reads;
    anything else must be refused."""
    import random

    recording = ROOT / "notebooks" / "recordings" / "training_step.json"
    texts = _texts(compiler.Exploration.from_json(recording.read_text()))
    rng = random.Random(21)
    pieces = [*"()[]{},.:;=+-*/'\"# \n_a0\\<~", "None", "self", "    ", " = ", "return "]
    read = refused = 0
    for _ in range(400):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 3)):
            at, how = rng.randrange(len(text)), rng.random()
            if how < 0.4:
                text = text[:at] + text[at + rng.randint(1, 3) :]
            elif how < 0.8:
                text = text[:at] + rng.choice(pieces) + text[at:]
            else:
                lines = text.split("\n")
                a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
                lines[a], lines[b] = lines[b], lines[a]
                text = "\n".join(lines)
        nodes, error = parse_nodes(text)
        if error is None:
            assert (nodes, error) == parse_nodes_with_ast(text)
            read += 1
        else:
            assert nodes == ()
            refused += 1
    assert read > 50 and refused > 50  # both sides of the rule were exercised


def test_a_size_that_is_an_expression_with_commas_is_one_size():
    # an unbacked size is printed as a sympy expression: `Min(16, u0)` is one dimension
    text = _HEADER + (
        '    def forward(self, x: "f32[16][1]cpu", n: "Sym(u0)"):\n'
        '        y: "f32[Min(16, u0)][1]cpu" = x[slice(None, n, None)];  x = None\n'
        '        z: "f32[Max(1, Min(16, u0)), 2][2, 1]cpu" = y.view(-1, 2)\n'
        "        return (z,)\n"
    )
    nodes, error = parse_nodes(text)
    assert error is None
    shapes = {n.name: [m.shape for m in n.meta] for n in nodes}
    assert shapes["y"] == [("Min(16, u0)",)]
    assert shapes["z"] == [("Max(1, Min(16, u0))", "2")]
