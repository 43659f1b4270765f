"""A graph break's entry in the installed torch's graph-break registry.

Each break Dynamo records links the page of its registry id (``gb0025.html``); a break
recorded without one (an older torch, a recording) is matched by its type, the first
line of its message, against every wording the registry lists for an id. The registry
is the installed torch's file, else the copy this package ships (``Registry.source``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compiler import _torch_files
from compiler.model import GraphBreak
from compiler.parse.words.breaks import gb_id_of


@dataclass(frozen=True, slots=True)
class Entry:
    """One registry id: its type, explanation and hints as the registry words them
    (templates: ``{fn}`` where the message fills in a name), and its page."""

    gb_id: str
    gb_type: str
    explanation: str
    hints: tuple[str, ...]
    link: str


class Registry:
    """The registry, indexed by id and by every type an id had."""

    def __init__(self, raw: Mapping[str, tuple[Mapping[str, Any], ...]] | None = None) -> None:
        # read as a file, torch not imported: the trace path runs where torch is absent
        self.source = _torch_files.registry_source() if raw is None else "given"
        raw = _torch_files.graph_break_registry() if raw is None else raw
        self.by_id = {k: _entry(k, v[0]) for k, v in raw.items() if v}
        self.by_type: dict[str, str] = {}
        for gb_id, entries in raw.items():
            for e in reversed(entries):  # the current wording wins over an older one
                self.by_type[str(e.get("Gb_type", ""))] = gb_id

    def entry_for(self, gb: GraphBreak) -> Entry | None:
        """``gb``'s registry entry: by the id its message links, else by its type.

        Example:
            >>> reg = Registry({"GB0025": ({"Gb_type": "Call to graph_break()"},)})
            >>> reg.entry_for(GraphBreak(reason="", summary="Call to graph_break()")).gb_id
            'GB0025'
        """
        gb_id = gb_id_of(gb.documentation) or gb_id_of(gb.reason)
        if gb_id in self.by_id:
            return self.by_id[gb_id]
        found = self.by_type.get(gb.summary.strip())
        return self.by_id.get(found) if found else None


def _entry(gb_id: str, e: Mapping[str, Any]) -> Entry:
    hints = e.get("Hints") or ()
    return Entry(
        gb_id=gb_id,
        gb_type=str(e.get("Gb_type", "")),
        explanation=str(e.get("Explanation", "")),
        hints=tuple(str(h).strip() for h in hints if str(h).strip()),
        link=str(e.get("Link", "")),
    )


def registry_note(recorded_on: str) -> str:
    """Which graph-break registry explained the breaks of a run ``recorded_on`` a torch
    version ("" where unknown): the installed torch's file, else the copy shipped with
    this package. Read without importing torch.

    Example:
        >>> registry_note("2.13.0").startswith("graph breaks explained by ")
        True
    """
    recorded = f"; the run was recorded on torch {recorded_on}" if recorded_on else ""
    return f"graph breaks explained by {_torch_files.registry_source()}{recorded}"
