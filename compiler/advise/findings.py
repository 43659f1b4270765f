"""The advisor's vocabulary: a finding and the evidence it links to.

Findings are computed from an ``Exploration`` (``Exploration.findings()``), never stored
in it, so an old recording gets the advisor's newest diagnosis.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from compiler.link.ids import CompileKey, KernelId, PaneId, SrcKey
from compiler.model import Fix, Options, TriedFix

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


# what ``dynamic=True`` sets (torch/_dynamo/eval_frame.py, ``make_set_enable_dynamic``)
_DYNAMIC_CONFIG = "torch._dynamo.config.assume_static_by_default = False"
# a call this much slower or faster than before is beyond what a busy machine varies
_NOISE = 1.25


def fix_reach(fix: Fix, options: Options | None) -> tuple[bool, str]:
    """Whether ``compiler.try_fixes`` can apply ``fix`` to the target ``options`` were
    recorded with, and how (or why not), in a sentence.

    A fix that changes the ``torch.compile`` call (``dynamic``, ``backend``) reaches only
    a target the explorer compiles itself; where the target calls torch.compile itself
    (``Options.wrapped`` False), ``dynamic`` is applied as the Dynamo setting it stands
    for, which reaches the user's own compile, and ``backend`` cannot be.

    Example:
        >>> fix_reach(Fix(kind="backend", value="aot_eager"), Options(wrapped=False))[0]
        False
        >>> fix_reach(Fix(kind="no_grad"), Options(wrapped=False))
        (True, '')
    """
    if options is None or options.wrapped or fix.kind not in ("dynamic", "backend"):
        return True, ""
    if fix.kind == "dynamic":
        return True, (
            f"Your code calls torch.compile itself, so the explorer tried `{_DYNAMIC_CONFIG}`, "
            "the setting `dynamic=True` stands for, around your own compile; a `dynamic=` "
            "your call passes wins over it: then change the call itself, e.g. "
            "`torch.compile(model.forward, dynamic=True)`."
        )
    return False, (
        "Not tried: your code calls torch.compile itself, so the explorer cannot change its "
        f'backend; change your call to `torch.compile(model, backend="{fix.value}")`.'
    )


def tried_summary(f: Finding) -> str:
    """One line saying what trying the fix did: ``graph breaks 5 -> 0, compiles 7 -> 1,
    31.2 -> 18.0 ms per call``; a try whose figures did not move as a failed try; the
    failure or why it was not tried otherwise.

    Example:
        >>> tried_summary(Finding(kind="k", severity="info", title="t", tried_note="Not tried."))
        'Not tried.'
    """
    t = f.tried
    if t is None:
        return f.tried_note
    label = t.fix.code or t.fix.kind
    if t.error:
        return f"Tried {label}: the fixed run failed: {t.error}"
    b, a = t.before, t.after
    counts = (
        ("graph breaks", b.graph_breaks, a.graph_breaks),
        ("graphs", b.graphs, a.graphs),
        ("compiles", b.compiles, a.compiles),
        ("recompiles", b.recompiles, a.recompiles),
    )
    timed = b.ms is not None and a.ms is not None and b.ms > 0
    # with every count the same, only a clearly faster call is something the fix did: a
    # slower one, or one within noise, is not a gain (and a busy machine makes either)
    faster = timed and (a.ms or 0.0) * _NOISE < (b.ms or 0.0)
    where = f" on {t.device}" if t.device else ""
    how = f" {f.tried_note}" if f.tried_note else ""
    if all(x == y for _, x, y in counts) and not faster:
        same = ", ".join(f"{name} {x}" for name, x, _ in counts if x) or "every count"
        ms = f"; {b.ms:.3g} -> {a.ms:.3g} ms per call{where}, no faster" if timed else ""
        return (
            f"Tried {label}, and it did not change the figures ({same} as before{ms}): "
            f"the fix did not reach the cause.{how}"
        )
    parts = [f"{name} {x} -> {y}" for name, x, y in counts if x or y]
    verdict = ""
    if timed:
        parts.append(f"{b.ms:.3g} -> {a.ms:.3g} ms per call{where}")
        if (a.ms or 0.0) > _NOISE * (b.ms or 0.0):
            # fewer compiles but slower calls: the user weighs one against the other
            verdict = "; each call got slower with the fix, so weigh it against what it saves"
    # how it was applied; what to do had it not reached is for a try that moved nothing
    how = how.split(";", 1)[0] + "." if ";" in how else how
    return f"Tried {label}: " + ", ".join(parts) + verdict + ("." + how if how else "")
