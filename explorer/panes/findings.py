"""The findings pane: the advisor's findings (``Exploration.findings()``), each evidence
a selection. Its own module, since the memory pane lists the memory findings too and the
panes that draw graphs and kernels import that one."""

from __future__ import annotations

from compiler import Exploration
from compiler.advise.findings import Evidence, suggestion_parts, tried_summary
from compiler.link import ids

from .labels import group_of, label_of
from .types import EvidenceLink, FindingItem, FindingsPane

__all__ = ["build_findings"]


def _links(evidence: tuple[Evidence, ...]) -> tuple[EvidenceLink, ...]:
    return tuple(
        EvidenceLink(
            text=e.text, compile=e.compile, stage=e.stage, src=e.src, node=e.node, kernel=e.kernel
        )
        for e in evidence
    )


def build_findings(exp: Exploration, compile_key: str | None, pane_id: str) -> FindingsPane:
    """The advisor's findings (``Exploration.findings()``), each evidence a selection, the
    suggestion split into text and code (``suggestion_parts``).

    Example:
        >>> import compiler
        >>> build_findings(compiler.Exploration(source="live"), None, "findings").items
        ()
    """
    items = tuple(
        FindingItem(
            kind=f.kind,
            severity=f.severity,
            title=f.title,
            suggestion=suggestion_parts(f.suggestion),
            impact=f.impact,
            evidence=_links(f.evidence),
            chain=_links(f.chain),
            tried=tried_summary(f),
        )
        for f in exp.findings()
    )
    return FindingsPane(
        id=ids.FINDINGS, stage="findings", label=label_of("findings"), group=group_of("findings"),
        items=items,
    )  # fmt: skip
