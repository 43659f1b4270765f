"""The parts of a generated kernel's source that enter the kernel caches' keys.

torch logs no key for Triton's kernel cache, the autotune cache or Inductor's C++ kernel
cache, but each key is made from text the output code shows (torch 2.13/2.14.1 sources):

- Triton's own cache (``triton.compile``) hashes the ``@triton.jit`` function's source, its
  signature, constants and attributes, the target and the compile options (Inductor's
  ``triton_meta``), and Triton's version;
- the autotune cache (``torch._inductor.runtime.autotune_cache``) is keyed by Inductor's
  kernel file, named by a hash of the whole kernel source (so ``inductor_meta`` and
  ``size_hints`` too), and by the candidate configs;
- Inductor's C++ kernel cache hashes the kernel's source (its ``#include`` names a header
  whose path is a hash of the header's text) with the compile command.

``kernel_components`` splits a kernel's source into those parts, each a ``Component``
whose ``hash`` is the text itself (compared, never shown).
"""

from __future__ import annotations

import ast

from compiler.parse.words.cache_keys import Component

# the parts that Triton's own key covers; the rest enter only the autotune key
TRITON_PARTS = ("kernel body", "triton_meta", "Triton version")


def _segment(source: str, node: ast.AST) -> str:
    return ast.get_source_segment(source, node) or ast.dump(node)


def _triton(source: str) -> tuple[Component, ...] | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if fn is None:
        return None
    out: list[Component] = []
    for deco in fn.decorator_list:
        if not isinstance(deco, ast.Call):
            continue
        for kw in deco.keywords:
            if kw.arg is None or kw.arg == "filename":
                continue
            if isinstance(kw.value, ast.Dict) and kw.arg.endswith("_meta"):
                for k, v in zip(kw.value.keys, kw.value.values, strict=True):
                    if isinstance(k, ast.Constant) and isinstance(k.value, str):
                        text = _segment(source, v)
                        out.append(Component(f"{kw.arg}[{k.value}]", text, text))
                continue
            text = _segment(source, kw.value)
            out.append(Component(kw.arg, text, text))
    # the function itself, decorators left out: what ``@triton.jit`` hashes
    lines = source.splitlines()
    body = "\n".join(lines[fn.lineno - 1 : fn.end_lineno])
    out.append(Component("kernel body", body, body))
    return tuple(out)


def kernel_components(language: str, source: str) -> tuple[Component, ...]:
    """The key-relevant parts of one kernel's source, in source order.

    Example:
        >>> src = '''@triton_heuristics.pointwise(size_hints={'x': 8},
        ...     triton_meta={'signature': {'x': '*fp32'}, 'constants': {}})
        ... @triton.jit
        ... def k(x):
        ...     pass
        ... '''
        >>> [c.name for c in kernel_components("triton", src)]
        ['size_hints', 'triton_meta[signature]', 'triton_meta[constants]', 'kernel body']
    """
    if language == "triton":
        parts = _triton(source)
        if parts is not None:
            return parts
    if language == "cpp":
        header = "\n".join(ln for ln in source.splitlines() if ln.startswith("#include"))
        body = "\n".join(ln for ln in source.splitlines() if not ln.startswith("#include"))
        return (Component("header", header, header), Component("kernel body", body, body))
    return (Component("source", source, source),)


def enters_triton_key(name: str) -> bool:
    """Whether a component is part of Triton's own cache key (the rest only of the
    autotune key, through Inductor's kernel file).

    Example:
        >>> enters_triton_key("triton_meta[device]"), enters_triton_key("inductor_meta[name]")
        (True, False)
    """
    return name.split("[", 1)[0] in TRITON_PARTS


def kernel_kind(name: str) -> str:
    """What a kernel component is, in ``cache_diff``'s kinds.

    Example:
        >>> kernel_kind("triton_meta[signature]"), kernel_kind("inductor_meta[backend_hash]")
        ('input', 'torch version')
    """
    if name in ("kernel body", "source"):
        return "graph"
    if name in ("triton_meta[signature]", "triton_meta[configs]", "size_hints"):
        return "input"  # dtypes, alignment and sizes of the kernel's arguments
    if name == "triton_meta[constants]":
        return "constant"
    if name in ("triton_meta[device]", "header"):
        return "system"
    if name in ("inductor_meta[backend_hash]", "Triton version"):
        return "torch version"
    return "config"
