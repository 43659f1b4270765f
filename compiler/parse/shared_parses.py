"""One parse per distinct graph text of a trace.

Torch logs the same graph under several names: Dynamo's graph as
``dynamo_output_graph``, ``before_pre_grad_graph`` and ``after_pre_grad_graph`` (the last
two with a trailing ``# graph id: ...`` comment), an output code's
``before_post_grad_graph`` and ``inductor_post_grad_graph``, an inference graph's
``after_joint_graph`` and ``before_post_grad_graph`` when no pass changed anything. On a
12-layer GPT-2 training trace that is a quarter of all graph text. ``SharedParses``
parses each once; the graphs share the (immutable) node tuple.

Trailing comment and blank lines print no node and shift no line, so texts that differ
only there give the same nodes; a parse error, whose message can name the last line, is
shared only between identical texts.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from compiler.model import Node
from compiler.parse.graph_text import parse_nodes

# a last line that prints nothing: blank, or a comment of printable ASCII (no character
# Python's tokenizer would read as a line break or refuse)
_QUIET_TAIL = re.compile(r"(?:\n[ ]*(?:#[ -~]*)?)+\Z")

Parsed = tuple[tuple[Node, ...], str | None]


class SharedParses:
    """``parse_nodes`` for the graphs of one load, once per text that prints them.

    A result is kept only while a graph that shares it is still unparsed: a text logged
    once is never held here, and nothing is once its last graph is read.

    Example:
        >>> parses = SharedParses()
        >>> text = "class M(torch.nn.Module):\\n    def forward(self, x):\\n        return x"
        >>> a = parses.later(text)
        >>> b = parses.later(text + "\\n\\n # graph id: 1")
        >>> a()[0] is b()[0]
        True
    """

    def __init__(self) -> None:
        # keys: (length, hash) of a text without its quiet tail, not that text itself
        # (a copy of every pre-grad graph held through the load)
        self._waiting: dict[Key, int] = {}  # key -> its graphs not parsed yet
        self._done: dict[Key, tuple[str, Parsed]] = {}  # key -> (text parsed, result)

    def later(self, text: str) -> Callable[[], Parsed]:
        """The parse of ``text``, to be called once, when its graph's nodes are read."""
        key = _key(text)
        self._waiting[key] = self._waiting.get(key, 0) + 1
        return functools.partial(self._parse, key, text)

    def _parse(self, key: Key, text: str) -> Parsed:
        left = self._waiting[key] - 1
        hit = self._done.get(key)
        if hit is not None and _same(hit[0], text, key[0], hit[1][1] is None):
            parsed = hit[1]
        else:
            parsed = parse_nodes(text)
            if hit is None and left:
                self._done[key] = (text, parsed)
        if left:
            self._waiting[key] = left
        else:
            del self._waiting[key]
            self._done.pop(key, None)
        return parsed


Key = tuple[int, int]


def _key(text: str) -> Key:
    """(length, hash) of ``text`` without its trailing blank and comment lines (within
    its last 200 characters or so: a longer tail only makes the key less shared, never
    wrong)."""
    tail = _QUIET_TAIL.search(text, max(0, text.rfind("\n", 0, max(0, len(text) - 200))))
    if tail is None:
        return len(text), hash(text)
    return tail.start(), hash(text[: tail.start()])


def _same(parsed: str, text: str, length: int, parsed_cleanly: bool) -> bool:
    """Whether ``text`` prints what ``parsed`` did: the same first ``length`` characters
    (a hash can collide) and, for a parse error, the very same text."""
    if not parsed_cleanly:
        return parsed == text
    return parsed is text or parsed[:length] == text[:length]
