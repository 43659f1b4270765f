"""What Dynamo's message for a graph break says, in plain fields: which of the causes
the advisor knows its English names, the callee it could not trace, the logging call,
the condition's graph nodes. The words are torch's (``torch/_dynamo/graph_break_registry``
and the messages around it); only this module matches them."""

from __future__ import annotations

import re
from dataclasses import dataclass

# The condition's node, as Dynamo prints it under "computed as follows": "gt = gt(sum_1, 0)".
_COND_NODE = re.compile(r"^\s+(?P<name>[A-Za-z_]\w*) = \w+\(", re.MULTILINE)
_SKIPPED = re.compile(
    r"trace the (?:Python )?builtin `(?P<name>[^`]+?)\.?`|function `<function (?P<fn>\S+)"
    r"|the function `(?P<skipped>[^`]+)` in file|UserDefinedClassVariable\(<class '(?P<cls>[^']+)'>"
)
_LOGGER_CALL = re.compile(
    r"method: <Logger [^>]*>\.(?P<method>\w+), args: \[ConstantVariable\(str: '(?P<msg>[^']*)"
)
_LOGGER_METHOD = re.compile(r"<Logger [^>]*>\.(?P<method>\w+)")


@dataclass(frozen=True, slots=True)
class BreakWords:
    """What a break's summary and reason say, each cause as Dynamo words it."""

    explicit: bool  # torch._dynamo.graph_break()
    data_dependent_branch: bool
    float_tolist: bool  # Tensor.tolist() on a non-integer tensor
    scalar_output: bool  # .item(), .tolist(), capture_scalar_outputs
    dynamic_output_shape: bool
    backward: bool  # Tensor.backward() inside the compiled function
    disabled: bool  # a torch.compiler.disable'd function
    unsupported_call: bool  # a skipped, untraceable or C-extension callee
    skips_rest: bool  # Dynamo skipped the rest of the function
    callee: str  # the function or class Dynamo could not call, "" if none
    logging_call: str  # "print", "warnings.warn", "logger" or ""
    logger_method: str  # the Logger method called ("warning" when unnamed)
    logged_message: str  # what the Logger call would have logged, "" if unsaid
    condition_nodes: tuple[str, ...]  # the names under "computed as follows", in order


def break_words(summary: str, reason: str) -> BreakWords:
    """Read a graph break's summary and reason text.

    Example:
        >>> reason = "Data-dependent branching\\n  computed as follows:\\n    gt = gt(s, 0)"
        >>> w = break_words("", reason)
        >>> w.data_dependent_branch, w.condition_nodes
        (True, ('gt',))
    """
    low = f"{summary}\n{reason}".lower()
    callee = _callee(reason)
    logger = _LOGGER_CALL.search(reason)
    method = logger or _LOGGER_METHOD.search(reason)
    tail = reason.split("computed as follows", 1)[1] if "computed as follows" in reason else ""
    return BreakWords(
        explicit="torch._dynamo.graph_break()" in low,
        data_dependent_branch="data-dependent branching" in low
        or "jump with tensorvariable" in low,
        float_tolist="tolist()" in low and "non-integer" in low,
        scalar_output="item()" in low or "capture_scalar_outputs" in low or "tolist()" in low,
        dynamic_output_shape="dynamic shape operator" in low
        or "capture_dynamic_output_shape_ops" in low,
        backward="tensor.backward() call" in low,
        disabled="torch.compiler.disable" in low,
        unsupported_call="marked as skipped" in low
        or "does not know how to trace" in low
        or "c extension" in low,
        skips_rest="skipping the rest of the function" in reason,
        callee=callee,
        logging_call=_logging_call(reason.lower(), callee.lower()),
        logger_method=method["method"] if method else "warning",
        # its backticks would read as code spans in the advisor's Markdown
        logged_message=logger["msg"][:160].replace("`", "'") if logger else "",
        condition_nodes=tuple(m["name"] for m in _COND_NODE.finditer(tail)),
    )


def _logging_call(low_reason: str, low_callee: str) -> str:
    """By the callee Dynamo names, not by its hints (which cite ``_warnings.warn`` as an
    example for every skipped builtin)."""
    if "builtin operator `print`" in low_reason:
        return "print"
    if "logging.logger method" in low_reason:
        return "logger"
    if "warn" in low_callee:
        return "warnings.warn"
    if "print" in low_callee:
        return "print"
    return "logger" if "logging" in low_callee or "logger" in low_callee else ""


def _callee(reason: str) -> str:
    m = _SKIPPED.search(reason)
    if m is None:
        return ""
    return str(m["name"] or m["fn"] or m["skipped"] or m["cls"] or "")
