"""What a live edit compiles: a function, an ``nn.Module`` class or instance, or a method
patched onto its class, with the notebook's state it uses.

``target_of`` reads the source the editor starts with and says what the worker does with
each edit of it (``LiveTarget.kind``):

- ``source``: the source defines the function or module class to compile (a class is
  built with no arguments), as ``%%compile --live`` cells do;
- ``instance``: the source is the class of ``root``, a module the notebook built (its
  constructor arguments, weights and buffers kept): the worker compiles ``root`` as an
  instance of the edited class;
- ``method``: the source is one method of ``owner`` (the user's block, or a library class
  such as transformers' ``GPT2MLP``): the worker sets it on ``owner`` and compiles ``root``.

``state_for`` picks what crosses to the worker: the names the source uses that the
notebook holds (its helpers, globals, imported modules), and ``root``/``owner``.

Example:
    >>> import torch
    >>> def scale(t):
    ...     return t * 3
    >>> source, target = target_of("def f(x):\\n    return scale(x)\\n", namespace=globals())
    >>> sorted(state_for(source, target)[0])
    ['scale']
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import inspect
import linecache
import sys
import textwrap
import types
from collections import ChainMap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass(frozen=True, kw_only=True)
class LiveTarget:
    """What the worker makes of an edited source; see the module's docstring.

    ``namespace`` is where the source's other names are looked up (the notebook's);
    ``module`` an importable module whose globals the source runs with (a library
    method's), which the worker imports rather than receives.
    """

    kind: str = "source"
    name: str | None = None
    root: Any = None
    owner: type | None = None
    module: str | None = None
    namespace: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def labels(self) -> dict[str, str]:
        """How errors name ``root`` and ``owner``: the notebook variable holding them."""
        out = {"owner": getattr(self.owner, "__qualname__", "the class")}
        held = [k for k, v in self.namespace.items() if v is self.root and not k.startswith("_")]
        out["root"] = held[0] if held else f"the {type(self.root).__name__} module"
        return out


def target_of(
    obj: Any, *, edit: Callable[..., Any] | None = None, namespace: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> tuple[str, LiveTarget]:  # fmt: skip
    """The source to edit and the ``LiveTarget`` for ``obj``: source text, a function,
    an ``nn.Module`` class or instance; with ``edit``, a method of ``obj``'s modules.

    Raises TypeError when the source cannot be read or ``obj`` is none of these.
    """
    # live views, never copies: a name the notebook defines after this call is seen too
    ns: Mapping[str, Any] = namespace if namespace is not None else {}
    if edit is not None:
        return _method(obj, edit, ns)
    if isinstance(obj, str):
        return obj, LiveTarget(name=name, namespace=ns)
    if isinstance(obj, torch.nn.Module):
        cls = type(obj)
        module = _importable(cls.__module__)
        ns = ns if module else _chain(_globals_of(cls), ns)
        return (class_source(cls),
                LiveTarget(kind="instance", name=cls.__name__, root=obj, module=module,
                           namespace=ns))  # fmt: skip
    if isinstance(obj, type):
        module = _importable(obj.__module__)
        ns = ns if module else _chain(_globals_of(obj), ns)
        return class_source(obj), LiveTarget(name=obj.__name__, module=module, namespace=ns)
    if isinstance(obj, types.FunctionType):
        module = _importable(obj.__module__)
        ns = ns if module else _chain(obj.__globals__, ns)
        return (_function_source(obj),
                LiveTarget(name=obj.__name__, module=module, namespace=ns))  # fmt: skip
    msg = (f"explorer.live takes Python source, a function, an nn.Module class or instance "
           f"(with edit=Class.method for a method), not {type(obj).__name__}.")  # fmt: skip
    raise TypeError(msg)


def state_for(source: str, target: LiveTarget) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The values that cross for one edit: (the names the source uses, found in the
    notebook; the root and owner). None when the source does not parse (the worker
    reports the syntax error without any state)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    module_globals = vars(sys.modules[target.module]) if target.module else {}
    names = {}
    for name in sorted(_free_names(tree)):
        if name in module_globals or name not in target.namespace:
            continue  # the worker imports the module; or it is a builtin or a typo
        names[name] = target.namespace[name]
    fixed = {k: v for k, v in (("root", target.root), ("owner", target.owner)) if v is not None}
    return names, fixed


def class_source(cls: type) -> str:
    """The source of ``cls``; for a class defined in a notebook cell too (``inspect``
    cannot find those before Python 3.13: it is read from the cell its methods came from).
    """
    try:
        return textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError) as exc:
        failure = exc
    for value in vars(cls).values():
        code = getattr(inspect.unwrap(value) if callable(value) else value, "__code__", None)
        if code is None:
            continue
        lines = linecache.getlines(code.co_filename)
        try:
            tree = ast.parse("".join(lines))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.ClassDef) and node.name == cls.__name__
                    and node.lineno <= code.co_firstlineno <= (node.end_lineno or 0)):  # fmt: skip
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                return textwrap.dedent("".join(lines[start - 1 : node.end_lineno]))
    msg = (f"explorer.live could not read the source of {cls.__qualname__} ({failure}); "
           "define it in a cell or a file, or pass its source as a string.")  # fmt: skip
    raise TypeError(msg) from failure


def _method(
    root: Any, fn: Callable[..., Any], ns: Mapping[str, Any]
) -> tuple[str, LiveTarget]:
    fn = inspect.unwrap(getattr(fn, "__func__", fn))
    if not isinstance(fn, types.FunctionType) or "." not in fn.__qualname__:
        raise TypeError(f"edit= takes a method of a class (such as Block.forward), not {fn!r}.")
    *outer, method = fn.__qualname__.split(".")
    owner: Any = fn.__globals__.get(outer[0])
    for part in outer[1:]:
        owner = getattr(owner, part, None)
    if not isinstance(owner, type) or vars(owner).get(method) is not fn:
        msg = f"explorer.live could not find the class that {fn.__qualname__} belongs to."
        raise TypeError(msg)
    if not isinstance(root, torch.nn.Module):
        msg = (f"edit={fn.__qualname__} needs the module to compile first, e.g. "
               f"explorer.live(model, x, edit={fn.__qualname__}).")  # fmt: skip
        raise TypeError(msg)
    module = _importable(fn.__module__)
    ns = ns if module else _chain(fn.__globals__, ns)
    target = LiveTarget(kind="method", name=method, root=root, owner=owner, module=module,
                        namespace=ns)  # fmt: skip
    return _function_source(fn), target


def _function_source(fn: types.FunctionType) -> str:
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as exc:
        msg = (f"explorer.live could not read the source of {fn.__qualname__} ({exc}); "
               "pass its source as a string instead.")  # fmt: skip
        raise TypeError(msg) from exc


def _globals_of(cls: type) -> dict[str, Any]:
    for value in vars(cls).values():
        if isinstance(value, types.FunctionType):
            return value.__globals__
    return {}


def _chain(first: Mapping[str, Any], then: Mapping[str, Any]) -> Mapping[str, Any]:
    """``first``'s names over ``then``'s, both read live (the notebook goes on)."""
    return ChainMap(dict(), first, then) if first is not then else first  # type: ignore[arg-type]


def _importable(module: str | None) -> str | None:
    """``module`` if another process can import it by name (not a notebook's ``__main__``)."""
    if not module or module in ("__main__", "__live__", "builtins"):
        return None
    found = sys.modules.get(module)
    if found is None or getattr(found, "__file__", None) is None:
        return None
    try:
        importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return module


def _free_names(tree: ast.Module) -> set[str]:
    """Names the source reads that it does not bind at its top level (nor are builtins)."""
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return read - bound - set(dir(builtins))


__all__ = ["LiveTarget", "class_source", "state_for", "target_of"]
