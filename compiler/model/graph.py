"""Graphs as torch printed them, and the FX nodes parsed from them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from compiler.model._lazy import _derived_on_read
from compiler.model.base import _FROZEN, SourceLoc


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
    # schema 2.0 (contract; filled by compiler/trace/build.py):
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

    ``text`` is exactly what torch emitted; ``nodes`` is parsed from it. A loaded trace
    or a live capture parses it on first access (``Graph.deferred``): ``nodes`` and
    ``parse_error`` read like plain fields, but a graph nobody looks at is never parsed.
    """

    stage: str
    text: str
    nodes: tuple[Node, ...] = ()
    parse_error: str | None = None

    @classmethod
    def deferred(
        cls, *, stage: str, text: str, parse: Callable[[], tuple[tuple[Node, ...], str | None]]
    ) -> Graph:
        """A graph whose ``nodes`` and ``parse_error`` come from ``parse()``, called once,
        when either is first read.

        Example:
            >>> g = Graph.deferred(stage="s", text="", parse=lambda: ((), "empty"))
            >>> g.parse_error
            'empty'
        """
        def parse_once() -> tuple[tuple[Node, ...], str | None]:
            try:
                return parse()
            except Exception as exc:  # a view reading .nodes must get a graph, not a crash
                return (), f"{type(exc).__name__}: {exc}"

        graph = cls(stage=stage, text=text)
        _defer_graph(graph, parse_once)
        return graph

    def node(self, name: str, module: str = "") -> Node | None:
        """The node called ``name`` (in nested module ``module``), or None."""
        for n in self.nodes:
            if n.name == name and n.module == module:
                return n
        return None



_defer_graph = _derived_on_read(Graph, "nodes", "parse_error")
