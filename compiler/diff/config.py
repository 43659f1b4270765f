"""The compile-time configuration of each compile, and what changed between two.

torch's ``compilation_metrics`` record carries the whole ``torch._dynamo.config``,
``torch._inductor.config`` and ``torch.compiler.config`` in force for the compile, each as
one JSON object (torch 2.11 to 2.14.1); the trace fold keeps them in ``Compile.artifacts``
under ``CONFIG_ARTIFACTS``, live and from a ``TORCH_TRACE`` log alike (tlparse #73).

Example:
    >>> import compiler
    >>> exp = compiler.load_trace("tests/data/traces/recompiles")
    >>> config_of(exp.compiles[0])["inductor"]["max_autotune"]
    False
    >>> config_diff(exp.compiles[0], exp.compiles[1])
    ()
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from compiler.model import Compile

# section -> the artifact the fold keeps it under (``compilation_metrics``'s field name)
CONFIG_ARTIFACTS = {
    "dynamo": "dynamo_config",
    "inductor": "inductor_config",
    "compiler": "compiler_config",
}


@dataclass(frozen=True, slots=True)
class ConfigChange:
    """One setting that differs: its section (``dynamo``, ``inductor``, ``compiler``),
    its name, and its value in each compile as JSON text ("" where the compile has none)."""

    section: str
    name: str
    a: str
    b: str

    def __str__(self) -> str:
        return f"{self.section}.{self.name}: {self.a or '(unset)'} -> {self.b or '(unset)'}"


def config_of(c: Compile) -> dict[str, dict[str, Any]]:
    """Section -> setting -> value for one compile; a section torch did not record (a
    recording older than this, a backend that never reached Inductor) is left out."""
    out: dict[str, dict[str, Any]] = {}
    for section, artifact in CONFIG_ARTIFACTS.items():
        values = _parsed(c.artifacts.get(artifact) or "")
        if values is not None:
            out[section] = dict(values)
    return out


@functools.lru_cache(maxsize=32)
def _parsed(text: str) -> dict[str, Any] | None:
    # every compile of a run usually shares one config text: each is read once
    try:
        values = json.loads(text) if text else None
    except ValueError:
        return None
    return values if isinstance(values, dict) else None


def config_diff(a: Compile, b: Compile) -> tuple[ConfigChange, ...]:
    """The settings whose values differ between two compiles, section by section, in
    name order; a section only one of them recorded is not compared."""
    ca, cb = config_of(a), config_of(b)
    changes = []
    for section, artifact in CONFIG_ARTIFACTS.items():
        if section not in ca or section not in cb:
            continue
        if a.artifacts[artifact] == b.artifacts[artifact]:
            continue  # one text: the common case, compared without reading a setting
        sa, sb = ca[section], cb[section]
        for name in sorted({*sa, *sb}):
            va, vb = sa.get(name, _UNSET), sb.get(name, _UNSET)
            if va != vb:
                changes.append(ConfigChange(section, name, _text(va), _text(vb)))
    return tuple(changes)


_UNSET = object()


def _text(value: object) -> str:
    return "" if value is _UNSET else json.dumps(value, sort_keys=True)
