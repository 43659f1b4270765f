"""Each module's class, as Dynamo's guard tree names it.

The module stacks capture keeps are paths (``transformer.h.0``); the class of the module at
a path is in the guard tree torch prints (``dynamo_cpp_guards_str``), on the manager of each
object Dynamo guarded: ``GuardManager: source=L['self']._modules['h']._modules['0'],
type=<class 'transformers.models.gpt2.modeling_gpt2.GPT2Block'>`` (torch 2.13, 2.14.1).
"""

from __future__ import annotations

import re

from compiler.parse.words.names import module_paths

_MANAGER = re.compile(r"source=(?P<source>[^\s,]+), type=<class '(?P<cls>[\w.]+)'>")


def module_types(guard_tree: str) -> dict[str, str]:
    """``{module path: class name}`` for every module the guard tree gives a type.

    Example:
        >>> module_types("| +- GuardManager: source=L['self']._modules['h']._modules['0'], "
        ...              "type=<class 'm.GPT2Block'>, tag_safe=(True, False)")
        {'h.0': 'GPT2Block'}
    """
    out: dict[str, str] = {}
    for m in _MANAGER.finditer(guard_tree):
        source = m["source"]
        if "._modules[" not in source and not source.startswith(("L['self']", "self")):
            continue
        paths = module_paths({"m": (source, None)})
        if paths and "(" not in source:
            out.setdefault(paths[-1], m["cls"].rsplit(".", 1)[-1])
    return out
