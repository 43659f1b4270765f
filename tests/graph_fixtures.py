"""Real graphs for the graph canvas tests and benchmark: GPT-2 training steps, captured.

``gpt2_training_step(n_layer)`` compiles a ``transformers`` GPT-2 (built from a config, no
weights) forward + backward with ``backend="aot_eager"`` on the CPU and returns the
Exploration; ``graph_pane(exp, "aot_joint_graph")`` turns its largest graph of that stage into
the GraphPane the canvas takes (the shape agreed with the views work). A 12-layer model
gives a joint graph of about 2,300 nodes; 24 layers about 4,600.

TEST DATA: until the compiler fills ``Node.module_stack`` (the "model" work), the
``module_stack`` of each node here is derived by ``derived_module_stacks`` from Dynamo's
parameter names (``l_self_modules_transformer_modules_h_modules_0_...``): the joint graph's
``primals_N`` are the Dynamo graph's placeholders in order, every other node takes the stack
of a parameter it reads, else the deepest stack among its inputs, else the stack its users
share. That derivation lives only
here, for tests; where the capture filled ``module_stack``, it is used as is.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import compiler
from explorer._static import inline_module

STATIC = Path(__file__).resolve().parent.parent / "explorer" / "static"

_PARAM = re.compile(r"^l_(?:self|[a-z_]+?)_modules_(?P<path>.+?)_(?:parameters|buffers)_")


def gpt2_training_step(n_layer: int, backend: str = "aot_eager") -> compiler.Exploration:
    """Capture one training step of an ``n_layer`` GPT-2 (tiny widths, real structure)."""
    import torch
    import transformers

    torch.manual_seed(0)
    config = transformers.GPT2Config(
        n_layer=n_layer,
        n_embd=64,
        n_head=2,
        n_positions=32,
        vocab_size=128,
        bos_token_id=0,
        eos_token_id=0,
    )
    model = transformers.GPT2LMHeadModel(config)
    ids = torch.randint(0, 128, (1, 16))

    def step(ids: torch.Tensor) -> torch.Tensor:
        out = model(ids, labels=ids)
        out.loss.backward()
        return out.loss.detach()

    return compiler.explore(step, ids, backend=backend)


def largest(exp: compiler.Exploration, stage: str) -> tuple[compiler.Compile, compiler.Graph]:
    found = [(c, c.graphs[stage]) for c in exp.compiles if stage in c.graphs]
    if not found:
        msg = f"no compile in this exploration has a {stage!r} graph"
        raise LookupError(msg)
    return max(found, key=lambda cg: len(cg[1].nodes))


def _module_stack(path: list[str]) -> list[str]:
    """``[transformer, h, 0, attn]`` -> the modules called: ``transformer, transformer.h.0, ...``.

    A ``ModuleList`` (a part followed by an index) is not called, so it has no entry, as in
    torch's ``nn_module_stack``.
    """
    out = []
    for k in range(len(path)):
        if k + 1 < len(path) and path[k + 1].isdigit():
            continue
        out.append(".".join(path[: k + 1]))
    return out


def derived_module_stacks(dynamo: compiler.Graph, graph: compiler.Graph) -> list[list[str]]:
    """TEST DATA: a module stack per node of an AOT graph, from Dynamo's parameter names."""
    params = [n for n in dynamo.nodes if n.op == "placeholder"]
    by_primal: dict[str, list[str]] = {}
    for k, p in enumerate(params):
        m = _PARAM.match(p.name)
        if m:
            by_primal[f"primals_{k + 1}"] = _module_stack(m["path"].split("_modules_"))
    stacks: dict[str, list[str]] = {}
    for n in graph.nodes:
        stack = by_primal.get(n.name, [])
        if not stack and n.op not in ("placeholder", "output"):
            # The deepest module among the inputs (the last on ties): a backward op reads
            # the activations and weights its forward op saved, so it lands beside that op
            # rather than with the gradient it receives.
            params = [by_primal[name] for name in n.inputs if name in by_primal]
            for name in n.inputs:
                if stacks.get(name) and len(stacks[name]) >= len(stack):
                    stack = stacks[name]
            # A parameter names its module exactly (a layer norm reads its own weight).
            stack = params[0] if params else stack
        stacks[n.name] = stack
    # Nodes that read no module's output (masks, constants): the modules their users share.
    for n in reversed(graph.nodes):
        if stacks[n.name] or n.op in ("placeholder", "output"):
            continue
        users = [stacks[u] for u in n.users if stacks.get(u)]
        if users and len(users) == len(n.users):
            common = users[0]
            for other in users[1:]:
                k = 0
                while k < min(len(common), len(other)) and common[k] == other[k]:
                    k += 1
                common = common[:k]
            stacks[n.name] = common
    return [stacks[n.name] for n in graph.nodes]


