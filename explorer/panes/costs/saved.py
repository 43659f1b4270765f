"""The saved-for-backward marks of the graph panes: the nodes to outline, by the names
``compiler.memory`` reports. Apart from the memory pane (``memory.py``), which shows the
same tensors: a graph pane needs only these, not that pane's classes.
"""

from __future__ import annotations

from compiler import Compile, Exploration, memory
from compiler.model.stages import stage_keys

MIB = 2**20
# graphs whose node names are the partitioner's: the saved nodes are found there by name
SAVED_STAGES = frozenset({"aot_forward_graph", "aot_backward_graph", *stage_keys(family="joint")})


def size_text(n: int | None, size: str) -> str:
    """A saved tensor's size: its bytes, or its elements where torch gave no bytes.

    Example:
        >>> size_text(2048, "512"), size_text(None, "s0*4")
        ('2,048 bytes', 's0*4 elements')
    """
    if n is None:
        return f"{size} elements"
    return f"{n:,} bytes" if n < MIB else f"{n:,} bytes ({n / MIB:.1f} MiB)"


def saved_marks(
    exp: Exploration, c: Compile, stage: str, names: tuple[str, ...]
) -> tuple[tuple[int, str], ...]:
    """(node index, "saved for backward: N bytes") for each node of a graph pane of
    ``stage`` that ``compiler.memory`` says the forward saves for the backward."""
    if stage not in SAVED_STAGES:
        return ()
    cm = memory(exp).of_compile(c.key)
    if cm is None:
        return ()
    size = {
        s.node: size_text(s.bytes, s.size) if s.kind != "symint" else "a SymInt" for s in cm.saved
    }
    return tuple((i, f"saved for backward: {size[n]}") for i, n in enumerate(names) if n in size)
