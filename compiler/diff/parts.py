"""The pieces ``compiler.diff`` compares: text, graphs, guards and kernels.

Each function compares one kind of thing of two compiles and returns frozen data;
``compiler.diff`` assembles them and writes the summary.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from compiler.diff.identity import loose_key, node_identities, qualified_name
from compiler.model import Graph, Guard, Kernel, Node
from compiler.parse.dynamo_text import subject_of
from compiler.parse.words.per_process import between_processes as normalized

_FROZEN = {"frozen": True, "kw_only": True, "slots": True}

@dataclass(**_FROZEN)
class LineOp:
    """One block of a line diff, as ``difflib`` opcodes: ``equal``, ``replace``,
    ``delete`` or ``insert``, over 0-based half-open line ranges of the two texts."""

    tag: str
    a_start: int
    a_end: int
    b_start: int
    b_end: int


@dataclass(**_FROZEN)
class NodeChange:
    """A graph node added, removed or changed between the two compiles.

    ``identity`` is the stable identity (``compiler.diff.identity``); ``a_name``/``b_name``
    the node's name in each graph ("" where absent); ``detail`` says what changed.
    """

    status: str
    identity: str
    a_name: str = ""
    b_name: str = ""
    detail: str = ""
    # 1-based lines of the node in each side's graph text (0 where absent)
    a_line: int = 0
    b_line: int = 0

    @property
    def name(self) -> str:
        """The node's name on the side where it exists (B first)."""
        return self.b_name or self.a_name


@dataclass(**_FROZEN)
class StageDiff:
    """One stage of one compile compared: its text line by line and, for a graph,
    its nodes by stable identity.

    ``stage`` is the trace key (``dynamo_output_graph``), per output code prefixed
    ``<output key>/`` (``inference/inductor_output_code``); ``bytecode/original``,
    ``bytecode/transformed`` and ``guards`` are the other text stages. A stage missing
    on one side has that side's text empty and ``presence`` ``added``/``removed``.
    """

    compile: str
    stage: str
    kind: str
    a_text: str
    b_text: str
    lines: tuple[LineOp, ...] = ()
    nodes: tuple[NodeChange, ...] = ()
    presence: str = "both"

    @property
    def changed(self) -> bool:
        """Whether anything differs (volatile ids aside)."""
        return self.presence != "both" or bool(self.nodes) or any(
            op.tag != "equal" for op in self.lines
        )


@dataclass(**_FROZEN)
class GuardChange:
    """A guard added, removed or changed, named by what it guards (``L['x']``)."""

    status: str
    kind: str
    subject: str
    before: str = ""
    after: str = ""

    def describe(self) -> str:
        """``guard on L['x'] changed (size=[8, 4] -> size=[None, 4])`` style text."""
        what = f"guard on {self.subject}" if self.subject else f"{self.kind} guard"
        if self.kind == "symbolic":
            what = f"shape guard {self.subject}"
        if self.status != "changed":
            return f"{what} {self.status}"
        old, new = _difference(self.before, self.after)
        return f"{what} changed ({old} -> {new})"


