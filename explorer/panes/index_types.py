"""The index: everything the front-end's first paint needs, before any pane is built
(``explorer.panes.build_index`` makes it). Split from ``types.py``, the panes themselves;
``explorer.panes.typedefs`` reads both modules."""

from __future__ import annotations

from dataclasses import dataclass, field

from .types import _FROZEN, PaneError


@dataclass(**_FROZEN)
class PaneRef:
    """A pane a compile has, before it is built."""

    id: str
    stage: str
    label: str
    group: str
    kind: str


@dataclass(**_FROZEN)
class KernelRef:
    """Where a kernel of a compile is shown: its name and the output-code pane that holds
    it (None when its output code has no text to show)."""

    name: str
    pane: str | None


@dataclass(**_FROZEN)
class CompileEntry:
    """One compile in the compile tree; ``parent`` is ``Compile.parent``; ``kernels``
    maps each ``Kernel.id`` of the compile to where it is shown, so the browser opens a
    kernel's output code without taking ids apart."""

    key: str
    compile_id: str
    rank: int | None
    label: str
    code_name: str
    status: str
    is_resume: bool
    attempts: int
    restart_reasons: tuple[str, ...]
    markers: tuple[str, ...]
    parent: str | None
    src: str | None
    errors: tuple[PaneError, ...]
    panes: tuple[PaneRef, ...]
    kernels: dict[str, KernelRef] = field(default_factory=dict)
    # how the compile tree names the frame: ``code_name``, or ``resume f at line 12``
    # for a resume function (``Compile.resumes``)
    name: str = ""
    # the pane this compile opens on when the stage on show has no pane here
    # (``explorer.panes.labels.default_pane``): Python decides, the browser reads it
    default_stage: str | None = None


@dataclass(**_FROZEN)
class SourceWindow:
    """Consecutive lines of a user file, from line ``start``, verbatim; ``src`` holds the
    source key of each line the panes link to (None for the others)."""

    start: int
    lines: tuple[str, ...]
    src: tuple[str | None, ...] = ()


@dataclass(**_FROZEN)
class SourceFile:
    """A user file the exploration links to, as windows around the linked lines;
    ``short_name`` is how the source panel titles it (``…/models/gpt2/modeling_gpt2.py``)."""

    filename: str
    short_name: str
    available: bool
    note: str
    windows: tuple[SourceWindow, ...]


@dataclass(**_FROZEN)
class Selection:
    """What the user looks at: ids from the index and the panes, each or None."""

    compile: str | None = None
    stage: str | None = None
    src: str | None = None
    node: str | None = None
    kernel: str | None = None


@dataclass(**_FROZEN)
class Index:
    """All the first paint needs: the compile tree, each compile's panes (unbuilt), the
    source table (``src_keys``: the palette colour of a key is its index mod 8; ``src_labels``:
    the short label of each key, ``model.py:12``)."""

    title: str
    source: str
    target: str
    environment: dict[str, str | float | None]
    options: dict[str, str | bool | dict[str, str] | None] | None
    notes: tuple[str, ...]
    errors: tuple[PaneError, ...]
    labels: dict[str, str]
    src_keys: tuple[str, ...]
    src_labels: tuple[str, ...]
    sources: tuple[SourceFile, ...]
    compiles: tuple[CompileEntry, ...]
    findings: PaneRef | None = None
    default_selection: Selection = field(default_factory=Selection)
    # the ids of the panes of the whole exploration (findings, ranks): one pane for every
    # compile, so the page and the widget keep one copy each
    exploration_panes: tuple[str, ...] = ()
