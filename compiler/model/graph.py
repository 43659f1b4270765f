"""Graphs as torch printed them, and the FX nodes parsed from them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from compiler.model.base import _FROZEN, SourceLoc
from compiler.model.derived import DERIVED, Derived, Later
from compiler.model.stages import stage_keys

# Stages kept as a graph whose text is no FX graph (``torch.export``'s signature, range
# constraints and module call graph; what AOTInductor's .pt2 package holds, and its C++):
# they have no nodes, and nothing parses them (``compiler.model.stages``).
EXPORT_TEXT_STAGES = stage_keys(family="export")
AOTI_STAGES = stage_keys(family="aoti")


@dataclass(**_FROZEN)
class TensorMeta:
    """Shape, dtype, stride and device as torch prints them (``f32[4, s0][s0, 1]cpu``)."""

    dtype: str
    shape: tuple[str, ...]
    stride: tuple[str, ...]
    device: str


@dataclass(**_FROZEN)
class Node:
    """One FX node, parsed from the graph text torch printed.

    ``op`` uses torch.fx's op names. ``args`` and ``kwargs`` hold each argument's
    source text; ``inputs`` names the nodes it reads and ``users`` the nodes that
    read it. ``line`` is the 1-based line of the node in ``Graph.text``.
    """

    name: str
    op: str
    target: str
    args: tuple[str, ...] = ()
    kwargs: dict[str, str] = field(default_factory=dict)
    inputs: tuple[str, ...] = ()
    users: tuple[str, ...] = ()
    meta: tuple[TensorMeta, ...] = ()
    annotation: str = ""
    source: SourceLoc | None = None
    module: str = ""
    line: int = 0
    # schema 2.0 (filled by compiler/link/derive.py when the graph's nodes are read):
    # ids of the kernels this node ended up in (``forward/cpp_fused_add_0``), through
    # the provenance maps; empty where torch recorded no link.
    kernels: tuple[str, ...] = ()
    # the nn.Module hierarchy the node came from, outermost first, as module paths
    # (``("transformer", "transformer.h.0", "transformer.h.0.attn")``; containers that
    # are never called, like a ModuleList ``h``, are not in it, as in torch's own
    # stacks): from ``nn_module_stack`` (live capture), or on a trace reconstructed from
    # parameter names (compiler/link/module_stack.py); AOT graphs get theirs from their input
    # descriptors, source lines and dataflow (compiler/link/aot_stacks.py), post-grad graphs
    # through provenance, then their AOT graph's stacks by name, then source lines and
    # dataflow (compiler/link/post_stacks.py); empty for top-level code and where nothing
    # supports one.
    module_stack: tuple[str, ...] = ()


@dataclass(**_FROZEN)
class Graph:
    """A graph at one stage (``dynamo_output_graph``, ``aot_forward_graph``, ...).

    ``text`` is exactly what torch emitted. ``nodes``, ``parse_error`` and
    ``file_comments`` are parsed from it, with their links, on first read: properties,
    not fields, computed once by the Exploration's cache (``derived``, see
    ``compiler/model/derived.py``), so a graph nobody looks at is never parsed and
    ``==``, copies and JSON never parse one. A graph built without a cache has no nodes.
    """

    stage: str
    text: str
    # schema 4.0: the module stacks torch recorded for this graph's nodes, by node name
    # (live capture's ``nn_module_stack``; kept from the nodes of a 3.x file); the
    # nodes' ``module_stack`` comes from them where present.
    module_stacks: dict[str, tuple[str, ...]] = field(default_factory=dict)
    derived: Later | None = field(default=None, compare=False, repr=False, metadata=DERIVED)

    @property
    def nodes(self) -> tuple[Node, ...]:
        """The FX nodes parsed from ``text`` (computed on first read)."""
        return self._parsed()[0]

    @property
    def parse_error(self) -> str | None:
        """Why ``text`` could not be parsed, or None (computed on first read)."""
        return self._parsed()[1]

    @property
    def file_comments(self) -> dict[int, SourceLoc]:
        """The user source each ``# File:`` comment of ``text`` names, by 1-based line: the
        lines the nodes' sources are read from, which a view shows linked too (read with
        the nodes)."""
        return self._parsed()[2]

    def _parsed(self) -> Parsed:
        if self.derived is None:
            return (), None, {}
        parsed: Parsed = self.derived.get()
        return parsed

    def node(self, name: str, module: str = "") -> Node | None:
        """The node called ``name`` (in nested module ``module``), or None."""
        for n in self.nodes:
            if n.name == name and n.module == module:
                return n
        return None


# what a graph's ``derived`` holds: its nodes, why they could not be parsed, and the
# source its ``# File:`` comments name by line
Parsed = tuple[tuple[Node, ...], str | None, dict[int, SourceLoc]]


def graph_later(cache: Derived, parse: Callable[[], Parsed]) -> Later:
    """``cache``'s handle on a graph's (nodes, parse error, file comments), from
    ``parse()``: a parser that raises gives a parse error, so a view reading ``nodes``
    gets a graph, not a crash.

    Example:
        >>> later = graph_later(Derived(), lambda: ((), "empty", {}))
        >>> Graph(stage="s", text="", derived=later).parse_error
        'empty'
    """

    def parse_once() -> Parsed:
        try:
            return parse()
        except Exception as exc:
            return (), f"{type(exc).__name__}: {exc}", {}

    return cache.later("graph", parse_once)
