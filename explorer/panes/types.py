"""The panes the front-end draws: one frozen dataclass per pane kind. Here the kinds a
page of any trace shows and the parts panes share; a kind that only some runs show keeps
its classes beside its builder (``runtime.py``, ``ranks.py``, ``costs/``, ``checks/``),
imported when a pane of that kind is built (``kinds.py``).

A pane is built by a pure function of the Exploration (``explorer.panes.build_pane``)
when the user opens it, and crosses to the browser as JSON (``pane_json``). Text is
sent verbatim, one entry per line of ``text.split("\\n")`` in the per-line tables
(``line_src``, ``source_line``; a graph's and an output code's the browser derives from
their nodes and kernels); the browser highlights it. ``explorer.panes.typedefs`` turns
these classes into the JSDoc typedefs ``explorer/static/panes/typedefs.js`` holds, and a
test keeps both in step.

Ids: a source key is ``file:line``; a kernel id is ``Kernel.id``; a node is its index
in the columns of ``GraphPane.nodes`` (its ``name`` in the selection).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler.advise.findings import SuggestionPart
from compiler.model import KernelTiming

_FROZEN = {"frozen": True, "kw_only": True, "slots": True}


@dataclass(**_FROZEN)
class PaneError:
    """A stage that could not be captured or parsed (``compiler.StageError``); where the
    explorer's own code failed, its ``traceback``."""

    stage: str
    message: str
    traceback: str = ""


@dataclass(**_FROZEN)
class PaneHead:
    """What every pane starts with: ``kind`` (which renderer the browser picks; each pane
    class sets its default), ``id``, the ``stage`` it shows, its ``label`` and ``group``
    in the pane list, and the ``errors`` of its stage."""

    kind: str
    id: str
    stage: str
    label: str
    group: str
    errors: tuple[PaneError, ...] = ()


@dataclass(**_FROZEN)
class Block:
    """One titled text of a code pane (original bytecode, guards, a schedule)."""

    title: str
    note: str
    text: str
    language: str
    line_src: tuple[str | None, ...] = ()


@dataclass(**_FROZEN)
class CodePane(PaneHead):
    """Texts shown as code: bytecode, guards."""

    kind: str = "code"
    blocks: tuple[Block, ...] = ()


@dataclass(**_FROZEN)
class Meta:
    """A node output's tensor metadata, as torch printed it."""

    dtype: str
    shape: tuple[str, ...]
    stride: tuple[str, ...]
    device: str


@dataclass(**_FROZEN)
class SourceRef:
    """A user source location, once per graph pane (``GraphPane.sources``): its source
    key ``file:line`` (None without a file or line), function and line of code, and
    the short label views show for it (``model.py:12``; "" without a key)."""

    src: str | None
    function: str
    code: str
    label: str = ""


@dataclass(**_FROZEN)
class GraphNodes:
    """A graph's FX nodes as columns: node ``i`` is entry ``i`` of each. Values nodes share
    are indices into the pane's tables: ``op`` into ``GraphPane.ops``, ``target`` into
    ``targets``, ``meta`` into ``metas``, ``module_stack`` into ``stacks``, ``source`` into
    ``sources`` (None: no user source), ``kernels`` into ``kernel_sets``. ``inputs`` are
    node indices (the browser inverts them into each node's users); ``line`` is the node's
    1-based line in ``GraphPane.text``, which shows its arguments. (Columns, not one
    object per node: a training step's graphs have 65,000 nodes, and their keys were most
    of the page.)"""

    name: tuple[str, ...] = ()
    op: tuple[int, ...] = ()
    target: tuple[int, ...] = ()
    meta: tuple[int, ...] = ()
    module_stack: tuple[int, ...] = ()
    inputs: tuple[tuple[int, ...], ...] = ()
    source: tuple[int | None, ...] = ()
    kernels: tuple[int, ...] = ()
    line: tuple[int, ...] = ()


@dataclass(**_FROZEN)
class SubgraphLink:
    """A higher-order op node and a nested graph it runs (``compiler.link.subgraphs``):
    ``caller`` is the op's node index, ``first``..``last`` the nested graph's node indices
    (its nodes are contiguous), ``role`` what it is to the op (``true branch``, ``body``,
    ``score function``, ``region``), ``id`` the nested graph's id (``ids.subgraph_id``)."""

    caller: int
    first: int
    last: int
    op: str
    role: str
    module: str
    id: str


