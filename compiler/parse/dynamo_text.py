"""Parse what Dynamo prints about a frame: guard trees, graph breaks, recompile reasons."""

from __future__ import annotations

import json
import re

from compiler.model import Derived, GraphBreak, Guard, Guards, RecompileReason, SourceLoc

# "| | +- TENSOR_MATCH: check_tensor(L['x'], ...)  # x.sin()  # t.py:3 in f"
_GUARD_LINE = re.compile(
    r"^(?P<indent>(?:\|\s)*)\+- (?P<kind>[A-Za-z_][\w.]*)(?::\s?(?P<rest>.*))?$"
)
_BREAK_AT = re.compile(r"Graph break (?:in user code )?at (?P<file>.+):(?P<line>\d+)")
_TB_FRAME = re.compile(r'^\s*File "(?P<file>.+)", line (?P<line>\d+), in (?P<fn>.+)$')
_USER_CODE_FILE = re.compile(
    r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<fn>\S+))?', re.MULTILINE
)
_SUBJECT = re.compile(r"[LG]\['[^']*'\](?:\.\w+(?:\(\))?|\[[^\]]*\])*")
_URL = re.compile(r"please visit: (?P<url>\S+)")
_QUOTE_OR_MARK = re.compile(r"['\"]|  #")


def parse_guards(tree: str, symbolic: tuple[str, ...] = ()) -> Guards:
    """Dynamo's guard tree text (``dynamo_cpp_guards_str``) with its guards parsed now
    (a capture or load parses them on first read: ``compiler/link/derive.py``).

    Example:
        >>> tree = "TREE_GUARD_MANAGER:\\n| +- GLOBAL_STATE: ___check_global_state()"
        >>> parse_guards(tree).guards[0].kind
        'GLOBAL_STATE'
    """
    return Guards(tree=tree, symbolic=symbolic, derived=Derived().known(guard_list(tree)))


def guard_list(tree: str) -> tuple[Guard, ...]:
    """The guards of a guard tree, in order: each keeps its tree depth and 1-based line in
    ``tree``; ``origin`` is the trailing ``# ...`` comment Dynamo adds (the user code
    that required the guard)."""
    guards = []
    for number, raw in enumerate(tree.split("\n"), start=1):
        m = _GUARD_LINE.match(raw.rstrip())
        if not m:
            continue
        rest = m["rest"] or ""
        expr, origin = _split_comment(rest)
        guards.append(
            Guard(
                kind=m["kind"], expr=expr, depth=m["indent"].count("|"), line=number, origin=origin
            )
        )
    return tuple(guards)


def _split_comment(text: str) -> tuple[str, str]:
    """Split ``expr  # comment`` at the first ``  #`` outside quotes.

    Example:
        >>> _split_comment("___check_obj_id(L['s'], '  #x')  # s = 1  # here")
        ("___check_obj_id(L['s'], '  #x')", 's = 1  # here')
    """
    first = text.find("  #")
    if first < 0:
        return text.strip(), ""
    if "'" not in text[:first] and '"' not in text[:first]:
        return text[:first].rstrip(), text[first + 3 :].strip()
    # quotes and comment marks only, found by one regex pass (a guard line can run to
    # thousands of characters: a character loop was most of a large guard tree's read)
    quote = ""
    for m in _QUOTE_OR_MARK.finditer(text):
        token = m.group()
        if quote:
            if token == quote:
                quote = ""
        elif token != "  #":
            quote = token
        else:
            i = m.end() - 1
            return text[:i].rstrip(), text[i + 1 :].strip()
    return text.strip(), ""


def parse_graph_break(text: str) -> GraphBreak:
    """Parse a ``dynamo_graph_break_reason`` artifact into reason, place and hints."""
    lines = text.split("\n")
    location = None
    m = _BREAK_AT.search(lines[0]) if lines else None
    user_stack = _user_stack(lines)
    if m:
        code = ""
        for frame in reversed(user_stack):
            if frame.filename == m["file"] and frame.line == int(m["line"]):
                code = frame.code
                function = frame.function
                break
        else:
            function = ""
        location = SourceLoc(filename=m["file"], line=int(m["line"]), function=function, code=code)
    elif user_stack:
        location = user_stack[-1]
    body = _reason_block(lines)
    hints = tuple(
        ln.strip()[len("Hint:") :].strip() for ln in body if ln.strip().startswith("Hint:")
    )
    summary = next(
        (ln.strip() for ln in body[1:] if ln.strip() and not ln.startswith(" ")),
        body[0].strip() if body else "",
    )
    url = _URL.search(text)
    return GraphBreak(
        reason="\n".join(body).strip(),
        summary=summary,
        location=location,
        hints=hints,
        user_stack=user_stack,
        documentation=url["url"] if url else "",
        text=text,
    )


