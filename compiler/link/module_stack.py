"""Which ``nn.Module`` each graph node came from: ``Node.module_stack``.

Two sources, best first:

- **Live capture** reads ``node.meta["nn_module_stack"]`` from the graph modules torch
  logs (Dynamo's graph and the AOT and post-grad graphs), through
  ``_compat.graph_module_of_trace_call``; ``module_paths`` turns torch's entries into
  module paths.
- **A trace** holds no module stacks (``print_readable`` omits them), but Dynamo names
  each parameter and buffer placeholder after its module path
  (``L_self_modules_h_modules_0_modules_attn_parameters_weight_`` is ``h.0.attn``). A
  node that reads parameters belongs to their module; the others get the modules their
  inputs agree on (the common prefix), and a node that reads only a leaf module's result
  (``linear`` -> ``mul``) goes to that leaf's parent. This is a reconstruction, not
  torch's record: it is exact for leaf modules with parameters and close for the code
  around them.

Post-grad graphs inherit the Dynamo graph's stacks through Inductor's provenance map
(post-grad node -> Dynamo node), then take their AOT graph's stacks by node name, then
source lines and dataflow (``compiler/link/post_stacks.py``). AOT graphs use the same
map where there is one and, for every other node, what the graph text itself says
(input descriptors, source lines, dataflow): ``compiler/link/aot_stacks.py``.

Container modules (``ModuleList``, ``Sequential`` indexed by number) are not called, so
torch's stacks skip them: ``("transformer", "transformer.h.0", "transformer.h.0.attn")``.
The trace reconstruction does the same, so both sources agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from compiler.model import Graph, Node
from compiler.parse.words.names import module_path_of_placeholder, module_paths

# read from torch's names in parse/; here is where callers met them first
__all__ = ["module_path_of_placeholder", "module_paths"]

Stack = tuple[str, ...]



def stack_of_path(path: str) -> Stack:
    """``"transformer.h.0.attn"`` -> ``("transformer", "transformer.h.0", "transformer.h.0.attn")``.

    Prefixes that end just before a numeric segment (a container's index) are left out,
    as torch's ``nn_module_stack`` leaves out containers that are never called.

    Example:
        >>> stack_of_path("h.0.attn")
        ('h.0', 'h.0.attn')
    """
    parts = [p for p in path.split(".") if p]
    out = []
    for i in range(1, len(parts) + 1):
        if i < len(parts) and parts[i].isdigit():
            continue
        out.append(".".join(parts[:i]))
    return tuple(out)


def common(stacks: Iterable[Stack]) -> Stack:
    """The longest stack prefix all of ``stacks`` share (the modules they agree on)."""
    it = iter(stacks)
    first = next(it, None)
    if first is None:
        return ()
    out = first
    for s in it:
        n = 0
        while n < len(out) and n < len(s) and out[n] == s[n]:
            n += 1
        out = out[:n]
        if not out:
            break
    return out


def propagate(
    nodes: tuple[Node, ...], known: Mapping[str, Stack], leaves: frozenset[str]
) -> dict[str, Stack]:
    """Fill in stacks for nodes not in ``known`` from their inputs, in graph order.

    ``leaves`` are nodes whose stack ends in a leaf module they ran (a node reading
    parameters): their users sit in that module's parent.
    """
    out = dict(known)
    for n in nodes:
        if n.name in out or n.op in ("placeholder", "get_attr", "output"):
            continue
        inputs = [out[i][:-1] if i in leaves else out[i] for i in n.inputs if out.get(i)]
        if inputs:
            out[n.name] = common(inputs)
    return out


def dynamo_stacks(graph: Graph) -> dict[str, Stack]:
    """The reconstruction from parameter names, for a Dynamo (or pre-grad) graph."""
    attrs: dict[str, Stack] = {}
    for n in graph.nodes:
        if n.op in ("placeholder", "get_attr"):
            path = module_path_of_placeholder(n.target) or module_path_of_placeholder(n.name)
            if path:
                attrs[n.name] = stack_of_path(path)
    known: dict[str, Stack] = {}
    for n in graph.nodes:
        used = [attrs[i] for i in n.inputs if i in attrs]
        if used and n.op not in ("placeholder", "get_attr", "output"):
            known[n.name] = common(used)
    out = propagate(graph.nodes, known, frozenset(known))
    # parameters and buffers sit in their module too, so a grouped graph shows them there
    out.update(attrs)
    return out


def mapped(
    graph: Graph,
    to_source: Mapping[str, tuple[str, ...]],
    source: Mapping[str, Stack],
    same_name: Mapping[str, Stack],
) -> dict[str, Stack]:
    """Stacks through a node-name map into a graph whose stacks are known
    (``Provenance.post_to_pre`` into the Dynamo graph), else from a node of the same
    name in ``same_name``; nodes neither names are left out."""
    known: dict[str, Stack] = {}
    for n in graph.nodes:
        found = [source[s] for s in to_source.get(n.name, ()) if source.get(s)]
        if found:
            known[n.name] = common(found)
        elif same_name.get(n.name):
            known[n.name] = same_name[n.name]
    return known
