"""The ids and links of an Exploration, computed once from what was captured.

``derive(compiles, cache)`` fills the fields that are facts about other fields:
``Compile.key``/``parent``, ``OutputCode.key``, ``Kernel.id``, ``GraphBreak.user_frames``,
``Compile.resumes``, the bytecode line tables and ``Autotuning.chosen_kernel``; the ids
themselves are made by ``compiler.link.ids``. What costs time and waits for a reader it
gives to ``cache`` (``compiler/model/derived.py``) as recipes, read through properties:
each graph's nodes, parsed and linked (``Node.kernels``, ``Node.module_stack`` where
torch recorded none), ``Guards.guards``, ``Kernel.user_lines`` and Triton's lowered-line
maps. The recipes read the compiles' fields alone (graph texts, recorded module stacks,
provenance maps), so live capture, trace loading and ``from_json`` (any schema version)
all call it and get the same.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import replace

from compiler.gpu.lowered_lines import with_source_lines
from compiler.link import aot_stacks, module_stack, user_code
from compiler.link.autotuning import chosen_kernel
from compiler.link.ids import compile_key, kernel_id, output_keys
from compiler.link.post_stacks import post_grad_stacks as post_stacks_of
from compiler.model import (
    AutotuneChoice,
    Compile,
    CompileId,
    Derived,
    Graph,
    Kernel,
    Node,
    OutputCode,
)
from compiler.model.graph import Parsed, graph_later
from compiler.model.stages import (
    AOT_GRAPH_OF,
    AOT_STAGE_OF,
    DYNAMO_GRAPH,
    UNPARSED_STAGES,
    stage_keys,
)
from compiler.parse.bytecode_lines import dis_source_lines
from compiler.parse.dynamo_text import guard_list
from compiler.parse.graph_text import comment_sources, no_collection, with_links
from compiler.parse.shared_parses import SharedParses
from compiler.parse.triton.autotune import parse_config

# AOT graphs share node names with the post-grad graphs of the output code they became
# (``AOT_GRAPH_OF``, from the stage table); the graphs of one family share theirs.
_DYNAMO_LIKE = stage_keys(family="dynamo")
_JOINT = stage_keys(family="joint")

Links = dict[str, tuple[str, ...]]


def compile_parents(compiles: list[Compile]) -> list[str | None]:
    """Each compile's parent key: ``N/k`` hangs under ``N/k-1``; a resume function
    (``torch_dynamo_resume_in_f_at_12``) under the compile of ``f`` whose graph break is
    at line 12 (else the last compile of ``f`` with a graph break, else of ``f``)."""
    # the latest compile so far of each id: where two isolate_recompiles regions reuse an id
    # (``Compile.id_reused``), ``N/k`` hangs under the ``N/k-1`` of its own region, the later
    by_key: dict[tuple[int | None, str], int] = {}
    keys = [compile_key(c) for c in compiles]
    by_code: dict[tuple[int | None, str], list[int]] = {}
    out: list[str | None] = []
    for i, c in enumerate(compiles):
        by_key[c.rank, str(c.compile_id)] = i
        parent = None
        cid = c.compile_id
        if cid.frame_compile_id and cid.compiled_autograd_id is None:
            prev = CompileId(frame_id=cid.frame_id, frame_compile_id=cid.frame_compile_id - 1)
            j = by_key.get((c.rank, str(prev)))
            parent = keys[j] if j is not None else None
        resumes = user_code.resume_point(c)
        if parent is None and resumes is not None:
            fn, line = resumes.function, resumes.line
            candidates = by_code.get((c.rank, fn), [])
            at_line = [
                j
                for j in candidates
                if any(
                    gb.location is not None and gb.location.line == line
                    for gb in compiles[j].graph_breaks
                )
            ]
            pick = at_line or [j for j in candidates if compiles[j].graph_breaks] or candidates
            parent = keys[pick[-1]] if pick else None
        out.append(parent)
        by_code.setdefault((c.rank, c.code_name), []).append(i)
    return out


def kernels_of_post(oc: OutputCode) -> Links:
    """Post-grad node name -> ids of the kernels it went into (``oc`` keyed, kernels
    with ids): Inductor's provenance map, then each kernel's own node lists."""
    # dicts as ordered sets: an input read by every kernel must not cost a list scan each
    out: dict[str, dict[str, None]] = {}
    ids = {k.name: k.id for k in oc.kernels}
    for post, names in oc.provenance.post_to_kernel.items():
        for name in names:
            if name in ids:
                out.setdefault(post, {})[ids[name]] = None
    for k in oc.kernels:
        for post in (*k.post_grad_nodes, *k.source_nodes):
            out.setdefault(post, {})[k.id] = None
    return {k: tuple(v) for k, v in out.items()}


def compile_graph_kernels(stage: str, outputs: tuple[OutputCode, ...], posts: list[Links]) -> Links:
    """Node name -> kernel ids for a compile-level graph: Dynamo and pre-grad graphs
    through ``Provenance.pre_to_post``, AOT graphs by their post-grad node names (the
    joint graph: ``_joint_kernels``)."""
    out: dict[str, dict[str, None]] = {}
    for oc, post in zip(outputs, posts, strict=True):
        if stage in _DYNAMO_LIKE:
            for pre, post_names in oc.provenance.pre_to_post.items():
                for name in post_names:
                    for kid in post.get(name, ()):
                        out.setdefault(pre, {})[kid] = None
        elif AOT_GRAPH_OF.get(stage) == oc.graph:
            for name, kids in post.items():
                out.setdefault(name, {}).update(dict.fromkeys(kids))
    return {k: tuple(v) for k, v in out.items()}


def _linked(
    graph: Graph, kernels: Mapping[str, tuple[str, ...]], stacks: Mapping[str, tuple[str, ...]]
) -> tuple[tuple[Node, ...], str | None]:
    """``graph``'s nodes with their kernel links and module stacks."""
    nodes = graph.nodes
    if not nodes or (not kernels and not stacks):
        return nodes, graph.parse_error
    return with_links(nodes, kernels, stacks), graph.parse_error