def graph_pane(exp: compiler.Exploration, stage: str) -> dict[str, Any]:
    """The GraphPane (as JSON data) of the largest ``stage`` graph in ``exp``."""
    compile_, graph = largest(exp, stage)
    index = {n.name: i for i, n in enumerate(graph.nodes)}
    if any(n.module_stack for n in graph.nodes):
        stacks = [list(n.module_stack) for n in graph.nodes]
    else:
        stacks = derived_module_stacks(compile_.graphs["dynamo_output_graph"], graph)
    nodes = []
    for n, stack in zip(graph.nodes, stacks, strict=True):
        src = n.source
        nodes.append(
            {
                "name": n.name,
                "op": n.op,
                "target": n.target,
                "meta": [
                    {
                        "dtype": m.dtype,
                        "shape": list(m.shape),
                        "stride": list(m.stride),
                        "device": m.device,
                    }
                    for m in n.meta
                ],
                "module_stack": stack,
                "inputs": [index[s] for s in n.inputs if s in index],
                "users": [index[s] for s in n.users if s in index],
                "src": f"{src.filename}:{src.line}" if src else None,
                "function": src.function if src else "",
                "code": src.code if src else "",
                "kernels": list(n.kernels),
                "line": n.line,
            }
        )
    return {
        "kind": "graph",
        "id": f"{compile_.key or compile_.compile_id}/{stage}",
        "stage": stage,
        "label": stage,
        "text": graph.text,
        "nodes": nodes,
    }


_HARNESS = """<!doctype html>
<html><head><meta charset="utf-8"><title>graph canvas</title><style>{css}
body {{ margin: 8px; }} #host {{ width: 1180px; }}
.hl-1 {{ --tce-hl: rgba(33, 150, 243, 0.3); }}
</style></head>
<body><div id="host"></div>
<script type="application/json" id="pane">{pane}</script>
<script type="module">
{js}
// A fake ctx, as the shell gives one: it records what the canvas asks for and feeds the
// merged selection back through update(), as the shell's store does.
const selection = {{ compile: null, stage: null, src: null, node: null, kernel: null }};
window.selects = [];
const ctx = {{
  selection,
  select(change) {{
    window.selects.push(change);
    Object.assign(selection, change);
    if (window.canvas) window.canvas.update({{ ...selection }});
  }},
  srcClass(src) {{ return src ? "hl-1" : ""; }},
}};
window.openPane = async () => {{
  const pane = JSON.parse(document.getElementById("pane").textContent);
  const host = document.getElementById("host");
  if (window.canvas) window.canvas.destroy();
  const t0 = performance.now();
  window.canvas = new explorerModule.GraphCanvas(host, pane, ctx);
  const built = performance.now() - t0;
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  return {{ built, painted: performance.now() - t0, boxes: window.canvas.stats.units }};
}};
window.harnessReady = true;
</script></body></html>
"""


def harness_html(pane: dict[str, Any]) -> str:
    """A page holding the canvas, one pane and a fake ctx; ``window.openPane()`` opens it."""
    js = inline_module("explorer", "explorerModule")  # the shipped bundle, as the page has it
    data = json.dumps(pane).replace("</", "<\\/")
    css = (STATIC / "graph.css").read_text(encoding="utf-8")
    return _HARNESS.format(css=css, js=js, pane=data)
