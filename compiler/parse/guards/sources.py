"""A guard's source and kind, the same on every torch: the one place that reads the
wrappers Dynamo prints around a source name (``L['x']``, ``___as_tensor(X).item()``,
``dict.__getitem__(X, 'k')``) and around a guard's check (``len(X) == 2``,
``___dict_contains('k', X)``, ``___check_obj_id(X, 123)``).

torch 2.11 prints a scheduled lr's guard as ``___as_tensor(L['self'].param_groups[0]['lr'])
.item() == 0.01``, 2.13 as ``self.param_groups[0]['lr'] == 0.01``: both read as the
source ``self.param_groups[0]['lr']``, so a cause keyed on it is one cause on both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from compiler.parse.words.python_text import top_level_parts, unquote

# a frame's local or global, wherever it appears: L['x'] -> x, G['x'] -> x
_FRAME_NAME = re.compile(r"(?<![\w\]'\)])[LG]\['([^']+)'\]")
# calls that only convert the value they read: the source is their argument
_TRANSPARENT = ("___as_tensor", "___from_numpy", "int", "float", "cast_symbool_to_symint_guardless")
# calls that spell a subscript or an attribute: dict.__getitem__(X, 'k') -> X['k']
_SUBSCRIPT = ("dict.__getitem__", "list.__getitem__", "tuple.__getitem__", "___odict_getitem")
_NUMBER = re.compile(r"^-?(?:\d+\.?\d*(?:e-?\d+)?|inf|nan)$")
_CELL = re.compile(r"\.__closure__\[\d+\]\.cell_contents")
# a type guard's own message: expected type of 'b' to be <class 'torch.Tensor'>, but found ...
_TYPE_OF = re.compile(r"^expected type of '(?P<source>.+?)' to be ")


@dataclass(frozen=True, slots=True)
class GuardRead:
    """What a guard checks: ``kind`` (``dict keys``, ``list length``, ``object identity``,
    ``type``, ``attribute presence``, ``closure cell``, ``global``, ``training``,
    ``number``, ``value``, ``guard``), the normalised ``source`` it reads and the
    ``value`` it compared with ("" when none)."""

    kind: str
    source: str
    value: str = ""


def source_name(name: str) -> str:
    """A Dynamo source name in one spelling: frame wrappers and converting calls dropped,
    subscripts written as subscripts.

    Example:
        >>> source_name("___as_tensor(L['self'].param_groups[0]['lr']).item()")
        "self.param_groups[0]['lr']"
        >>> source_name("dict.__getitem__(L['batch'], 'mask')")
        "batch['mask']"
    """
    expr = _FRAME_NAME.sub(lambda m: m[1], name.strip())
    for _ in range(8):  # wrappers nest: int(___as_tensor(x).item())
        before = expr
        inner = _call(expr, "___as_tensor", ".item()")
        if inner is not None:
            expr = inner
        for fn in _TRANSPARENT:
            inner = _call(expr, fn)
            if inner is not None:
                expr = inner
        for fn in _SUBSCRIPT:
            inner = _call(expr, fn)
            if inner is not None and "," in inner:
                obj, key = _split_last(inner)
                expr = f"{obj}[{key}]"
        inner = _call(expr, "getattr")
        if inner is not None and "," in inner:
            obj, attr = _split_last(inner)
            if attr[:1] in "'\"" and attr[1:-1].isidentifier():
                expr = f"{obj}.{attr[1:-1]}"
        if expr == before:
            break
    return expr


def printed_key(text: str) -> str:
    """A guard's printed check, or a source's printed name, in the form two printings of
    it by one torch share: Dynamo's source comment and padding dropped, frame wrappers
    (``L['x']``) dropped (a recompile reason on 2.13 prints ``batch`` where the guard's
    code reads ``L['batch']``). A live capture matches a failed guard to the guard Dynamo
    built by it.

    Example:
        >>> printed_key("not ___dict_contains('mask', batch)     # if 'mask' in batch:")
        "not ___dict_contains('mask', batch)"
        >>> printed_key("not ___dict_contains('mask', L['batch'])")
        "not ___dict_contains('mask', batch)"
    """
    first = text.strip().split("\n", 1)[0].split("  #", 1)[0]
    return " ".join(_FRAME_NAME.sub(lambda m: m[1], first).split())


def read_guard(code: str) -> GuardRead:
    """Read one guard's check (a failed guard's text, without Dynamo's source comment).

    Example:
        >>> read_guard("not ___dict_contains('mask', L['batch'])")
        GuardRead(kind='dict keys', source='batch', value="'mask'")
        >>> read_guard("expected type of 'b' to be <class 'torch.Tensor'>, but found <class 'int'>")
        GuardRead(kind='type', source='b', value='')
        >>> read_guard("len(L['xs']) == 1")
        GuardRead(kind='list length', source='xs', value='1')
        >>> read_guard("___as_tensor(self.param_groups[0]['lr']).item() == 0.01")
        GuardRead(kind='number', source="self.param_groups[0]['lr']", value='0.01')
    """
    text = code.split("  #", 1)[0].split(" (HINT:", 1)[0].strip()
    typed = _TYPE_OF.match(text)
    if typed is not None:
        return GuardRead("type", source_name(typed["source"]))
    negated = text.startswith("not ")
    body = text[4:].strip() if negated else text
    for fn, kind in (
        ("___dict_contains", "dict keys"),
        ("___check_obj_id", "object identity"),
        ("___check_type_id", "type"),
        ("hasattr", "attribute presence"),
        ("isinstance", "type"),
    ):
        inner = _call(body.split(", type=", 1)[0] if "), type=" in body else body, fn)
        if inner is None or "," not in inner:
            continue
        args = top_level_parts(inner)
        if fn == "___dict_contains":  # ___dict_contains(key, dict)
            obj, key = args[-1], args[0]
            if obj.endswith(".__dict__"):  # an attribute set on an object, or not
                return GuardRead("attribute presence", source_name(obj[: -len(".__dict__")]),
                                 unquote(key))  # fmt: skip
            return GuardRead(kind, source_name(obj), key)
        # the others take the object first; an id compared with is no part of the cause
        return GuardRead(kind, source_name(args[0]), args[1] if fn == "hasattr" else "")
    lhs, op, value = _compare(body)
    inner = _call(lhs, "hasattr")
    if inner is not None and "," in inner:  # hasattr(x, 'a') == False
        obj, attr = _split_last(inner)
        return GuardRead("attribute presence", source_name(obj), unquote(attr))
    for fn in ("len", "___tuple_iterator_len"):
        inner = _call(lhs, fn)
        if inner is not None:
            return GuardRead("list length", source_name(inner), value)
    for fn in ("___key_to_id", "list"):
        inner = _call(lhs, fn)
        if inner is not None and (fn == "___key_to_id" or inner.startswith("dict.keys(")):
            inner = _call(inner, "dict.keys") or inner
            return GuardRead("dict keys", source_name(inner), value)
    if negated and not op:  # `not xs`: an empty list, tuple or dict
        return GuardRead("list length", source_name(body), "0")
    name = source_name(lhs)
    if _CELL.search(name):
        return GuardRead("closure cell", name, value)
    if not op:
        return GuardRead("guard", name)
    if name.endswith(".training"):
        return GuardRead("training", name, value)
    if re.fullmatch(r"G\['[^']+'\]", lhs.strip()) or re.fullmatch(
        r"G\['[^']+'\]", _unwrapped_frame(lhs)
    ):
        return GuardRead("global", name, value)
    if _NUMBER.match(value) and not re.fullmatch(r"[A-Za-z_]\w*(?:\[[^\]]*\])*", name):
        return GuardRead("number", name, value)
    return GuardRead("value", name, value)


def closure_variable(reason: str) -> str:
    """The variable a closure cell's guard reads, from Dynamo's hint (``guard on "k"``),
    else "".

    Example:
        >>> closure_variable('g.__closure__[0].cell_contents == 2  # x (HINT: guard on "k")')
        'k'
    """
    m = re.search(r'guard on "([^"]+)"', reason)
    return m[1] if m else ""


def _unwrapped_frame(expr: str) -> str:
    """``expr`` with converting calls dropped but ``G['x']`` kept (a global stays one)."""
    out = expr.strip()
    for fn in _TRANSPARENT:
        out = _call(out, fn, ".item()" if fn == "___as_tensor" else "") or out
    return out


def _compare(text: str) -> tuple[str, str, str]:
    """(left side, operator, right side) of ``a == b``, ``a != b``, ``a is None``."""
    for op in (" == ", " != ", " is not ", " is "):
        lhs, found, rhs = text.partition(op)
        if found and lhs.count("(") == lhs.count(")") and lhs.count("[") == lhs.count("]"):
            return lhs.strip(), op.strip(), rhs.strip()
    return text.strip(), "", ""


def _call(expr: str, fn: str, suffix: str = "") -> str | None:
    """The argument text of ``fn(...)`` + ``suffix`` spanning all of ``expr``, else None."""
    expr = expr.strip()
    head = fn + "("
    if not expr.startswith(head) or not expr.endswith(")" + suffix):
        return None
    depth, quote = 0, ""
    for i, ch in enumerate(expr[len(fn):], start=len(fn)):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth == 0:
                return expr[len(head) : i] if expr[i + 1 :] == suffix else None
    return None


def _split_last(args: str) -> tuple[str, str]:
    """(everything before the last top-level comma, the last argument)."""
    parts = top_level_parts(args)
    return ", ".join(parts[:-1]), parts[-1]