Base = Callable[[], Graph]


def _bases(graphs: Mapping[str, Graph], parses: SharedParses) -> dict[str, Base]:
    """Stage -> its graph parsed, with the module stacks torch recorded, not yet linked:
    run once, when the graph or one that links through it is first read. An intermediate
    held by this compile's recipes, not by the cache."""
    return {
        stage: functools.cache(functools.partial(_base, g, parses.later(g.text)))
        for stage, g in graphs.items()
        if stage not in UNPARSED_STAGES
    }


def _base(graph: Graph, parse: Callable[[], tuple[tuple[Node, ...], str | None]]) -> Graph:
    with no_collection():
        nodes, error = parse()
        stacks = graph.module_stacks
        if stacks:
            nodes = tuple(
                replace(n, module_stack=stacks[n.name])
                if n.module == "" and stacks.get(n.name)
                else n
                for n in nodes
            )
    # an intermediate of the linking: only the linked graph's file comments are read
    return replace(graph, derived=Derived().known((nodes, error, {})))


def _later(
    graph: Graph,
    base: Base,
    kernels: Mapping[str, tuple[str, ...]] | Callable[[Graph], Links],
    stacks: Callable[[Graph], Mapping[str, tuple[str, ...]]],
    cache: Derived,
) -> Graph:
    """``graph`` parsed and linked by ``cache`` when its nodes are first read: parsing
    waits for a reader."""

    def parse() -> Parsed:
        g = base()
        with no_collection():  # linking allocates as much as parsing
            links = kernels(g) if callable(kernels) else kernels
            return (*_linked(g, links, stacks(g)), comment_sources(g.text))

    return replace(graph, derived=graph_later(cache, parse))


def _joint_kernels(
    bases: Mapping[str, Base], outputs: tuple[OutputCode, ...], posts: list[Links]
) -> Callable[[Graph], Links]:
    """Kernel links of a joint graph: the partitioner copies joint nodes into the forward
    and backward graphs under their joint names, so a joint node links to what the node
    of its name in the forward (backward) output code ran, where that node runs the
    same op (names can be reused)."""

    def kernels(joint: Graph) -> Links:
        targets = {n.name: n.target for n in joint.nodes}
        out: dict[str, dict[str, None]] = {}
        for oc, post in zip(outputs, posts, strict=True):
            aot = bases.get(AOT_STAGE_OF.get(oc.graph, ""))
            for n in aot().nodes if aot is not None else ():
                if n.name in post and targets.get(n.name) == n.target:
                    out.setdefault(n.name, {}).update(dict.fromkeys(post[n.name]))
        return {k: tuple(v) for k, v in out.items()}

    return kernels


def _has_stacks(graph: Graph | None) -> bool:
    return graph is not None and any(n.module_stack for n in graph.nodes)


