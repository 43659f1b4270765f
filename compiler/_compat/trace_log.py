"""The structured trace capture listens to: torch's ``torch.__trace`` logger, its table of interned
file names, and the graph module behind the record being logged.
"""

from __future__ import annotations

import logging

import torch


def trace_logger() -> logging.Logger:
    """The structured-trace logger that TORCH_TRACE writes from (``torch.__trace``).

    Records carry ``metadata`` (a dict naming the event) and ``payload`` (text).
    Checked on torch 2.11 and 2.13 (``torch._logging._internal.trace_log``).
    """
    from torch._logging._internal import trace_log

    return trace_log


def interned_strings() -> dict[int, str]:
    """torch's process-wide table of interned file names, index -> name.

    Trace events name files by index, and torch logs each ``str`` entry only the
    first time it interns it (``torch._logging.structured.INTERN_TABLE``, 2.11/2.13),
    so a capture that starts after an earlier compile must seed its table from here.
    """
    from torch._logging.structured import INTERN_TABLE

    return {index: name for name, index in INTERN_TABLE.items()}


def graph_module_of_trace_call() -> torch.fx.GraphModule | None:
    """The GraphModule whose text the structured-trace record being handled prints, or None.

    Called from a ``torch.__trace`` log handler: the record is emitted inside
    ``torch._logging._internal.trace_structured``, whose ``payload_fn`` is a lambda over
    the graph module for ``dynamo_output_graph``, ``aot_inference_graph`` and the
    pre/post-grad artifacts (checked on torch 2.13; other graphs log a string made
    earlier, and give None). The module's ``node.meta`` holds ``nn_module_stack``,
    which the text omits.
    """
    import sys

    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "trace_structured" and code.co_filename.endswith("_internal.py"):
            payload_fn = frame.f_locals.get("payload_fn")
            for cell in getattr(payload_fn, "__closure__", None) or ():
                try:
                    value = cell.cell_contents
                except ValueError:  # an empty cell
                    continue
                if isinstance(value, torch.fx.GraphModule):
                    return value
            return None
        frame = frame.f_back  # type: ignore[assignment]
    return None
