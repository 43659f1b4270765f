"""What max-autotune prints of its candidates and templates: a candidate's description
(``BLOCK_M=64, num_warps=4``), and a template kernel's ``tl.constexpr`` values and launch
settings."""

from __future__ import annotations

import re

from compiler.parse.words.python_text import top_level_parts, unquote

__all__ = ["parse_config", "template_config"]

_CONSTEXPR = re.compile(r"^\s+(?P<key>\w+)\s*:\s*tl\.constexpr\s*=\s*(?P<value>.+?)\s*$", re.M)
_LAUNCH = re.compile(r"^\s*(?P<key>num_stages|num_warps)\s*=\s*(?P<value>\d+)\s*,?\s*$", re.M)


def parse_config(description: str) -> list[tuple[str, str]]:
    """``"A='x', B=1"`` -> ``[("A", "x"), ("B", "1")]``; [] unless every part is key=value.

    Example:
        >>> parse_config("BLOCK_M=64, num_warps=4")
        [('BLOCK_M', '64'), ('num_warps', '4')]
    """
    pairs = []
    for part in top_level_parts(description):
        key, eq, value = part.partition("=")
        if not eq or not key.strip().isidentifier():
            return []
        pairs.append((key.strip(), unquote(value.strip())))
    return pairs


def template_config(source: str) -> dict[str, str]:
    """A template kernel's ``tl.constexpr`` values plus its ``num_stages``/``num_warps``,
    from its source.

    Example:
        >>> source = "num_warps=4,\\n@triton.jit\\ndef k(x):\\n    BLOCK_M : tl.constexpr = 64"
        >>> template_config(source)
        {'BLOCK_M': '64', 'num_warps': '4'}
    """
    cfg = {m["key"]: unquote(m["value"]) for m in _CONSTEXPR.finditer(source)}
    for m in _LAUNCH.finditer(source.split("@triton.jit", 1)[0]):
        cfg.setdefault(m["key"], m["value"])
    return cfg