def _stacks(graph: Graph) -> dict[str, tuple[str, ...]]:
    return {n.name: n.module_stack for n in graph.nodes if n.module == "" and n.module_stack}


def _link_outputs(c: Compile, cache: Derived) -> tuple[tuple[OutputCode, ...], list[Links]]:
    outputs = []
    posts = []
    for key, oc in zip(output_keys(c.output_code), c.output_code, strict=True):
        kernels = tuple(_kernel(k, kernel_id(key, k.name), cache) for k in oc.kernels)
        linked = replace(oc, key=key, kernels=kernels)
        outputs.append(linked)
        posts.append(kernels_of_post(linked))
    return tuple(outputs), posts


def _kernel(k: Kernel, kid: str, cache: Derived) -> Kernel:
    k = replace(k, id=kid)
    needs_lines = any(s.text and s.derived is None for v in k.variants for s in v.stages)
    return with_source_lines(k, cache) if needs_lines else k


def _dynamo_graph(bases: Mapping[str, Base]) -> Graph | None:
    base = bases.get(DYNAMO_GRAPH) or bases.get("before_pre_grad_graph")
    return None if base is None else base()


def _dynamo_stacks(bases: Mapping[str, Base]) -> dict[str, tuple[str, ...]]:
    # live capture records Dynamo's graph's stacks; a trace needs the reconstruction
    g = _dynamo_graph(bases)
    if g is None:
        return {}
    return _stacks(g) if _has_stacks(g) else module_stack.dynamo_stacks(g)


Stacks = dict[str, tuple[str, ...]]


def _provenance_stacks(oc: OutputCode, dynamo: Stacks) -> Stacks:
    """Post-grad node name -> the modules its Dynamo nodes agree on (provenance map)."""
    out: Stacks = {}
    for post, pres in oc.provenance.post_to_pre.items():
        found = [dynamo[p] for p in pres if dynamo.get(p)]
        if found:
            out[post] = module_stack.common(found)
    return out


