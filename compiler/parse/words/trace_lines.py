"""The lines of torch's structured trace (``TORCH_TRACE``): each event a glog header
and its JSON, its payload on the lines after it, each starting with a tab; the trace
files' names, which carry the rank; and the reprs the events' metadata holds
(``device(type='cuda', index=0)``). ``compiler.trace`` reads the files through these."""

from __future__ import annotations

import re

__all__ = [
    "GLOG",
    "GLOG_HEAD",
    "HEADER_START",
    "PAYLOAD_END",
    "RANK_IN_NAME",
    "device_type",
    "rank_in_name",
]

# "V1122 19:50:00.123456 4242 torch/_dynamo/convert_frame.py:1234] {...}"
GLOG = re.compile(r"^[VIWEC]\d{4} \d{2}:\d{2}:\d{2}\.\d+ +\d+ [^\]]*\] (?P<json>\{.*)$")
# ``GLOG`` on bytes, up to the JSON's opening brace
GLOG_HEAD = re.compile(rb"[VIWEC]\d{4} \d{2}:\d{2}:\d{2}\.\d+ +\d+ [^\]]*\] \{")
# the start of every line that is not a payload line (payload lines start with a tab)
HEADER_START = re.compile(rb"\n(?=[^\t])")
# the line break that ends a payload block: the next line does not start with a tab
PAYLOAD_END = re.compile(r"\n(?!\t)")
# a trace file of one rank: ``dedicated_log_torch_trace_rank_0_abc.log``
RANK_IN_NAME = re.compile(r"rank_(\d+)")


def rank_in_name(name: str) -> int | None:
    """The rank a trace file's name carries, or None.

    Example:
        >>> rank_in_name("dedicated_log_torch_trace_rank_3_x1.log"), rank_in_name("t.log")
        (3, None)
    """
    m = RANK_IN_NAME.search(name)
    return int(m.group(1)) if m else None


def device_type(text: str) -> str:
    """The type of a device as torch's repr spells it (``device(type='cuda', index=0)``),
    or the text itself when it is not that repr.

    Example:
        >>> device_type("device(type='cuda', index=0)"), device_type("cpu")
        ('cuda', 'cpu')
    """
    if "type='" in text:
        return text.split("type='", 1)[1].split("'", 1)[0]
    return text
