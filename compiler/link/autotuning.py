"""Which output-code kernel runs the candidate max-autotune chose, where that is provable.

An extern choice (``mm``) is the kernel of the same library call
(``extern_kernels.mm``). A Triton template choice (``triton_mm_14``, a name the output
code never uses) is the one template kernel (``triton_tem_...``) whose ``tl.constexpr``
values, ``num_stages`` and ``num_warps`` equal every ``key=value`` of the candidate's
description. Anything less certain links nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from compiler.model import Autotuning, Kernel

_CONSTEXPR = re.compile(r"^\s+(?P<key>\w+)\s*:\s*tl\.constexpr\s*=\s*(?P<value>.+?)\s*$", re.M)
_LAUNCH = re.compile(r"^\s*(?P<key>num_stages|num_warps)\s*=\s*(?P<value>\d+)\s*,?\s*$", re.M)


def parse_config(description: str) -> list[tuple[str, str]]:
    """``"A='x', B=1"`` -> ``[("A", "x"), ("B", "1")]``; [] unless every part is key=value.

    Example:
        >>> parse_config("BLOCK_M=64, num_warps=4")
        [('BLOCK_M', '64'), ('num_warps', '4')]
    """
    parts, depth, start, quote = [], 0, 0, ""
    for i, ch in enumerate(description):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(description[start:i])
            start = i + 1
    parts.append(description[start:])
    pairs = []
    for part in (p.strip() for p in parts):
        key, eq, value = part.partition("=")
        if not eq or not key.strip().isidentifier():
            return []
        pairs.append((key.strip(), _unquote(value.strip())))
    return pairs


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def template_config(k: Kernel) -> dict[str, str]:
    """A template kernel's ``tl.constexpr`` values plus its ``num_stages``/``num_warps``."""
    cfg = {m["key"]: _unquote(m["value"]) for m in _CONSTEXPR.finditer(k.source)}
    for m in _LAUNCH.finditer(k.source.split("@triton.jit", 1)[0]):
        cfg.setdefault(m["key"], m["value"])
    return cfg


def chosen_kernel(a: Autotuning, kernels: Iterable[Kernel]) -> str | None:
    """The id of the one kernel (with ``Kernel.id`` set) proven to run ``a.chosen``."""
    choice = next((ch for ch in a.choices if ch.name == a.chosen), None)
    if choice is None:
        return None
    if not choice.name.startswith("triton_"):
        found = [
            k.id
            for k in kernels
            if k.language == "extern" and k.name == f"extern_kernels.{choice.name}"
        ]
    else:
        want = dict(parse_config(choice.description))
        found = [
            k.id
            for k in kernels
            if want
            and k.language == "triton"
            and k.name.startswith("triton_tem_")
            and template_config(k).items() >= want.items()
        ]
    return found[0] if len(found) == 1 else None