def _reason_block(lines: list[str]) -> list[str]:
    """Lines from ``Graph Break Reason:`` up to the user traceback."""
    out: list[str] = []
    started = False
    for ln in lines:
        if ln.startswith("Graph Break Reason:"):
            started = True
            out.append(ln[len("Graph Break Reason:") :].strip())
            continue
        if started:
            if ln.startswith(("User code traceback:", "Traceback (most recent call last)")):
                break
            out.append(ln)
    if not started:
        out = [ln for ln in lines[1:] if ln.strip()][:20]
    return out


def _user_stack(lines: list[str]) -> tuple[SourceLoc, ...]:
    frames: list[SourceLoc] = []
    try:
        start = lines.index("User code traceback:") + 1
    except ValueError:
        return ()
    i = start
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("Traceback (most recent call last)") or (
            not ln.strip() and i + 1 < len(lines) and lines[i + 1].startswith("Traceback")
        ):
            break
        m = _TB_FRAME.match(ln)
        if m:
            code = (
                lines[i + 1].strip()
                if i + 1 < len(lines) and not _TB_FRAME.match(lines[i + 1])
                else ""
            )
            frames.append(
                SourceLoc(filename=m["file"], line=int(m["line"]), function=m["fn"], code=code)
            )
        i += 1
    return tuple(frames)


def parse_recompile_reasons(payload: str) -> tuple[RecompileReason, ...]:
    """Parse a ``recompile_reasons`` artifact: ``"0/0: tensor 'x' size mismatch..."``."""
    try:
        items = json.loads(payload)
    except json.JSONDecodeError:
        items = [payload]
    if isinstance(items, str):
        items = [items]
    if not isinstance(items, list):
        items = [str(items)]
    reasons = []
    for item in items:
        text = str(item).strip()
        previous, sep, reason = text.partition(": ")
        if not sep or "/" not in previous:
            previous, reason = "", text
        reasons.append(RecompileReason(previous=previous, reason=reason.strip(), text=text))
    return tuple(reasons)


def parse_stack_trace(text: str) -> tuple[SourceLoc, ...]:
    """Frames of a Python-style stack trace (``File "x.py", line 3, in f``)."""
    lines = text.split("\n")
    frames = []
    for i, ln in enumerate(lines):
        m = _TB_FRAME.match(ln)
        if m:
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            code = "" if _TB_FRAME.match(nxt) or set(nxt) <= {"^", "~", " "} else nxt
            frames.append(
                SourceLoc(filename=m["file"], line=int(m["line"]), function=m["fn"], code=code)
            )
    return tuple(frames)


def subject_of(expr: str) -> str:
    """What a guard's text guards: its longest ``L[...]``/``G[...]`` access chain.

    Example:
        >>> subject_of("check_tensor(L['x'], Tensor, size=[2])  # L['x'].size()[0]")
        "L['x'].size()[0]"
    """
    found = _SUBJECT.findall(expr)
    # a source= tree entry names its subject first; a check names the deepest access
    return max(found, key=len) if found else ""


def user_code_location(message: str) -> SourceLoc | None:
    """The user line a Dynamo error message names last in its ``from user code:``
    stack, or None.

    Example:
        >>> user_code_location('boom\\nfrom user code:\\n  File "/m.py", line 4, in f')
        SourceLoc(filename='/m.py', line=4, function='f', code='')
    """
    _, found, stack = message.partition("from user code:")
    frames = list(_USER_CODE_FILE.finditer(stack)) if found else []
    if not frames:
        return None
    last = frames[-1]
    return SourceLoc(filename=last["file"], line=int(last["line"]), function=last["fn"] or "")