@dataclass(**_FROZEN)
class GraphPane(PaneHead):
    """A graph: its text verbatim and its nodes, laid out by the browser's GraphCanvas.

    ``file_comments`` holds (1-based line, ``sources`` index) of each ``# File:`` comment
    of the text (``compiler.parse.graph_text.comment_sources``). The browser expands the tables
    once, when the pane arrives (``graphView`` in ``explorer/static/store.js``), into one
    object per node and the per-line tables of the text view: a node's line links to the
    node and its source, a comment's line to the location it names."""

    kind: str = "graph"
    text: str
    language: str = "python"
    file_comments: tuple[tuple[int, int], ...] = ()
    parse_error: str | None = None
    nodes: GraphNodes = field(default_factory=GraphNodes)
    ops: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    sources: tuple[SourceRef, ...] = ()
    metas: tuple[tuple[Meta, ...], ...] = ()
    stacks: tuple[tuple[str, ...], ...] = ()
    kernel_sets: tuple[tuple[str, ...], ...] = ()
    subgraphs: tuple[SubgraphLink, ...] = ()
    # (node index, what it holds) of the nodes the forward saves for the backward
    # (``compiler.memory``), in the forward, backward and joint graphs
    saved: tuple[tuple[int, str], ...] = ()


@dataclass(**_FROZEN)
class KernelInfo:
    """A kernel of an output code and the user source lines it came from."""

    id: str
    name: str
    language: str
    first_line: int
    last_line: int
    call_lines: tuple[int, ...]
    post_grad_nodes: tuple[str, ...]
    source_nodes: tuple[str, ...]
    src: tuple[str, ...]
    timing: KernelTiming | None = None
    grid: tuple[int, ...] = ()
    lowering: str | None = None


@dataclass(**_FROZEN)
class OutputCodePane(PaneHead):
    """Inductor's generated module verbatim, with its kernels. The browser marks the kernel
    each line belongs to (``first_line`` to ``last_line`` and ``call_lines`` of each, in
    order; a C++ kernel's own source, inside the string literal, read as C++) when the
    pane arrives (``outputCodeView`` in ``explorer/static/store.js``)."""

    kind: str = "output_code"
    text: str
    language: str = "python"
    kernels: tuple[KernelInfo, ...] = ()
    path: str = ""


@dataclass(**_FROZEN)
class FusedInfo:
    """A scheduler node after fusion."""

    name: str
    kind: str
    members: tuple[str, ...]
    buffers: tuple[str, ...]
    extern_kernel: str


@dataclass(**_FROZEN)
class SchedulePane(PaneHead):
    """Inductor's schedule before and after fusion."""

    kind: str = "schedule"
    blocks: tuple[Block, ...] = ()
    fused: tuple[FusedInfo, ...] = ()


@dataclass(**_FROZEN)
class Phase:
    """A timed compiler phase."""

    name: str
    seconds: float
    depth: int


@dataclass(**_FROZEN)
class MetricsPane(PaneHead):
    """Compile time, cache events and counters."""

    kind: str = "metrics"
    summary: tuple[tuple[str, str], ...] = ()
    phases: tuple[Phase, ...] = ()
    cache_events: tuple[str, ...] = ()
    counters: tuple[tuple[str, int], ...] = ()


@dataclass(**_FROZEN)
class EvidenceLink:
    """A place a finding points at, as a selection the explorer can jump to."""

    text: str
    compile: str | None
    stage: str | None
    src: str | None
    node: str | None
    kernel: str | None


@dataclass(**_FROZEN)
class FindingItem:
    """One finding of the advisor."""

    kind: str
    severity: str
    title: str
    # text, inline code and code blocks (``compiler.advise.findings.suggestion_parts``):
    # the browser draws code as code and never sees a Markdown fence
    suggestion: tuple[SuggestionPart, ...]
    impact: str
    evidence: tuple[EvidenceLink, ...]
    # the frames from the user's own line to the cause, outermost first
    chain: tuple[EvidenceLink, ...] = ()
    # what trying the fix measured, or why it was not tried (``tried_summary``)
    tried: str = ""


@dataclass(**_FROZEN)
class FindingsPane(PaneHead):
    """The advisor's ranked findings for the whole exploration."""

    kind: str = "findings"
    items: tuple[FindingItem, ...] = ()


# Every pane class extends PaneHead; explorer/panes/kinds.py KINDS lists them, once.
Pane = PaneHead
