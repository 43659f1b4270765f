"""What a recompile's failed guard and a size guard say (Dynamo's ``recompile_reasons``,
its ``TENSOR_MATCH`` guards and symbolic guards), in plain fields; only this module
matches their wording."""

from __future__ import annotations

import re
from dataclasses import dataclass

from compiler.parse.guards.sources import closure_variable, printed_key, read_guard, source_name

_TENSOR = re.compile(
    r"tensor '(?P<input>.+?)' (?P<what>[\w ]+?) mismatch(?: at index (?P<dim>\d+))?"
)
# Dynamo's sources: L['x'], kwargs['input_ids'], L['self'].weight -> the name a user wrote
_SOURCE_NAME = re.compile(r"^(?:\w+\[')?(?P<name>[\w.]+?)(?:'\])?$")
_ARG_VALUE = re.compile(
    r"^(?:len\((?:L\[')?(?P<len>[A-Za-z_]\w*)(?:'\])?\)"
    r"|(?:L\[')?(?P<name>[A-Za-z_]\w*)(?:'\])?(?:\[[^\]]*\])*)$"
)
_GLOBAL = re.compile(r"^G\['(?P<name>[^']+)'\]")
_VALUE = re.compile(r"^(?:L\[')?(?P<input>[A-Za-z_][\w.]*)(?:'\])?(?P<rest>[^#\n]*)")
_TB = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_ORIGIN = re.compile(r"#\s*(?P<file>\S+):(?P<line>\d+) in \S+\s*$")
_SIZE_ARG = re.compile(r"check_tensor\(L\['(?P<input>[^']+)'\].*?size=\[(?P<sizes>[^\]]*)\]")
_EQ = re.compile(r"^Eq\((?P<sym>\w+), (?P<value>-?\d+)\)$")
_CHANGE = re.compile(r"expected (?P<expected>-?\d+), actual (?P<actual>-?\d+)")
# Dynamo's source roots: a frame's local (L['x']) or global (G['x']); a wrapper's **kwargs
_ROOT = re.compile(r"^(?:[LG]\[')?(?P<root>[A-Za-z_]\w*)(?:'\])?")
_KWARG = re.compile(r"^kwargs\['(?P<name>[A-Za-z_]\w*)'\]")
_OPTIM_GROUP = re.compile(r"\.param_groups\[\d+\]\['(?P<key>\w+)'\]$")
_LIMIT = ("recompile limit", "recompile_limit", "cache_size_limit", "cache size limit")


@dataclass(frozen=True, slots=True)
class FailedGuard:
    """A recompile reason's failed guard, read.

    ``what`` is one of: a tensor property (``size``, ``dtype``, ``device``, ``stride``,
    ``requires_grad``...: ``input`` is the tensor's user name, ``dim`` the index where
    Dynamo names one), ``grad mode``, ``autocast`` or ``global state`` (``changed``: what
    Dynamo says changed), ``dict keys`` (``changed``: the key), ``list length``,
    ``object identity``, ``type``, ``closure cell`` (``changed``: the variable),
    ``training`` (``input``: the module's ``.training`` source), ``global`` (a global's
    name), ``number attribute`` (an int or float read from an object), ``attribute``
    (any other), ``value`` (an argument's name), or ``guard`` when none of these. Every
    source is in the one spelling of ``sources.source_name``.
    """

    text: str  # the guard alone: first line, without Dynamo's source comment and padding
    input: str
    what: str
    dim: str | None = None
    changed: str = ""
    changes: tuple[tuple[str, str], ...] = ()  # (expected, actual) sizes, in order
    tensor: bool = False  # a tensor property changed (``what`` names it)


def failed_guard(reason: str) -> FailedGuard:
    """Read a recompile reason (``RecompileReason.reason``).

    Example:
        >>> failed_guard("tensor 'x' size mismatch at index 0. expected 4, actual 5")
        FailedGuard(text="tensor 'x' size mismatch at index 0. expected 4, actual 5", \
input='x', what='size', dim='0', changed='', changes=(('4', '5'),), tensor=True)
    """
    first = reason.strip().split("\n", 1)[0]
    text = " ".join(first.split("  #", 1)[0].split())
    changes = tuple((m["expected"], m["actual"]) for m in _CHANGE.finditer(text))

    def of(input: str, what: str, changed: str = "") -> FailedGuard:
        return FailedGuard(text, input, what, None, changed, changes)

    m = _TENSOR.search(text)
    if m:
        name = _SOURCE_NAME.match(source_name(m["input"]))
        user = name["name"] if name else source_name(m["input"])
        return FailedGuard(text, user, m["what"].strip(), m["dim"], "", changes, True)
    if "global_state" in text.lower().replace(" ", "_"):
        changed = text.split("changed:", 1)[1].strip() if "changed:" in text else ""
        if changed == "grad_mode":
            return of("", "grad mode", changed)
        return of("", "autocast" if changed.startswith("autocast") else "global state", changed)
    read = read_guard(text)
    kind = _KINDS.get(read.kind, read.kind)
    if kind == "value" and not _ARG_VALUE.match(read.source):
        kind = "attribute"  # a string or object attribute: `self.mode == 'relu'`
    if kind == "value":
        root = _ROOT.match(read.source)
        return of(root["root"] if root else read.source, kind, read.value)
    if kind == "closure cell":
        return of(read.source, kind, closure_variable(reason))
    return of(read.source, kind, read.value if kind in ("dict keys", "list length") else "")


# a guard's kind (``read_guard``) -> the ``what`` of its recompile
_KINDS = {"number": "number attribute", "attribute presence": "attribute"}


