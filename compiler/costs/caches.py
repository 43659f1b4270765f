"""A run's cache lookups as torch logged them for each compile (``cache_records``), and the
compiles torch would not cache (``uncacheable``). Apart from the comparison of two runs'
keys (``compiler.diff.cache_keys``), which a page of one run does not need.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.link.ids import key_of
from compiler.model import Compile, Exploration
from compiler.parse.words.cache_keys import CacheRecord, cache_record


@dataclass(frozen=True, slots=True)
class Uncacheable:
    """A compile torch would not cache, with torch's reason."""

    compile: str
    code_name: str
    cache: str
    reason: str


def cache_records(c: Compile) -> tuple[CacheRecord, ...]:
    """The cache lookups torch logged for one compile, in order."""
    return tuple(
        r for name, payload in c.artifacts.items() if (r := cache_record(name, payload))
    )


def uncacheable(exp: Exploration, *, of: Compile | None = None) -> tuple[Uncacheable, ...]:
    """The compiles of one run that torch would not cache, with its bypass reason; ``of``:
    that compile's only (a page asks per compile: reading every compile's records for
    each made the page quadratic in the compiles).

    Example:
        >>> import compiler
        >>> uncacheable(compiler.Exploration(source="trace"))
        ()
    """
    return tuple(
        Uncacheable(str(key_of(c)), c.code_name, r.cache, r.bypass_reason or "no reason logged")
        for c in (exp.compiles if of is None else (of,))
        for r in cache_records(c)
        if r.state == "bypass"
    )