def derive_compile(
    c: Compile,
    key: str,
    parent: str | None,
    files: frozenset[str] | None = None,
    cache: Derived | None = None,
    parses: SharedParses | None = None,
) -> Compile:
    """One compile with its ids, links, line tables and module stacks filled in, and
    ``cache``'s recipes for what is computed on first read (see the module doc).

    Node-level links are computed when a graph's nodes are first read, so a graph
    nobody opens is never parsed; opening one parses it and, for module stacks, the
    Dynamo graph, nothing else. Nodes, guards, user lines and line maps come from the
    fields of ``c`` alone (a graph's ``text`` and ``module_stacks``, ...), whatever
    ``c``'s graphs computed before.
    """
    cache = Derived() if cache is None else cache
    parses = SharedParses() if parses is None else parses
    outputs, posts = _link_outputs(c, cache)
    bases = _bases(c.graphs, parses)
    dynamo = functools.cache(lambda: _dynamo_stacks(bases))

    @functools.cache
    def by_name(upto: int) -> Stacks:
        """Provenance stacks of the output codes before ``upto``, by post-grad name: a
        backward graph reads the forward's saved tensors under their forward names (and
        has no provenance map on torch 2.13)."""
        merged: Stacks = {}
        for oc in outputs[:upto]:
            merged.update(_provenance_stacks(oc, dynamo()))
        return merged

    linked_outputs: list[OutputCode] = []
    for i, (oc, post) in enumerate(zip(outputs, posts, strict=True)):
        oc_bases = _bases(oc.graphs, parses)

        def post_stacks(g: Graph, i: int = i, oc: OutputCode = oc) -> Stacks:
            # live capture records torch's stacks for the nodes that have them in meta:
            # they stay, and the nodes post-grad passes made get theirs like a trace's
            if all(n.module_stack or n.op == "output" for n in g.nodes):
                return {}
            fixed = module_stack.mapped(g, oc.provenance.post_to_pre, dynamo(), by_name(i))
            fixed.update(_stacks(g))
            if not fixed and not any(dynamo().values()):
                return {}  # no module ran here (an optimizer step): nothing to spread
            aot = graphs.get(AOT_STAGE_OF.get(oc.graph, ""))
            return post_stacks_of(g, fixed, aot=aot, index=index())

        oc_graphs = {
            s: _later(g, oc_bases[s], post, post_stacks, cache) if s in oc_bases else g
            for s, g in oc.graphs.items()
        }
        oc = replace(oc, graphs=oc_graphs)
        linked_outputs.append(replace(oc, kernels=user_code.with_user_lines(oc, cache)))

    @functools.cache
    def index() -> aot_stacks.DynamoIndex | None:
        g = _dynamo_graph(bases)
        return None if g is None else aot_stacks.DynamoIndex(g, dynamo())

    def forward_of(g: Graph) -> tuple[Stacks, dict[str, str]]:
        """A backward graph's forward: its stacks and output descriptors."""
        backward = AOT_GRAPH_OF.get(g.stage) == "backward"
        fw = graphs.get(AOT_STAGE_OF["forward"]) if backward else None
        if fw is None:
            return {}, {}
        return _stacks(fw), aot_stacks.descriptors(fw.text)[1]

    def compile_stacks(g: Graph) -> Stacks:
        if _has_stacks(g):
            return {}
        if g.stage in _DYNAMO_LIKE:
            return dynamo()
        # AOT graphs share node names with the post-grad graphs of their output code
        # (the joint graph with all of them): provenance, where Inductor wrote it, is
        # exact; the graph text itself says the rest
        j = next((j for j, oc in enumerate(outputs) if oc.graph == AOT_GRAPH_OF.get(g.stage)), None)
        if j is None:
            fixed = module_stack.mapped(g, {}, {}, by_name(len(outputs)))
        else:
            prov = outputs[j].provenance.post_to_pre
            fixed = module_stack.mapped(g, prov, dynamo(), by_name(j))
        idx = index()
        if idx is None:
            return module_stack.propagate(g.nodes, fixed, frozenset())
        forward, forward_outputs = forward_of(g)
        return aot_stacks.aot_stacks(
            g, idx, fixed=fixed, forward=forward, forward_outputs=forward_outputs
        )

    graphs = {
        stage: _later(
            g,
            bases[stage],
            _joint_kernels(bases, outputs, posts)
            if stage in _JOINT
            else compile_graph_kernels(stage, outputs, posts),
            compile_stacks,
            cache,
        )
        if stage in bases
        else g
        for stage, g in c.graphs.items()
    }
    guards = c.guards
    if guards is not None:
        parse = functools.partial(guard_list, guards.tree)
        guards = replace(guards, derived=cache.later("guards", parse))
    bytecode = c.bytecode
    if bytecode is not None and not (bytecode.original_lines or bytecode.transformed_lines):
        bytecode = replace(
            bytecode,
            original_lines=dis_source_lines(bytecode.original or ""),
            transformed_lines=dis_source_lines(bytecode.transformed or ""),
        )
    all_kernels = [k for oc in linked_outputs for k in oc.kernels]
    chosen = [chosen_kernel(a, all_kernels) for a in c.autotuning]
    claimed = [kid for kid in chosen if kid is not None]
    # a kernel claimed by two ops proves neither
    autotuning = tuple(
        replace(
            a,
            chosen_kernel=kid if kid is not None and claimed.count(kid) == 1 else None,
            choices=tuple(_with_config(ch, cache) for ch in a.choices),
        )
        for a, kid in zip(c.autotuning, chosen, strict=True)
    )
    files = user_code.compiled_files([c]) if files is None else files
    return replace(
        c,
        key=key,
        parent=parent,
        graph_breaks=tuple(user_code.with_user_frames(gb, files) for gb in c.graph_breaks),
        resumes=user_code.resume_point(c),
        output_code=tuple(linked_outputs),
        graphs=graphs,
        bytecode=bytecode,
        guards=guards,
        autotuning=autotuning,
    )


def _with_config(choice: AutotuneChoice, cache: Derived) -> AutotuneChoice:
    """``choice`` with its description read as ``key=value`` pairs on first use."""
    pairs = functools.partial(_config_pairs, choice.description)
    return replace(choice, derived=cache.later("autotune_config", pairs))


def _config_pairs(description: str) -> tuple[tuple[str, str], ...]:
    return tuple(parse_config(description))


def derive(compiles: list[Compile], cache: Derived | None = None) -> list[Compile]:
    """Every compile with its derived fields filled in and ``cache``'s recipes for what
    is computed on first read (see the module doc); the graphs of all compiles share
    their parses (``SharedParses``).

    Example:
        >>> derive([])
        []
    """
    cache = Derived() if cache is None else cache
    parses = SharedParses()  # torch logs a graph several times, also across compiles
    parents = compile_parents(compiles)
    files = user_code.compiled_files(compiles)
    return [
        derive_compile(c, compile_key(c), parent, files, cache, parses)
        for c, parent in zip(compiles, parents, strict=True)
    ]
