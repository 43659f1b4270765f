"""The advisor's vocabulary: a finding and the evidence it links to.

Findings are computed from an ``Exploration`` (``Exploration.findings()``), never stored
in it, so an old recording gets the advisor's newest diagnosis.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from compiler.link.ids import CompileKey, KernelId, PaneId, SrcKey
from compiler.model import Fix, TriedFix

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

    ``severity`` is ``problem``, ``warning`` or ``info``; ``impact`` is what it costs,
    counted from the Exploration (``"5 frames compiled without a graph, ..."``,
    ``"1.8 ms per call"``). ``suggestion`` is short Markdown (inline code and fenced
    blocks; ``suggestion_parts`` splits it for the views). ``chain`` is the path from
    the user's own line to the cause, outermost first, each frame a link. ``fix`` is the
    change the explorer can apply itself (``compiler.remedy.try_fixes``), ``tried`` what
    it measured when it did, and ``tried_note`` why it was not tried. ``cause`` is the
    cause key (``compiler.advise._common.cause_key``): two findings with the same key are
    one cause, and the advisor keeps one finding per key.
    """

    kind: str
    severity: str
    title: str
    evidence: tuple[Evidence, ...] = ()
    suggestion: str = ""
    impact: str = ""
    chain: tuple[Evidence, ...] = ()
    fix: Fix | None = None
    tried: TriedFix | None = None
    tried_note: str = ""
    cause: str = ""


@dataclass(**_FROZEN)
class SuggestionPart:
    """A piece of a suggestion: ``text``, ``code`` (inline) or ``block`` (a fenced code
    block, ``language`` its fence's language)."""

    kind: str
    text: str
    language: str = ""


_FENCE = re.compile(r"^```(?P<lang>[\w+-]*)\n(?P<code>.*?)^```[ \t]*$\n?", re.MULTILINE | re.DOTALL)
_INLINE = re.compile(r"`(?P<code>[^`\n]+)`")


def suggestion_parts(markdown: str) -> tuple[SuggestionPart, ...]:
    r"""A suggestion's Markdown as text, inline code and code blocks, so that a view draws
    code as code and never shows a fence; the report keeps the Markdown itself.

    Example:
        >>> [p.kind for p in suggestion_parts("Set `x`:\n```python\nx = 1\n```")]
        ['text', 'code', 'text', 'block']
    """
    out: list[SuggestionPart] = []

    def prose(text: str) -> None:
        at = 0
        for m in _INLINE.finditer(text):
            if m.start() > at:
                out.append(SuggestionPart(kind="text", text=text[at : m.start()]))
            out.append(SuggestionPart(kind="code", text=m["code"]))
            at = m.end()
        if text[at:].strip():
            out.append(SuggestionPart(kind="text", text=text[at:]))

    at = 0
    for m in _FENCE.finditer(markdown):
        prose(markdown[at : m.start()])
        out.append(SuggestionPart(kind="block", text=m["code"].rstrip("\n"),
                                  language=m["lang"] or "python"))  # fmt: skip
        at = m.end()
    prose(markdown[at:])
    return tuple(out)


def tried_summary(f: Finding) -> str:
    """One line saying what trying the fix did: ``graph breaks 5 -> 0, compiles 7 -> 1,
    31.2 -> 18.0 ms per call``; the failure or why it was not tried otherwise.

    Example:
        >>> tried_summary(Finding(kind="k", severity="info", title="t", tried_note="Not tried."))
        'Not tried.'
    """
    t = f.tried
    if t is None:
        return f.tried_note
    if t.error:
        return f"Tried {t.fix.code or t.fix.kind}: the fixed run failed: {t.error}"
    b, a = t.before, t.after
    parts = [
        f"{label} {x} -> {y}"
        for label, x, y in (
            ("graph breaks", b.graph_breaks, a.graph_breaks),
            ("graphs", b.graphs, a.graphs),
            ("compiles", b.compiles, a.compiles),
            ("recompiles", b.recompiles, a.recompiles),
        )
        if x or y
    ]
    verdict = ""
    if b.ms is not None and a.ms is not None:
        where = f" on {t.device}" if t.device else ""
        parts.append(f"{b.ms:.3g} -> {a.ms:.3g} ms per call{where}")
        if a.ms > 1.25 * b.ms:  # beyond what a busy machine varies between two runs
            # fewer compiles but slower calls: the user weighs one against the other
            verdict = "; each call got slower with the fix, so weigh it against what it saves"
    return f"Tried {t.fix.code or t.fix.kind}: " + ", ".join(parts) + verdict
