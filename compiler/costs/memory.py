"""Where a compiled program's memory goes: ``compiler.memory(exp)``.

Per compile, the tensors AOTAutograd's partitioner saved for the backward: the forward
graph's outputs whose descriptor is ``SavedForBackwardsAOTOutput`` (torch 2.13), each
with its node, shape, dtype, bytes and the user's source line (the forward node's
``# File:`` comment). Without descriptors (older torch) the backward graph's
placeholders that are not tangents are the saved tensors, by name. Bytes are per
tensor (elements times element size, as the printed metadata says); a saved view
shares its base's storage, so the total is what the backward receives, an upper bound
on what it keeps alive. A dimension that is a symbol (``s77``) has no byte count: the
size is then kept as text (``256*s77``) and the total says it is partial.

On CUDA, ``explore(measure=True)`` also measures eager and compiled peak memory, forward
and backward apart, and the CUDA graph pools (``compiler.measure.memory_peak``); they are
in ``Memory.peaks``.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.measure.memory_peak import PeakMemory, from_counters
from compiler.model import Compile, Exploration, Graph, Node, SourceLoc
from compiler.parse.words.memory import saved_index, size_bytes
from compiler.parse.words.names import (
    descriptors,
    input_index,
    input_target,
    module_path_of_placeholder,
)

_MIB = 1024 * 1024


@dataclass(frozen=True)
class SavedTensor:
    """One tensor (or SymInt) the forward hands to the backward.

    ``kind`` is ``activation`` (computed in the forward), ``parameter`` (a lifted
    parameter or buffer, alive anyway), ``input`` (a graph input) or ``symint``."""

    node: str
    kind: str
    shape: tuple[str, ...] = ()
    dtype: str = ""
    bytes: int | None = 0
    size: str = "0"
    source: SourceLoc | None = None
    module: str = ""


@dataclass(frozen=True)
class CompileMemory:
    """The saved-for-backward tensors of one compile, in the backward's order."""

    compile_id: str
    saved: tuple[SavedTensor, ...] = ()
    compile: str = ""  # the compile's key (``Compile.key``): what a view selects

    @property
    def nodes(self) -> frozenset[str]:
        """The saved nodes' names: forward graph nodes, and the backward's placeholders."""
        return frozenset(s.node for s in self.saved)

    @property
    def total_bytes(self) -> int:
        """Bytes of every saved tensor whose size is known."""
        return sum(s.bytes or 0 for s in self.saved)

    @property
    def activation_bytes(self) -> int:
        """Bytes of the saved tensors computed in the forward (what checkpointing trims)."""
        return sum(s.bytes or 0 for s in self.saved if s.kind == "activation")

    @property
    def symbolic(self) -> tuple[str, ...]:
        """Sizes left as text because a dimension is symbolic (the total omits them)."""
        return tuple(s.size for s in self.saved if s.bytes is None)


@dataclass(frozen=True)
class Memory:
    """``compiler.memory(exp)``: saved for backward per compile, and measured peaks."""

    compiles: tuple[CompileMemory, ...] = ()
    peaks: tuple[PeakMemory, ...] = ()

    def peak(self, label: str) -> PeakMemory | None:
        """The measured peak called ``label`` (``eager``, ``compiled``), or None."""
        return next((p for p in self.peaks if p.label == label), None)

    def of_compile(self, key: str) -> CompileMemory | None:
        """What the compile whose ``Compile.key`` is ``key`` saves, or None."""
        return next((m for m in self.compiles if m.compile == key), None)

    def table(self) -> str:
        """A Markdown table of saved-for-backward totals and measured peaks (MiB).

        >>> print(Memory().table())
        No tensors saved for backward, and no measured peaks.
        """
        lines = []
        rows = [c for c in self.compiles if c.saved]
        if rows:
            lines += ["| compile | saved tensors | saved MiB | of which activations MiB |",
                      "|---|---:|---:|---:|"]  # fmt: skip
            for c in rows:
                more = f" + {len(c.symbolic)} symbolic" if c.symbolic else ""
                lines.append(
                    f"| {c.compile_id} | {len(c.saved)} | {c.total_bytes / _MIB:.2f}{more} | "
                    f"{c.activation_bytes / _MIB:.2f} |"
                )
        if self.peaks:
            if lines:
                lines.append("")
            lines += ["| run | forward peak MiB | backward peak MiB | held for backward MiB "
                      "| CUDA graph pool MiB |", "|---|---:|---:|---:|---:|"]  # fmt: skip
            for p in self.peaks:
                bwd = "" if p.backward_bytes is None else f"{p.backward_bytes / _MIB:.1f}"
                held = "" if p.held_bytes is None else f"{p.held_bytes / _MIB:.1f}"
                lines.append(
                    f"| {p.label} | {p.forward_bytes / _MIB:.1f} | {bwd} | {held} | "
                    f"{p.pool_bytes / _MIB:.1f} |"
                )
        return "\n".join(lines) or "No tensors saved for backward, and no measured peaks."


