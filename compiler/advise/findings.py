"""The advisor's vocabulary: a finding and the evidence it links to.

Findings are computed from an ``Exploration`` (``Exploration.findings()``), never stored
in it, so an old recording gets the advisor's newest diagnosis.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.link.ids import CompileKey, KernelId, PaneId, SrcKey

_FROZEN = {"frozen": True, "kw_only": True, "slots": True}

SEVERITIES = ("problem", "warning", "info")


@dataclass(**_FROZEN)
class Evidence:
    """One place a finding points at; each field is an id the explorer can select.

    ``compile`` is a ``Compile.key``, ``stage`` a pane id of that compile
    (``dynamo_graph_break_reason``, ``forward/inductor_output_code``, ...), ``src`` a
    source key ``file:line``, ``node`` a node name in that stage's graph, ``kernel`` a
    ``Kernel.id``, each made by ``compiler.link.ids``; ``text`` says what is there, with
    the numbers.
    """

    text: str
    compile: CompileKey | None = None
    stage: PaneId | None = None
    src: SrcKey | None = None
    node: str | None = None
    kernel: KernelId | None = None


@dataclass(**_FROZEN)
class Finding:
    """One diagnosis: what is wrong (or worth knowing), the proof, and what to change.

    ``severity`` is ``problem``, ``warning`` or ``info``; ``impact`` is an estimate of
    what it costs (``"3 extra graphs"``, ``"1.8 ms per call"``) where one can be made.
    """

    kind: str
    severity: str
    title: str
    evidence: tuple[Evidence, ...] = ()
    suggestion: str = ""
    impact: str = ""
