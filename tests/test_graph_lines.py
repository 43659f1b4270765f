"""The line scanner of ``parse_nodes`` gives exactly what the ``ast`` reference gives.

Differential: every graph of real captures (the trace of tests/data/traces, the notebook
recordings, a 2-layer transformers GPT-2 training step captured here) is parsed by both
paths and the (nodes, parse error) pairs compared. Hand-made texts then push the shapes
the scanner must hand back to ``ast`` (strings with quotes, nested lists, comments,
odd indentation, syntax errors): the two must still agree.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import compiler
from compiler.parse.graph_lines import scan_nodes
from compiler.parse.graph_text import _Parser, parse_nodes, parse_nodes_with_ast

ROOT = Path(__file__).resolve().parent.parent


def _texts(exp: compiler.Exploration) -> list[str]:
    return [
        g.text
        for c in exp.compiles
        for g in [*c.graphs.values(), *(g for oc in c.output_code for g in oc.graphs.values())]
    ]


def _assert_same(texts: list[str]) -> int:
    """Compare both paths on every text; the count the scanner read itself."""
    scanned = 0
    for text in texts:
        assert parse_nodes(text) == parse_nodes_with_ast(text)
        scanned += scan_nodes(_Parser(text)) is not None
    return scanned


def test_the_scanner_reads_every_graph_of_a_real_trace_as_ast_does():
    texts = _texts(compiler.load_trace(ROOT / "tests" / "data" / "traces" / "graph_break_eager"))
    assert texts
    assert _assert_same(texts) == len(texts)


RECORDINGS = sorted(
    p for p in (ROOT / "notebooks" / "recordings").glob("*.json") if p.name != "environment.json"
)


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda p: p.stem)
def test_the_scanner_reads_the_graphs_of_each_recording_as_ast_does(recording):
    texts = _texts(compiler.Exploration.from_json(recording.read_text()))
    assert _assert_same(texts) == len(texts)


def test_the_scanner_reads_a_gpt2_training_steps_graphs_as_ast_does():
    pytest.importorskip("transformers")
    import programs

    texts = _texts(compiler.explore(*programs.gpt2_training_step(2), backend="aot_eager"))
    assert sum(t.count("\n") for t in texts) > 1000  # joint graph included
    assert _assert_same(texts) == len(texts)


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
    "        return (a, b, c,  # out\n            d)\n",
    # what the scanner hands to ast: an escaped string, a chain of operators, brackets
    "    def forward(self, x):\n        a = f(x, 'it\\'s')\n        return a\n",
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
    # Python the ast path rejects or reads its own way: each must agree
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
    "    def forward(self, x):\n        y = torch.ops.aten.lambda.default(x)\n        return y\n",
]


def test_the_scanner_itself_reads_the_rarer_shapes_torch_prints():
    for body in (_ODD[0], _ODD[3], _ODD[4]):
        assert scan_nodes(_Parser(_HEADER + body)) is not None


@pytest.mark.parametrize("body", _ODD)
def test_shapes_the_scanner_does_not_know_give_what_ast_gives(body):
    text = _HEADER + body
    assert parse_nodes(text) == parse_nodes_with_ast(text)


def test_a_lambda_class_header_and_no_class_at_all_agree_with_ast():
    for text in ["class <lambda>(torch.nn.Module):\n    def forward(self, x):\n        return x\n",
                 "x = 1\n", ""]:  # fmt: skip
        assert parse_nodes(text) == parse_nodes_with_ast(text)


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
