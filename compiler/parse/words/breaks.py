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
    r"|the function `(?P<skipped>[^`]+)` (?:in file|should not be traced)"
    r"|UserDefinedClassVariable\(<class '(?P<cls>[^']+)'>"
)
_LOGGER_CALL = re.compile(
    r"method: <Logger [^>]*>\.(?P<method>\w+), args: \[ConstantVariable\(str: '(?P<msg>[^']*)"
)
_LOGGER_METHOD = re.compile(r"<Logger [^>]*>\.(?P<method>\w+)")
# the page torch links for a registry id: ".../compile-graph-break-site/gb/gb0025.html"
_GB_PAGE = re.compile(r"/gb/gb(?P<id>\d+)\.html")
# "... the function `Adam.step` in file `/.../torch/optim/lr_scheduler.py` should not ..."
# (GB0008 names the file of the wrapper it skipped instead: "filename: `/.../torch/_compile.py`")
_CALLEE_FILE = re.compile(r"(?:in file|filename:) `(?P<file>[^`]+)`")
# format_error_msg_verbose: "WON'T CONVERT f /m.py line 13", then a Python traceback
_WONT_CONVERT = re.compile(r"^WON'T CONVERT (?P<fn>\S+) (?P<file>.+?) line (?P<line>\d+)")
_TB_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>.+)$', re.M)
_RAISED = re.compile(
    r"^(?P<exc>[A-Za-z_][\w.]*(?:Exception|Error|Failed|Unsupported)): ?(?P<msg>.*)$", re.M
)
_BACKEND_FAILED = re.compile(r"Backend compiler `(?P<backend>[^`]+)` failed with (?P<msg>.*)")
_BACKEND_NAME = re.compile(r"^\s*Backend: (?P<backend>\S+)", re.M)
# an operator as torch names it: "aten._local_scalar_dense.default", "prims.sum", "mylib::op"
_OP = re.compile(r"\b(?:(?:aten|prims|quantized)\.[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?|\w+::\w+)")


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
    gb_id: str  # the registry id whose page the message links ("GB0025"), "" if none
    explanation: str  # what the message's "Explanation:" says, filled in, "" if none
    callee_file: str  # the file of the function Dynamo skipped or was told to skip


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
        gb_id=gb_id_of(f"{summary}\n{reason}"),
        explanation=_explanation(reason),
        callee_file=(_CALLEE_FILE.search(reason) or {"file": ""})["file"],
    )


def gb_id_of(text: str) -> str:
    """The graph-break registry id that a message's page link names, "" if none.

    Example:
        >>> gb_id_of("please visit: https://x.io/gb/gb0025.html")
        'GB0025'
    """
    m = _GB_PAGE.search(text)
    return f"GB{m['id']}" if m else ""


def _explanation(reason: str) -> str:
    """The ``Explanation:`` paragraph of a registry-formatted message, its lines joined."""
    lines = reason.split("\n")
    for i, ln in enumerate(lines):
        if ln.strip().startswith("Explanation:"):
            out = [ln.strip()[len("Explanation:") :].strip()]
            for more in lines[i + 1 :]:
                if not more.startswith("    ") or not more.strip():
                    break
                out.append(more.strip())
            return " ".join(out)
    return ""


@dataclass(frozen=True, slots=True)
class Failure:
    """A backend compiler's failure as torch recorded it: Dynamo's "Backend compiler
    exception" break, or the traceback it logs beside it (``WON'T CONVERT``)."""

    backend: str  # "inductor", "" where the text does not say
    exception: str  # "DataDependentOutputException", "" where unsaid
    message: str  # the exception's message: "aten._local_scalar_dense.default"
    op: str  # the operator it names, "" if none
    frame: str  # the frame Dynamo could not convert ("f"), "" for the break record
    # the traceback's frames, outermost first: (file, line, function)
    stack: tuple[tuple[str, int, str], ...]


def failure_of(reason: str, text: str) -> Failure | None:
    """What a recorded backend failure says, or None for a text that is not one.

    Example:
        >>> r = "Backend compiler `inductor` failed with aten._local_scalar_dense.default. Adding"
        >>> f = failure_of(r, "")
        >>> f.backend, f.op
        ('inductor', 'aten._local_scalar_dense.default')
    """
    m = _BACKEND_FAILED.search(reason)
    if m is not None:
        msg = m["msg"].split(". Adding a graph break")[0].strip()
        named = _BACKEND_NAME.search(reason)
        op = _OP.search(msg)
        return Failure(
            backend=named["backend"] if named else m["backend"],
            exception="",
            message=msg,
            op=op.group(0) if op else "",
            frame="",
            stack=(),
        )
    head = _WONT_CONVERT.match(text)
    if head is None:
        return None
    # the last exception line: the innermost cause, after any "direct cause" chain
    raised = list(_RAISED.finditer(text))
    exc = raised[-1] if raised else None
    message = exc["msg"].strip() if exc else ""
    op = _OP.search(message) or _OP.search(text)
    tb = text.split("==========", 3)
    body = tb[2] if len(tb) > 2 else text  # the traceback, not the "following code" part
    return Failure(
        backend="",
        exception=exc["exc"].rsplit(".", 1)[-1] if exc else "",
        message=message,
        op=op.group(0) if op else "",
        frame=head["fn"],
        stack=tuple((f["file"], int(f["line"]), f["fn"].strip()) for f in _TB_FRAME.finditer(body)),
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
