"""The compact JSON form of an Exploration (schema 3.0): the same data in fewer bytes.

A GPU capture of a real model is mostly text, much of it repeated: Triton's lowered
stages of every kernel, graph, schedule and output code texts, guard trees, and the same
file names, source lines and kernel ids on every node. Schema 2.0 wrote all of it plainly
(10.8 MB for a 4-layer GPT-2 training step). The writer of 3.0 stores it this way:

- every string that occurs more than once and is at least ``INTERN_MIN`` characters long
  is kept once, in the document's top-level ``strings`` list, and each occurrence becomes
  its index there (file names, source lines, kernel ids, guard origins, a recompile's
  repeated guards, identical stage texts of two kernels or variants);
- every string of ``COMPRESS_MIN`` characters or more (lowered stages, output code, graph,
  schedule and guard texts) is zlib-compressed and base64-encoded as ``{"zlib": "..."}``,
  in place or in ``strings``; so is every list of ``LIST_MIN`` items or more that
  compresses well (kernels, line tables such as ``Bytecode.original_lines``);
- a fused scheduler node's ``text`` is written as its ``[start, end]`` in its schedule's
  ``post_fusion`` text, which already holds every node's text;
- a field equal to its default is left out (``compiler/store/serialize.py`` does this and the
  one above; this module the strings and lists).

Since schema 4.0 nothing computed on first read is written (graph nodes, guard lists,
line maps, user lines: ``compiler/model/derived.py``); the reader computes them again
from the texts.

The same GPT-2 step captured on a CPU: 8.9 MB plain, 0.82 MB compact, written in 1.8x
the time and read in 0.7x (``benchmarks/json_size.py --gpt2``). Only the file changes:
the objects in memory hold plain text, and ``from_json(to_json(e)) == e``. The reader
tells an index or ``{"zlib": ...}`` from a string by the model's type hints (a ``str``
field never holds a number or an object), so no string value needs escaping.

Example:
    >>> strings, data = pack({"a": ["x" * 40, "x" * 40], "b": 3})
    >>> data, len(strings)
    ({'a': [0, 0], 'b': 3}, 1)
    >>> Unpacker(strings).text(0) == "x" * 40
    True
"""

from __future__ import annotations

import base64
import json
import zlib
from collections import Counter
from typing import Any

from compiler.model import Schedule

# Shorter strings cost about as much as the index that would replace them.
INTERN_MIN = 8
# Below this, zlib + base64 saves little and costs a reader's legibility.
COMPRESS_MIN = 1024
# Lists shorter than this stay plain JSON.
LIST_MIN = 32
ZLIB = "zlib"


def compress(text: str) -> dict[str, str] | str:
    """``{"zlib": base64}`` for ``text``, or ``text`` itself where that would not be smaller."""
    packed = base64.b64encode(zlib.compress(text.encode("utf-8"), 6)).decode("ascii")
    return {ZLIB: packed} if len(packed) + 12 < len(text) else text


def _inflate(value: dict[str, Any]) -> str:
    blob = value.get(ZLIB)
    if not isinstance(blob, str) or len(value) != 1:
        msg = f"expected a compressed text {{'{ZLIB}': '<base64>'}}, found keys {sorted(value)}"
        raise ValueError(msg)
    return zlib.decompress(base64.b64decode(blob)).decode("utf-8")


def schedule_spans(schedule: Schedule, fused: list[dict[str, Any]]) -> None:
    """Replace each fused node's ``text`` in ``fused`` (the nodes of ``schedule`` as
    dicts) by its ``[start, end]`` in ``schedule.post_fusion``, where it is found there,
    in order; a text not found stays as it is."""
    whole = schedule.post_fusion or ""
    pos = 0
    for node, out in zip(schedule.fused, fused, strict=True):
        if not node.text:
            continue
        start = whole.find(node.text, pos)
        if start < 0:
            continue
        pos = start + len(node.text)
        out["text"] = [start, pos]


def fused_text(post_fusion: str | None, span: list[Any], where: str) -> str:
    """The text a fused node's ``[start, end]`` names in its schedule's ``post_fusion``."""
    whole = post_fusion or ""
    ok = len(span) == 2 and all(isinstance(n, int) for n in span)
    if not ok or not 0 <= span[0] <= span[1] <= len(whole):
        msg = f"{where}: {span!r} is not a [start, end] span of the schedule's post_fusion text"
        raise ValueError(msg)
    return whole[span[0] : span[1]]


def pack(data: Any) -> tuple[list[Any], Any]:
    """The string table and the data with strings interned and long texts compressed
    (``data`` is what ``serialize.to_dict`` gives: plain JSON values, not modified)."""
    counts: Counter[str] = Counter()
    _count(data, counts)
    table: dict[str, int] = {}
    strings: list[Any] = []

    def one(text: str) -> Any:
        if len(text) >= INTERN_MIN and counts[text] > 1:
            index = table.get(text)
            if index is None:
                index = table[text] = len(strings)
                strings.append(compress(text) if len(text) >= COMPRESS_MIN else text)
            return index
        return compress(text) if len(text) >= COMPRESS_MIN else text

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return one(value)
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            out = [walk(v) for v in value]
            # a long list of records or numbers (graph nodes, line maps) compresses well
            # as one text, unless it is mostly texts compressed already
            if len(out) >= LIST_MIN:
                text = json.dumps(out, ensure_ascii=False, separators=(",", ":"))
                packed = compress(text)
                if isinstance(packed, dict) and len(packed[ZLIB]) < 0.6 * len(text):
                    return packed
            return out
        return value

    return strings, walk(data)


def _count(value: Any, counts: Counter[str]) -> None:
    if isinstance(value, str):
        if len(value) >= INTERN_MIN:
            counts[value] += 1
    elif isinstance(value, dict):
        for v in value.values():
            _count(v, counts)
    elif isinstance(value, list):
        for v in value:
            _count(v, counts)


class Unpacker:
    """Reads back what ``pack`` wrote: ``text`` for a ``str`` field's value, ``items``
    for a tuple field's value. Each table entry is inflated once, when first used."""

    def __init__(self, strings: list[Any]) -> None:
        self.strings = strings
        self._done: dict[int, str] = {}

    def text(self, value: Any) -> Any:
        """The string that ``value`` (an index, ``{"zlib": ...}`` or a string) stands for."""
        if isinstance(value, int) and not isinstance(value, bool):
            done = self._done.get(value)
            if done is None:
                if not 0 <= value < len(self.strings):
                    msg = f"string index {value} is outside the table of {len(self.strings)}"
                    raise ValueError(msg)
                entry = self.strings[value]
                done = self._done[value] = _inflate(entry) if isinstance(entry, dict) else entry
            return done
        if isinstance(value, dict):
            return _inflate(value)
        return value

    def items(self, value: Any) -> Any:
        """The list a tuple field's ``value`` stands for (compressed lists inflated)."""
        if isinstance(value, dict):
            return json.loads(_inflate(value))
        return value


__all__ = [
    "COMPRESS_MIN",
    "INTERN_MIN",
    "Unpacker",
    "compress",
    "fused_text",
    "pack",
    "schedule_spans",
]