def guard_source(guard: FailedGuard, live: str = "") -> str:
    """The failing guard's source expression, the same in every frame one cause passes
    through: Dynamo's ``L['x']``/``G['x']`` wrappers dropped, a wrapper's
    ``kwargs['x']`` read as ``x``, and the local a chain of attributes hangs from
    (``self``, ``opt``, ``model``: each frame names it its own way) left out.

    ``live``: the path a live capture read from the guard's ``Source`` object
    (``RecompileReason.source``), used in place of the printed source; "" from a trace.

    Example:
        >>> guard_source(failed_guard("L['self'].param_groups[0]['lr'] == 0.01"))
        ".param_groups[0]['lr']"
        >>> guard_source(failed_guard("tensor 'kwargs['input_ids']' size mismatch at index 1"))
        'input_ids'
        >>> printed = "___as_tensor(L['self'].param_groups[0]['lr']).item() == 0.01"
        >>> guard_source(failed_guard(printed), "self.param_groups[0]['lr']")
        ".param_groups[0]['lr']"
    """
    if guard.what in ("grad mode", "autocast"):
        return guard.what.replace(" ", "_")
    if guard.what in ("global state", "guard"):
        return guard.text
    expr = guard.input
    if guard.tensor:
        m = _TENSOR.search(guard.text)
        expr = source_name(m["input"]) if m else expr
    if live:  # the Source's path; an argument's value is keyed on the argument, as printed
        root = _ROOT.match(live) if guard.what == "value" else None
        expr = root["root"] if root else live
    expr = _KWARG.sub(lambda m: m["name"], expr, 1)
    root = _ROOT.match(expr)
    if root is not None and root.end() < len(expr) and guard.what != "global":
        expr = expr[root.end():]
    return f"{expr} ({guard.changed})" if guard.what == "closure cell" and guard.changed else expr


def live_source(reason: str, paths: dict[str, str]) -> str:
    """The path of the guard a recompile reason names, from a live capture's guards
    (``paths``: each guard's printed checks and source name, as ``printed_key`` reads them,
    to the path its ``Source`` reads), else "".

    Example:
        >>> paths = {"not ___dict_contains('mask', batch)": "batch"}
        >>> live_source("not ___dict_contains('mask', batch)   # if 'mask' in batch:", paths)
        'batch'
        >>> live_source("tensor 'L['x']' size mismatch at index 0", {"x": "x"})
        'x'
    """
    first = reason.strip().split("\n", 1)[0]
    tensor = _TENSOR.search(first)
    return paths.get(printed_key(tensor["input"] if tensor else first), "")


def optimizer_setting(source: str) -> str:
    """The optimizer setting (``lr``, ``weight_decay``...) a guard source reads from an
    optimizer's ``param_groups``, else "".

    Example:
        >>> optimizer_setting(".param_groups[0]['lr']")
        'lr'
    """
    m = _OPTIM_GROUP.search(source)
    return m["key"] if m else ""


def guarded_value(guard: FailedGuard) -> str:
    """The value a ``source == value`` guard expected (what it was compiled with), else "".

    Example:
        >>> guarded_value(failed_guard("L['self'].param_groups[0]['lr'] == 0.01"))
        '0.01'
    """
    _, eq, value = guard.text.partition(" == ")
    return value.strip() if eq else ""


def reason_user_line(reason: str) -> tuple[str, int] | None:
    """(file, line) of the user stack Dynamo appends to a recompile reason, else None.

    Example:
        >>> reason_user_line('size mismatch\\n  File "/m.py", line 7, in f')
        ('/m.py', 7)
    """
    m = _TB.search(reason)
    return (m["file"], int(m["line"])) if m else None


def origin_line(origin: str) -> tuple[str, int] | None:
    """(file tail, line) of a guard's origin comment (``# nn/modules/linear.py:134 in
    forward``: Dynamo shortens the path to its tail), else None.

    Example:
        >>> origin_line("return x * 2  # t.py:3 in f")
        ('t.py', 3)
    """
    m = _ORIGIN.search(origin or "")
    return (m["file"], int(m["line"])) if m else None


def origin_code(origin: str) -> str:
    """The user code a guard's origin comment quotes, without its ``# file:line`` tail.

    Example:
        >>> origin_code("return x * 2  # t.py:3 in f")
        'return x * 2'
    """
    return origin.split("  #", 1)[0].strip() if origin else ""


def tensor_match_sizes(expr: str) -> tuple[str, list[str]] | None:
    """(input, its sizes as printed) of a ``TENSOR_MATCH`` guard's ``check_tensor``.

    Example:
        >>> tensor_match_sizes("check_tensor(L['x'], Tensor, size=[2, s0], stride=[8, 1])")
        ('x', ['2', 's0'])
    """
    m = _SIZE_ARG.search(expr)
    return (m["input"], [s.strip() for s in m["sizes"].split(",")]) if m else None


def is_size_pinned(symbolic: str) -> bool:
    """Whether a symbolic guard fixes a size to a number (``Eq(s0, 4)``).

    Example:
        >>> is_size_pinned("Eq(s0, 4)"), is_size_pinned("2 <= s0")
        (True, False)
    """
    return _EQ.match(symbolic) is not None


def hit_recompile_limit(fail_reason: str) -> bool:
    """Whether a compile's failure reason (compilation metrics) is the recompile limit.

    Example:
        >>> hit_recompile_limit("cache_size_limit reached")
        True
    """
    low = fail_reason.lower()
    return any(w in low for w in _LIMIT)
