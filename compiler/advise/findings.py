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


_MARK = {"problem": "Problem", "warning": "Warning", "info": "Note"}


def to_markdown(findings: tuple[Finding, ...] | list[Finding]) -> str:
    """The findings as a Markdown section (``## Findings``), most important first.

    Torch's own words and the suggestions' code blocks are kept as they are; ids go in
    backticks. An empty tuple gives a one-line section saying nothing was found.

    Example:
        >>> f = Finding(kind="graph_break.logging", severity="problem", title="print breaks")
        >>> to_markdown((f,)).splitlines()[2]
        '1. **Problem** print breaks'
    """
    out = ["## Findings", ""]
    if not findings:
        out.append("No problems found: no graph breaks, recompiles or slow parts to report.")
        return "\n".join(out) + "\n"
    for i, f in enumerate(findings, start=1):
        impact = f" (costs {f.impact})" if f.impact else ""
        out.append(f"{i}. **{_MARK.get(f.severity, f.severity)}** {f.title}{impact}")
        for e in f.evidence:
            where = [f"`{v}`" for v in (e.compile, e.stage, e.src, e.node, e.kernel) if v]
            out.append(f"   - {e.text}" + (f" — {' · '.join(where)}" if where else ""))
        if f.suggestion:
            out.append("")
            out.extend(f"   {line}" if line else "" for line in f.suggestion.splitlines())
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