@dataclass(**_FROZEN)
class KernelDiff:
    """Kernels compared: counts, fusion groups (post-grad nodes per kernel) and code.

    Kernels pair by name, then by fusion group; ``changed_code`` lists kernels of B
    whose source differs from their partner's. ``*_groups`` hold post-grad node names;
    ``fusion_changed`` compares the groups by the nodes' stable identities (FX renames
    ``mul`` to ``mul_5`` when symbolic shapes add nodes before it).
    """

    a_count: int
    b_count: int
    a_groups: tuple[tuple[str, ...], ...] = ()
    b_groups: tuple[tuple[str, ...], ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed_code: tuple[str, ...] = ()
    fusion_changed: bool = False


def text_stage(compile_key: str, stage: str, a: str | None, b: str | None) -> StageDiff:
    """``a`` and ``b`` compared line by line (volatile ids ignored)."""
    a_text, b_text = a or "", b or ""
    a_lines, b_lines = a_text.splitlines(), b_text.splitlines()
    matcher = difflib.SequenceMatcher(
        None, [normalized(x) for x in a_lines], [normalized(x) for x in b_lines], autojunk=False
    )
    ops = tuple(LineOp(tag=t, a_start=i1, a_end=i2, b_start=j1, b_end=j2)
                for t, i1, i2, j1, j2 in matcher.get_opcodes())  # fmt: skip
    presence = "both" if a is not None and b is not None else ("added" if a is None else "removed")
    return StageDiff(compile=compile_key, stage=stage, kind="text", a_text=a_text,
                     b_text=b_text, lines=ops, presence=presence)  # fmt: skip


def graph_stage(compile_key: str, stage: str, a: Graph | None, b: Graph | None) -> StageDiff:
    """Graphs compared as text and as nodes matched by stable identity."""
    text = text_stage(compile_key, stage, a.text if a else None, b.text if b else None)
    nodes = compare_nodes(a, b)
    return StageDiff(compile=compile_key, stage=stage, kind="graph", a_text=text.a_text,
                     b_text=text.b_text, lines=text.lines, nodes=nodes,
                     presence=text.presence)  # fmt: skip


def compare_nodes(a: Graph | None, b: Graph | None) -> tuple[NodeChange, ...]:
    """Added, removed and changed nodes, by identity, then by identity less the line."""
    a_nodes = {qualified_name(n): n for n in (a.nodes if a else ())}
    b_nodes = {qualified_name(n): n for n in (b.nodes if b else ())}
    a_ids = node_identities(a) if a else {}
    b_ids = node_identities(b) if b else {}
    b_by_id = {ident: name for name, ident in b_ids.items()}
    pairs: dict[str, str] = {}
    for name, ident in a_ids.items():
        if ident in b_by_id:
            pairs[name] = b_by_id.pop(ident)
    # second pass: an edited line changes the identity of the nodes it made
    left_b: dict[str, list[str]] = {}
    for name in b_by_id.values():
        left_b.setdefault(loose_key(b_nodes[name]), []).append(name)
    for name in a_ids:
        if name not in pairs:
            bucket = left_b.get(loose_key(a_nodes[name]))
            if bucket:
                pairs[name] = bucket.pop(0)
    # names of each side translated to identities, to compare inputs across graphs
    a_to_id = a_ids
    b_to_id = {**b_ids, **{bn: a_ids[an] for an, bn in pairs.items()}}
    changes: list[NodeChange] = []
    matched_b = set(pairs.values())
    for name, node in a_nodes.items():
        if name not in pairs:
            changes.append(NodeChange(status="removed", identity=a_ids[name], a_name=name,
                                      a_line=node.line))  # fmt: skip
            continue
        other = b_nodes[pairs[name]]
        detail = _node_difference(node, other, a_to_id, b_to_id)
        if detail:
            changes.append(NodeChange(status="changed", identity=a_ids[name], a_name=name,
                                      b_name=pairs[name], detail=detail, a_line=node.line,
                                      b_line=other.line))  # fmt: skip
    for name, node in b_nodes.items():
        if name not in matched_b:
            changes.append(NodeChange(status="added", identity=b_ids[name], b_name=name,
                                      b_line=node.line))  # fmt: skip
    return tuple(changes)


def _node_difference(a: Node, b: Node, a_ids: dict[str, str], b_ids: dict[str, str]) -> str:
    parts = []
    if a.meta != b.meta:
        parts.append(f"{_meta_text(a)} -> {_meta_text(b)}")
    if [a_ids.get(i, i) for i in a.inputs] != [b_ids.get(i, i) for i in b.inputs]:
        parts.append(f"inputs ({', '.join(a.inputs)}) -> ({', '.join(b.inputs)})")
    a_const = [x for x in a.args if x not in a_ids]
    b_const = [x for x in b.args if x not in b_ids]
    if a_const != b_const or a.kwargs != b.kwargs:
        parts.append(f"arguments {_args_text(a)} -> {_args_text(b)}")
    a_line = a.source.code.strip() if a.source else ""
    b_line = b.source.code.strip() if b.source else ""
    if a_line != b_line:
        parts.append(f"source line {a_line!r} -> {b_line!r}")
    return "; ".join(parts)


def _meta_text(node: Node) -> str:
    return " ".join(f"{m.dtype}[{', '.join(m.shape)}]" for m in node.meta) or "no shape"


def _args_text(node: Node) -> str:
    items = [*node.args, *(f"{k}={v}" for k, v in node.kwargs.items())]
    return f"({', '.join(items)})"


def guard_subject(guard: Guard) -> str:
    """What a guard guards: its first ``L[...]``/``G[...]`` access chain (``L['x'].size()[0]``)."""
    return subject_of(guard.expr)


def compare_guards(a: tuple[Guard, ...], b: tuple[Guard, ...]) -> tuple[GuardChange, ...]:
    """Guards paired by kind and subject (in order), then compared without volatile ids."""
    def grouped(guards: tuple[Guard, ...]) -> dict[tuple[str, str], list[str]]:
        out: dict[tuple[str, str], list[str]] = {}
        for g in guards:
            if g.expr:
                out.setdefault((g.kind, guard_subject(g)), []).append(g.expr)
        return out

    ga, gb = grouped(a), grouped(b)
    changes: list[GuardChange] = []
    for key in [*ga, *(k for k in gb if k not in ga)]:
        old, new = ga.get(key, []), gb.get(key, [])
        for i in range(max(len(old), len(new))):
            before = old[i] if i < len(old) else ""
            after = new[i] if i < len(new) else ""
            if normalized(before) == normalized(after):
                continue
            status = "added" if not before else "removed" if not after else "changed"
            changes.append(GuardChange(status=status, kind=key[0], subject=key[1],
                                       before=before, after=after))  # fmt: skip
    return tuple(changes)


def compare_kernels(
    a: tuple[Kernel, ...],
    b: tuple[Kernel, ...],
    a_ids: dict[str, str] | None = None,
    b_ids: dict[str, str] | None = None,
) -> KernelDiff:
    """Kernel counts, fusion groups and code, pairing kernels by name then by group.

    ``a_ids``/``b_ids`` map post-grad node names to stable identities; groups compare
    by identity where one is known.
    """
    def names(k: Kernel) -> tuple[str, ...]:
        return tuple(sorted(k.post_grad_nodes or k.source_nodes))

    side = {id(k): a_ids or {} for k in a} | {id(k): b_ids or {} for k in b}

    def group(k: Kernel) -> tuple[str, ...]:
        ids = side[id(k)]
        return tuple(sorted(ids.get(n, n) for n in names(k)))

    a_by_name = {k.name: k for k in a}
    pairs: dict[str, Kernel] = {}
    unpaired_b: list[Kernel] = []
    for k in b:
        if k.name in a_by_name:
            pairs[k.name] = a_by_name.pop(k.name)
        else:
            unpaired_b.append(k)
    unpaired_a = list(a_by_name.values())
    added = []
    for k in unpaired_b:
        partner = next((o for o in unpaired_a if group(k) and group(o) == group(k)), None)
        if partner is None:
            added.append(k.name)
        else:
            unpaired_a.remove(partner)
            pairs[k.name] = partner
    removed = tuple(k.name for k in unpaired_a)
    b_by_name = {k.name: k for k in b}
    changed = tuple(name for name, old in pairs.items()
                    if normalized(old.source) != normalized(b_by_name[name].source))  # fmt: skip
    fusion_changed = sorted(map(group, a)) != sorted(map(group, b))
    return KernelDiff(a_count=len(a), b_count=len(b), a_groups=tuple(names(k) for k in a),
                      b_groups=tuple(names(k) for k in b), added=tuple(added),
                      removed=removed, changed_code=changed,
                      fusion_changed=fusion_changed)  # fmt: skip


def _difference(before: str, after: str) -> tuple[str, str]:
    """The arguments that differ between two guard expressions of the same shape
    (``check_tensor(L['x'], ..., size=[8, 4], ...)``), else the expressions whole."""
    a_items, b_items = _call_items(before), _call_items(after)
    if a_items and len(a_items) == len(b_items):
        pairs = [(x, y) for x, y in zip(a_items, b_items, strict=True)
                 if normalized(x) != normalized(y)]  # fmt: skip
        if pairs:
            return ", ".join(x for x, _ in pairs), ", ".join(y for _, y in pairs)
    return before or "nothing", after or "nothing"


def _call_items(text: str) -> list[str]:
    """The top-level arguments of the first call in ``text`` (``f(a, [b, c])`` -> a, [b, c])."""
    open_at = text.find("(")
    if open_at < 0:
        return []
    items, depth, start = [], 0, open_at + 1
    for i in range(open_at, len(text)):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                items.append(text[start:i].strip())
                return items
        elif ch == "," and depth == 1:
            items.append(text[start:i].strip())
            start = i + 1
    return []


def line_diff_lines(a: str, b: str, width: int = 3) -> list[str]:
    """A unified-diff excerpt of two texts (for ``Diff.to_text``)."""
    return list(difflib.unified_diff(a.splitlines(), b.splitlines(), "a", "b", n=width,
                                     lineterm=""))[2:]  # fmt: skip
