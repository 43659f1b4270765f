"""The nodes of one ``forward`` body: what the line scanner fills, linked to their users.

A node is first a ``Record`` (a tuple: a big graph has tens of thousands), then a ``Node``
built by writing its slots. The tensor metadata of an annotation and the user source of a
``# File:`` comment are read here too, once per distinct text.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Mapping

from compiler.model import Node, SourceLoc, TensorMeta
from compiler.parse.words.python_text import top_level_parts

# torch 2.14 prefixes a backward node's comment: "# Backward of forward node: File: ..."
_FILE_COMMENT = re.compile(
    r"#\s*(?:Backward of forward node: )?File: (?P<file>.+?):(?P<line>\d+) in (?P<fn>.+?), "
    r"code: (?P<code>.*)$"
)
_NO_STACK = "No stacktrace found for following nodes"
# f32[4, s0][s0, 1]cpu  (dtype, sizes, strides, device)
_TENSOR = re.compile(
    r"(?P<dtype>[a-z]+\d*)\[(?P<shape>[^\]]*)\]\[(?P<stride>[^\]]*)\](?P<device>[a-z]+(?::\d+)?)"
)


def tensor_meta(annotation: str) -> tuple[TensorMeta, ...]:
    """Every tensor description in an FX annotation such as ``"f32[4, 4][4, 1]cpu"``.

    Example:
        >>> [m.shape for m in tensor_meta("f32[4, s0][s0, 1]cpu")]
        [('4', 's0')]
        >>> [m.shape for m in tensor_meta("f32[Min(16, u0), 4][4, 1]cpu")]
        [('Min(16, u0)', '4')]
    """
    metas = []
    for m in _TENSOR.finditer(annotation):
        metas.append(
            TensorMeta(
                dtype=m["dtype"],
                shape=_split_dims(m["shape"]),
                stride=_split_dims(m["stride"]),
                device=m["device"],
            )
        )
    return tuple(metas)


def _split_dims(text: str) -> tuple[str, ...]:
    """A shape's or stride's sizes: split at the top-level commas only, since a size can be
    an expression with commas of its own (``Min(16, u0)``, unbacked sizes)."""
    return tuple(d for d in top_level_parts(text) if d)


def comment_source(comment: str) -> tuple[bool, SourceLoc | None]:
    """What a stripped ``#`` comment line does to the source location in force: (True,
    the new location) for ``# File: ...`` and for torch's no-stack-trace note (None);
    (False, None) for any other comment.

    Example:
        >>> comment_source("# File: /m.py:7 in f, code: y = x.sin()")[1].line
        7
        >>> comment_source("# Backward of forward node: File: /m.py:7 in f, code: y")[1].line
        7
    """
    m = _FILE_COMMENT.search(comment)
    if m:
        loc = SourceLoc(filename=m["file"], line=int(m["line"]), function=m["fn"], code=m["code"])
        return True, loc
    return (True, None) if _NO_STACK in comment else (False, None)


# What ``NodeTable.fields`` holds per node: name, op, target, args, kwargs, inputs,
# annotation, line and the user source location in force there.
Record = tuple[
    str, str, str, tuple[str, ...], dict[str, str], tuple[str, ...], str, int, SourceLoc | None
]
_NEW = object.__new__
# Node's slot writers: a frozen dataclass's ``__init__`` sets each field through
# ``object.__setattr__``, twice the cost of writing the slots, on the 65,000 nodes of a
# 12-layer GPT-2 trace (tests/test_graph_lines.py checks ``new_node`` against ``Node``).
_SLOTS = {f.name: Node.__dict__[f.name].__set__ for f in dataclasses.fields(Node)}
_WRITTEN = ("name", "op", "target", "args", "kwargs", "inputs", "users", "meta", "annotation",
            "source", "module", "line", "kernels", "module_stack")  # fmt: skip
_WRITERS = tuple(_SLOTS[f] for f in _WRITTEN)
# fields added to Node later get their defaults
_EXTRA: list[tuple[Callable[[Node, object], None], Callable[[], object]]] = [
    (
        _SLOTS[f.name],
        f.default_factory
        if f.default_factory is not dataclasses.MISSING
        else functools.partial(lambda value: value, f.default),
    )
    for f in dataclasses.fields(Node)
    if f.name not in _WRITTEN
]
_EXTRA_NAMES = [f.name for f in dataclasses.fields(Node) if f.name not in _WRITTEN]


def new_node(
    name: str,
    op: str,
    target: str,
    args: tuple[str, ...],
    kwargs: dict[str, str],
    inputs: tuple[str, ...],
    users: tuple[str, ...],
    meta: tuple[TensorMeta, ...],
    annotation: str,
    source: SourceLoc | None,
    module: str,
    line: int,
    kernels: tuple[str, ...] = (),
    module_stack: tuple[str, ...] = (),
) -> Node:
    """``Node(...)`` by writing its slots (see ``_SLOTS``); every field given.

    Example:
        >>> new_node("x", "placeholder", "x", (), {}, (), (), (), "", None, "", 2).name
        'x'
    """
    node: Node = _NEW(Node)
    values = (name, op, target, args, kwargs, inputs, users, meta, annotation, source, module,
              line, kernels, module_stack)  # fmt: skip
    for write, value in zip(_WRITERS, values, strict=True):
        write(node, value)
    for write, default in _EXTRA:
        write(node, default())
    return node


def with_links(
    nodes: tuple[Node, ...],
    kernels: Mapping[str, tuple[str, ...]],
    stacks: Mapping[str, tuple[str, ...]],
) -> tuple[Node, ...]:
    """``nodes`` with ``kernels[name]`` and, where a node has none, ``stacks[name]`` (top
    module nodes only): the nodes nothing changes are kept, the others copied by their
    slots (``dataclasses.replace`` costs three times as much, on 57,000 nodes).

    Example:
        >>> with_links(nodes, {"mm": ("forward/k0",)}, {})  # doctest: +SKIP
    """
    (set_name, set_op, set_target, set_args, set_kwargs, set_inputs, set_users, set_meta,
     set_annotation, set_source, set_module, set_line, set_kernels,
     set_module_stack) = _WRITERS  # fmt: skip
    out: list[Node] = []
    append = out.append
    for n in nodes:
        if n.module != "":
            append(n)
            continue
        old_kernels, old_stack, name = n.kernels, n.module_stack, n.name
        ks = kernels.get(name, old_kernels)
        ms = old_stack or stacks.get(name, old_stack)
        if ks is old_kernels and ms is old_stack:
            append(n)
            continue
        node = _NEW(Node)
        set_name(node, name)
        set_op(node, n.op)
        set_target(node, n.target)
        set_args(node, n.args)
        set_kwargs(node, n.kwargs)
        set_inputs(node, n.inputs)
        set_users(node, n.users)
        set_meta(node, n.meta)
        set_annotation(node, n.annotation)
        set_source(node, n.source)
        set_module(node, "")
        set_line(node, n.line)
        set_kernels(node, ks)
        set_module_stack(node, ms)
        for f in _EXTRA_NAMES:
            _SLOTS[f](node, getattr(n, f))
        append(node)
    return tuple(out)


class NodeTable:
    """The nodes of one ``forward`` body of the submodule ``module`` ("" for the graph
    module itself), in the order their names first appear.

    ``metas`` is shared by every body of one text: a graph repeats a few shapes.
    """

    def __init__(self, module: str, metas: dict[str, tuple[TensorMeta, ...]]) -> None:
        self.module = module
        self.metas = metas
        self.order: list[str] = []
        self.fields: dict[str, Record] = {}
        # the signature's parameters no statement has read yet: ``l_x_ = L_x_`` renames
        # one, a pytree flatten replaces them
        self.unused_params: set[str] = set()

    def add(
        self,
        name: str,
        *,
        op: str,
        target: str,
        args: tuple[str, ...] = (),
        kwargs: dict[str, str] | None = None,
        inputs: tuple[str, ...] = (),
        annotation: str = "",
        line: int = 0,
        source: SourceLoc | None = None,
    ) -> None:
        """Record the node ``name``; a name assigned again keeps its first place."""
        if name not in self.fields:
            self.order.append(name)
        self.fields[name] = (name, op, target, args, {} if kwargs is None else kwargs, inputs,
                             annotation, line, source)  # fmt: skip

    def put(self, record: Record) -> None:
        """``add`` of a record built whole (the fast line shapes build their own)."""
        name = record[0]
        if name not in self.fields:
            self.order.append(name)
        self.fields[name] = record

    def drop_param(self, name: str) -> None:
        """Forget the signature parameter ``name`` (a pytree the graph flattens)."""
        self.unused_params.discard(name)
        self.order.remove(name)
        del self.fields[name]

    def rename(self, old_name: str, name: str, annotation: str) -> None:
        """``l_x_ = L_x_``: Dynamo's placeholder ``L_x_`` becomes the node ``l_x_``."""
        old = self.fields.pop(old_name)
        self.order[self.order.index(old_name)] = name
        self.unused_params.discard(old_name)
        self.fields[name] = (name, *old[1:6], annotation or old[6], *old[7:])

    def finish(self) -> list[Node]:
        """The nodes collected in ``fields``, linked to their users."""
        fields = self.fields
        order = self.order
        users: dict[str, list[str]] = {}
        if len(order) == len(fields):  # each name once, so no user twice in a list
            for name in order:
                for inp in fields[name][5]:
                    if inp in fields:
                        read = users.get(inp)
                        if read is None:
                            users[inp] = [name]
                        else:
                            read.append(name)
        else:  # a renamed placeholder took an existing name: dicts as ordered sets
            seen: dict[str, dict[str, None]] = {}
            for name in order:
                for inp in fields[name][5]:
                    if inp in fields:
                        seen.setdefault(inp, {})[name] = None
            users = {k: list(v) for k, v in seen.items()}
        module = self.module
        metas = self.metas
        none: tuple[str, ...] = ()
        # new_node's slot writes, inlined: this loop builds every node of a graph
        (set_name, set_op, set_target, set_args, set_kwargs, set_inputs, set_users, set_meta,
         set_annotation, set_source, set_module, set_line, set_kernels,
         set_module_stack) = _WRITERS  # fmt: skip
        extra = _EXTRA
        result: list[Node] = []
        append = result.append
        for name in order:
            _, op, target, args, kwargs, inputs, annotation, line, source = fields[name]
            if op == "output" or op == "placeholder":
                source = None
            read = users.get(name)
            node = _NEW(Node)
            set_name(node, name)
            set_op(node, op)
            set_target(node, target)
            set_args(node, args)
            set_kwargs(node, kwargs)
            set_inputs(node, inputs)
            set_users(node, none if read is None else tuple(read))
            metas_of = metas.get(annotation)
            if metas_of is None:
                metas_of = metas[annotation] = tensor_meta(annotation)
            set_meta(node, metas_of)
            set_annotation(node, annotation)
            set_source(node, source)
            set_module(node, module)
            set_line(node, line)
            set_kernels(node, none)
            set_module_stack(node, none)
            for write, default in extra:
                write(node, default())
            append(node)
        return result
