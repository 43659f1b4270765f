"""One compiled graph call, node by node: each post-grad node's compiled value (the buffer
whose origin it is, or the graph output it is) against the eager references, or the
reason it cannot be compared."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compiler._compat import numerics as torch_numerics
from compiler.model import NodeNumerics, SourceLoc
from compiler.numerics.measure import figures, measure
from compiler.numerics.reference import Reference


@dataclass(frozen=True, kw_only=True, slots=True)
class GraphLinks:
    """Where one lowered graph sits in the Exploration: its graph kind and compile id,
    the kernel called on each line of ``call`` (name, ``Kernel.id``), each node's user
    line, and the callee of each line read from the code (for lines with no kernel)."""

    graph: str
    compile_id: str
    kernels: dict[int, tuple[str, str]] = field(default_factory=dict)
    sources: dict[str, SourceLoc] = field(default_factory=dict)
    callees: dict[int, str] = field(default_factory=dict)

    def kernel_at(self, line: int) -> tuple[str, str]:
        """(kernel name, kernel id) of the call on ``line``."""
        return self.kernels.get(line) or (self.callees.get(line, ""), "")


def _output_names(module: Any, backward: bool) -> dict[str, tuple[int, str]]:
    out = next(n for n in module.graph.nodes if n.op == "output")
    found: dict[str, tuple[int, str]] = {}
    for i, arg in enumerate(out.args[0]):
        if arg is None or not hasattr(arg, "name") or arg.name in found:
            continue
        found[arg.name] = (i, f"gradient {i}" if backward else f"forward output {i}")
    return found


def _written_inputs(module: Any, call: Any) -> dict[str, Any]:
    """Values the call wrote into its inputs (``copy_(input, value)``: an optimizer's
    update), by the node that computed them and by the ``copy_`` node itself."""
    import torch

    placeholders = [n for n in module.graph.nodes if n.op == "placeholder"]
    found: dict[str, Any] = {}
    for node in module.graph.nodes:
        if node.op != "call_function" or node.target is not torch.ops.aten.copy_.default:
            continue
        dst, src = node.args[0], node.args[1]
        if dst in placeholders and placeholders.index(dst) in call.mutated:
            value = call.mutated[placeholders.index(dst)]
            found[node.name] = value
            if hasattr(src, "name"):
                found.setdefault(src.name, value)
    return found


def graph_nodes(
    lowered: Any,
    call: Any,
    ref: Reference,
    links: GraphLinks,
    *,
    tol: float,
    fallback_random: bool,
    start: int,
) -> list[NodeNumerics]:
    """A ``NodeNumerics`` for every node of ``lowered.module`` (an observed graph), in graph
    order, numbered from ``start``.

    ``call`` is the observed ``GraphCall``; ``ref`` its eager references.
    """
    module = lowered.module
    by_node: dict[str, str] = {}
    for buffer, origin in lowered.origin.items():
        if buffer in call.values or lowered.mutates.get(buffer) in call.values:
            by_node.setdefault(origin, buffer)
    # buffers a later kernel writes into again for the node that names them: ``index_put``
    # lowers to a clone of its input, whose buffer takes the index_put node as its origin,
    # and a Scatter that mutates that buffer with no origin node of its own. The C++ backend
    # fills and scatters in one kernel; Triton zero-fills in one (embedding_dense_backward)
    # and adds atomically in a later one, so the node's value is the buffer after the last.
    finished_later = {
        target for writer, target in lowered.mutates.items()
        if lowered.origin.get(writer) in (None, lowered.origin.get(target))
    }  # fmt: skip
    fused_in: dict[str, str] = {}
    for buffer, names in lowered.origins.items():
        for name in names:
            fused_in.setdefault(name, buffer)
    outputs = _output_names(module, links.graph == "backward")
    written = _written_inputs(module, call)
    random_from: dict[str, str] = {}
    rows: list[NodeNumerics] = []
    for node in module.graph.nodes:
        if node.op == "output":
            continue
        base: dict[str, Any] = {
            "graph": links.graph, "compile_id": links.compile_id, "node": node.name,
            "target": str(node.target), "order": start + len(rows),
            "source": links.sources.get(node.name),
            "output": outputs.get(node.name, (0, ""))[1],
        }  # fmt: skip
        origin = next((random_from[a.name] for a in node.all_input_nodes if a.name in random_from),
                      None)  # fmt: skip
        if node.op == "call_function" and torch_numerics.is_random(node.target):
            origin = node.name
        if origin is not None and not fallback_random:
            random_from[node.name] = origin
        buffer = by_node.get(node.name, "")
        line, value = call.values.get(buffer, (0, None))
        if buffer in lowered.mutates:  # written into another buffer: its value after the call
            target = lowered.mutates[buffer]
            line, value = call.last.get(target) or call.values.get(target, (0, None))
        elif buffer in finished_later and buffer in call.last:
            line, value = call.last[buffer]
        kernel, kernel_id = links.kernel_at(line) if buffer else ("", "")
        base.update(buffer=buffer, kernel=kernel, kernel_id=kernel_id)
        if node.name in outputs:  # what the graph returned is final, whatever wrote it last
            value = call.outputs[outputs[node.name][0]]
        if value is None:
            value = written.get(node.name)
        reason = _why_not(node, value, origin, fallback_random, ref, fused_in, links, call,
                          lowered)  # fmt: skip
        if reason:
            rows.append(NodeNumerics(compared=False, reason=reason, **base))
            continue
        found = measure(value, ref.values[node.name], ref.fp64.get(node.name), tol)
        rows.append(NodeNumerics(**figures(found), compared=not found.reason, **base))
    return rows


def _why_not(
    node: Any,
    value: Any,
    random_origin: str | None,
    fallback_random: bool,
    ref: Reference,
    fused_in: dict[str, str],
    links: GraphLinks,
    call: Any,
    lowered: Any,
) -> str:
    if node.op == "placeholder":
        return "graph input: the references start from the value the compiled graph was given"
    if random_origin is not None and not fallback_random:
        if random_origin == node.name:
            return ("random: Inductor draws its own numbers (fallback_random=False); "
                    "numerics(..., options={'fallback_random': True}) compares it")
        return f"random: depends on random node {random_origin} (fallback_random=False)"
    if node.name not in ref.values:
        return f"no reference: the eager run of the graph stopped before this node ({ref.error})"
    if value is None:
        if node.op == "call_function" and torch_numerics.is_view(node.target):
            return "view: a view of its input, which no kernel computes"
        holder = fused_in.get(node.name)
        if holder is not None:
            line = call.values.get(holder, (0, None))[0]
            kernel = links.kernel_at(line)[0] or "its kernel"
            origin = lowered.origin.get(holder, "")
            return (f"fused: computed inside {kernel} (buffer {holder} holds {origin}), "
                    "never written to memory")
        return "not materialized: Inductor computed it inside another kernel or dropped it"
    return ""
