"""Module stacks for AOTAutograd's graphs from what the model holds, not from provenance.

AOT graphs (joint, forward, backward, inference) are printed as text that torch never
annotates with ``nn_module_stack``, and Inductor's provenance map, where there is one,
covers forward nodes only (torch 2.13 gives the backward none; ``aot_eager`` gives
nothing). Three facts the text does carry are enough for most nodes:

1. **Inputs.** Each placeholder of an AOT graph carries a descriptor comment (torch 2.13,
   ``torch/_functorch/_aot_autograd/descriptors.py``): ``PlainAOTInput(idx=N)`` is the
   Dynamo graph's N-th placeholder (a parameter placeholder names its module path;
   SymInt placeholders count too), ``ParamAOTInput(target='fqn')`` a lifted parameter,
   ``TangentAOTInput(output=PlainAOTOutput(idx=k))`` the gradient of the forward's k-th
   output (it sits where that output was computed). A backward graph's saved tensors
   carry no descriptor but keep their forward names, so they take the forward node's
   stack. Without descriptors (older torch), ``primals_N`` is taken to be the N-th
   Dynamo placeholder, which holds while AOT neither lifts nor deduplicates inputs.
2. **Source lines.** Every computed node carries the ``# File: path:line`` comment of
   the user line it came from, backward nodes included (the line of the forward op they
   differentiate). The Dynamo graph's nodes on the same line give the candidate stacks:
   one for a line that runs once, twelve (``h.0.attn`` ... ``h.11.attn``) for a line of
   ``GPT2Attention.forward`` in a 12-layer model.
3. **Dataflow** picks among candidates: each input whose stack is known votes for the
   candidates sharing the most of its stack, and the candidate with the most
   votes wins, e.g. ``h.3.attn`` for a node that reads ``h.3.ln_1``'s result. A second
   pass, last node first, counts users too; it may narrow the first pass's answer but
   not contradict it (a block's last op has its inputs in that block and its users in
   the next: it keeps only what both say, ``transformer``). Nodes with no source line
   take the modules their inputs agree on; placeholders nothing names, those their
   users agree on. An output that is a parameter's gradient sits in its module.

Limits, by design: where candidates tie, the node gets only what the tied candidates
share (``transformer`` rather than a guessed block), and a node with neither a
descriptor, a source line nor a neighbour with a stack gets none. A line whose Dynamo
nodes have no stack (top-level code) gives none. Stacks are only as good as the Dynamo
graph's: on a trace they are the reconstruction of ``module_stack.dynamo_stacks`` (tied
weights read as the module that owns the parameter, e.g. ``lm_head`` as ``wte``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from compiler.link import module_stack
from compiler.model import Graph
from compiler.parse.words.names import (
    descriptors as descriptors,  # link.derive reads them from here
)
from compiler.parse.words.names import (
    input_index,
    input_target,
    is_plain_output,
    is_primal,
    module_path_of_placeholder,
    tangent_of,
)

Stack = tuple[str, ...]
Stacks = dict[str, Stack]

class _Line:
    """The stacks of the Dynamo nodes on one user source line."""

    __slots__ = ("cands", "holding", "shared")

    def __init__(self) -> None:
        self.cands: list[Stack] = []
        self.shared: Stack = ()
        # module path -> the candidates whose stack holds it, for the paths that set
        # candidates apart (those all of them hold cannot)
        self.holding: dict[str, list[int]] = {}

    def seal(self) -> None:
        self.shared = module_stack.common(self.cands)
        for i, c in enumerate(self.cands):
            for path in c[len(self.shared) :]:
                self.holding.setdefault(path, []).append(i)


class DynamoIndex:
    """What an AOT graph needs from its compile's Dynamo graph: each placeholder's
    stack, in order, and the stacks of the nodes on each user source line."""

    def __init__(self, dynamo: Graph, stacks: Mapping[str, Stack]) -> None:
        self.inputs: list[Stack] = []
        self.by_target: Stacks = {}
        self.by_line: dict[tuple[str, int], _Line] = {}
        for n in dynamo.nodes:
            stack = stacks.get(n.name, ())
            if n.op in ("placeholder", "get_attr"):
                if not stack:
                    path = module_path_of_placeholder(n.target)
                    stack = module_stack.stack_of_path(path) if path else ()
                if n.op == "placeholder":
                    self.inputs.append(stack)
                self.by_target[n.target] = self.by_target.get(n.target) or stack
                self.by_target[n.name] = self.by_target.get(n.name) or stack
            elif n.source is not None and n.op != "output":
                line = self.by_line.setdefault((n.source.filename, n.source.line), _Line())
                if stack not in line.cands:
                    line.cands.append(stack)
        for line in self.by_line.values():
            line.seal()

    def input_stack(self, desc: str, name: str) -> Stack:
        """The stack of an AOT input from its descriptor (or, lacking one, its name)."""
        target = input_target(desc)
        if target is not None:
            if target in self.by_target:
                return self.by_target[target]
            path = module_path_of_placeholder(target)
            return module_stack.stack_of_path(path) if path else ()
        idx = input_index(desc, name)
        return self.inputs[idx] if 0 <= idx < len(self.inputs) else ()


def aot_stacks(
    graph: Graph,
    index: DynamoIndex,
    *,
    fixed: Mapping[str, Stack] | None = None,
    forward: Mapping[str, Stack] | None = None,
    forward_outputs: Mapping[str, str] | None = None,
) -> Stacks:
    """Module stacks for the nodes of an AOT graph (see the module doc).

    ``fixed``: stacks known better (Inductor's provenance), kept as they are.
    ``forward``: the forward graph's stacks by node name, for a backward graph's saved
    tensors; ``forward_outputs``: the forward graph's output descriptors, for tangents
    (a joint graph has its own).

    Example:
        >>> stacks = aot_stacks(joint, DynamoIndex(dynamo, dynamo_stacks))  # doctest: +SKIP
        >>> stacks["primals_4"]  # doctest: +SKIP
        ('transformer', 'transformer.h.0', 'transformer.h.0.ln_1')
    """
    in_desc, out_desc = descriptors(graph.text)
    outputs = {**(forward_outputs or {}), **out_desc}
    forward = forward or {}
    out: Stacks = dict(fixed or {})
    for desc, name in out_desc.items():
        # the gradient of a parameter (a mutated buffer) is computed in its module
        if name not in out and not is_plain_output(desc):
            stack = index.input_stack(desc, "")
            if stack:
                out[name] = stack
    given = frozenset(out)
    several: dict[str, _Line] = {}  # nodes on a line that ran in several modules
    nodes = graph.nodes
    for n in nodes:
        if n.name in given or n.op == "output":
            continue
        if n.op == "placeholder":
            desc = in_desc.get(n.name, "")
            stack = _placeholder_stack(n.name, desc, index, forward, outputs, out)
        else:
            line = index.by_line.get((n.source.filename, n.source.line)) if n.source else None
            if line is not None:
                stack = _pick(line, _stacks_of(n.inputs, out))
                if len(line.cands) > 1:
                    several[n.name] = line
            else:
                stack = module_stack.common(s for s in _stacks_of(n.inputs, out))
        if stack:
            out[n.name] = stack
    # second pass, last node first, with users too: the inputs alone mislead where a
    # node reads only what the next module computed (the first backward ops of a module
    # read the gradient the module after it produced)
    for n in reversed(nodes):
        line = several.get(n.name)
        if line is None:
            continue
        stack = _pick(line, _stacks_of((*n.inputs, *n.users), out, skip=n.name))
        first = out.get(n.name, ())
        if stack[: len(first)] != first:
            # the passes disagree (a block's last op: inputs in it, users in the next):
            # keep what both support
            stack = module_stack.common((first, stack))
        if stack:
            out[n.name] = stack
        else:
            out.pop(n.name, None)
    for n in nodes:
        if n.op == "placeholder" and n.name not in out:
            stack = module_stack.common(_stacks_of(n.users, out))
            if stack:
                out[n.name] = stack
    return out


def _placeholder_stack(
    name: str,
    desc: str,
    index: DynamoIndex,
    forward: Mapping[str, Stack],
    outputs: Mapping[str, str],
    known: Mapping[str, Stack],
) -> Stack:
    output = tangent_of(desc)
    if output is not None:
        returned = outputs.get(output)
        return (forward.get(returned) or known.get(returned) or ()) if returned else ()
    if desc or is_primal(name):
        return index.input_stack(desc, name)
    return forward.get(name, ())  # a saved tensor keeps its forward name


def _stacks_of(names: Iterable[str], known: Mapping[str, Stack], skip: str = "") -> list[Stack]:
    return [s for s in (known.get(i) for i in names if i != skip) if s]


def _pick(line: _Line, near: list[Stack]) -> Stack:
    """The candidate the neighbours' stacks vote for; on a tie, what the tied share."""
    cands = line.cands
    if len(cands) == 1:
        return cands[0]
    # each neighbour votes once, for the candidates that share the most of its stack
    # (counting every shared module would let deep stacks outvote shallow ones)
    scores = [0] * len(cands)
    for s in near:
        for path in reversed(s):
            held = line.holding.get(path)
            if held:
                for i in held:
                    scores[i] += 1
                break
    best = max(scores)
    tied = [c for c, score in zip(cands, scores, strict=True) if score == best]
    if len(tied) > 1:
        return line.shared if len(tied) == len(cands) else module_stack.common(tied)
    return tied[0]