def memory(exp: Exploration) -> Memory:
    """Saved-for-backward tensors per compile, and the peaks measured at capture: worked
    out on the first call, a value of the Exploration's ``derived`` (the graph panes'
    saved marks and the memory pane read the same one).

    >>> import torch, compiler
    >>> lin = torch.nn.Linear(4, 4)
    >>> exp = compiler.explore(lambda x: lin(x).relu().sum(), torch.randn(2, 4),
    ...                        backend="aot_eager")  # doctest: +SKIP
    >>> compiler.memory(Exploration(source="")).compiles
    ()
    """
    found: Memory = exp.derived.named("memory", lambda: _memory(exp)).get()
    return found


def _memory(exp: Exploration) -> Memory:
    compiles = tuple(m for c in exp.compiles if (m := compile_memory(c)) is not None)
    return Memory(compiles=compiles, peaks=tuple(from_counters(exp.counters)))


def compile_memory(c: Compile) -> CompileMemory | None:
    """The saved-for-backward tensors of one compile; None where it has no backward."""
    fwd = c.graphs.get("aot_forward_graph")
    bwd = c.graphs.get("aot_backward_graph")
    if fwd is None or bwd is None:
        return None
    in_desc, out_desc = descriptors(fwd.text)
    saved = sorted(
        (i, name) for desc, name in out_desc.items() if (i := saved_index(desc)) is not None
    )
    names = [name for _, name in saved]
    if not names:  # no descriptors: the backward's placeholders, tangents aside
        names = [
            n.name for n in bwd.nodes if n.op == "placeholder" and not n.name.startswith("tangents")
        ]
    nodes = {n.name: n for n in fwd.nodes if not n.module}
    dynamo = c.graphs.get("dynamo_output_graph")
    placeholders = [n.target for n in dynamo.nodes if n.op == "placeholder"] if dynamo else []
    return CompileMemory(
        compile_id=str(c.compile_id),
        compile=c.key,
        saved=tuple(_saved(name, nodes.get(name), in_desc, bwd, placeholders) for name in names),
    )


def _saved(
    name: str, node: Node | None, in_desc: dict[str, str], bwd: Graph, placeholders: list[str]
) -> SavedTensor:
    if node is None:  # take the backward's placeholder of that name
        node = bwd.node(name)
    if node is None or not node.meta:
        return SavedTensor(node=name, kind="symint" if node is not None else "unknown")
    meta = node.meta[0]
    nbytes, size = size_bytes(meta.shape, meta.dtype)
    if node.op == "placeholder":
        desc = in_desc.get(name, "")
        i = input_index(desc, name)
        target = placeholders[i] if 0 <= i < len(placeholders) else ""
        lifted = input_target(desc) or module_path_of_placeholder(target) is not None
        kind = "parameter" if lifted else "input"
    else:
        kind = "activation"
    module = node.module_stack[-1] if node.module_stack else ""
    return SavedTensor(name, kind, meta.shape, meta.dtype, nbytes, size, node.source, module)
