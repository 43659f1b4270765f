"""What a graph break's cause usually takes, keyed by its graph-break registry id.

The id comes from torch's registry (``breaks.registry``); a break recorded without one
falls back to what its message says (``compiler.parse.words.breaks``). A cause without
a tailored rule here is told from the registry itself: its type, explanation, hints and
page. Which causes are tailored follows what users hit most (torch's and libraries'
issues): ``.item()`` read for logging, data-dependent branches, logging and printing,
``copy.deepcopy``, hooks, and torch's own breaks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from compiler.advise.breaks.registry import Entry
from compiler.model import Fix
from compiler.parse.words.breaks import BreakWords

# Registry ids of the causes this module tailors (torch 2.13 and 2.14.1 agree on them).
_BY_ID = {
    "GB0025": "explicit",  # Call to `torch._dynamo.graph_break()`
    "GB0170": "data_dependent_branch",  # Data-dependent branching
    "GB0035": "data_dependent_branch",  # ... with non-constant __bool__
    "GB0109": "float_tolist",  # Tensor.tolist() with non-integer tensor
    "GB0124": "scalar_output",  # Unsupported Tensor.item() call with capture_scalar_outputs=False
    "GB0033": "scalar_output",  # Data dependent operator (an integer .tolist())
    "GB0036": "dynamic_output_shape",  # Dynamic shape operator
    "GB0037": "dynamic_output_shape",
    "GB0246": "dynamic_output_shape",  # one_hot with a data-dependent size
    "GB0123": "backward",  # Unsupported Tensor.backward() call
    "GB0098": "disabled",  # Skip calling `torch.compiler.disable()`d function
    "GB0099": "disabled",
    "GB0291": "logging",  # logging.Logger method not supported
    "GB0059": "builtin",  # Failed to trace builtin operator (print among them)
    "GB0007": "unsupported_call",  # Attempted to call function marked as skipped
    "GB0008": "unsupported_call",
    "GB0009": "unsupported_call",
    "GB0147": "unsupported_call",  # Unsupported function call
    "GB0148": "unsupported_call",
    "GB0156": "unsupported_call",  # Unsupported method call
    "GB0194": "unsupported_call",  # isinstance() on an object with C extensions
    "GB0179": "deepcopy",  # copy.deepcopy()
    "GB4198": "deepcopy",  # Attempted to copy.deepcopy a tensor
    "GB0029": "hooks",  # Compilation of intermediate hooks requires compiled autograd
    "GB0083": "hooks",  # Module-level backwards hooks require compiled autograd.
    "GB0100": "hooks",  # Storing Tensor hook handle in globals
    "GB0101": "hooks",
    "GB7444": "hooks",  # register_hook with stride-dependent code
}
# breaks torch's own code makes on purpose: asked for, or a function it marked skipped
ON_PURPOSE = ("explicit", "unsupported_call", "disabled")
# a line that only reads a value to record it: a list, a print, a logger, a tracker
_RECORDS = re.compile(r"\.append\(|\bprint\(|\blog\w*[.(]|\.add_scalar|wandb|writer\.")


@dataclass(frozen=True, slots=True)
class Cause:
    """A cause: the finding's kind, title, suggestion, fix and severity."""

    kind: str
    title: str
    suggestion: str
    fix: Fix | None = None
    severity: str = "problem"


def cause_name(words: BreakWords, entry: Entry | None) -> str:
    """The tailored cause of a break: by its registry id, else by its words; "" for
    none (the registry tells it).

    Example:
        >>> from compiler.parse.words.breaks import break_words
        >>> cause_name(break_words("", ""), Entry("GB0179", "copy.deepcopy()", "", (), ""))
        'deepcopy'
    """
    if entry is not None:
        name = _BY_ID.get(entry.gb_id, "")
        if name == "builtin":
            return "logging" if words.logging_call else "unsupported_call"
        if name == "unsupported_call" and words.logging_call:
            return "logging"
        return name
    for name in ("explicit", "data_dependent_branch", "float_tolist", "scalar_output",
                 "dynamic_output_shape", "backward", "disabled"):  # fmt: skip
        if getattr(words, name):
            return name
    if words.logging_call:
        return "logging"
    return "unsupported_call" if words.unsupported_call else ""


def classify(name: str, words: BreakWords, code: str) -> Cause:
    """The tailored cause ``name`` (``cause_name``) of a break at the user's line
    ``code`` ("" where unknown)."""
    code = code or "the line"
    if name == "explicit":
        return Cause(
            "graph_break.explicit",
            "An explicit torch._dynamo.graph_break() splits the graph",
            f"`{code}` asks for the break. Remove it unless it is there on purpose "
            "(debugging, or to keep a region out of one graph); "
            "`torch.compiler.disable` on a function says the same more visibly.",
        )
    if name == "data_dependent_branch":
        return Cause(
            "graph_break.data_dependent_branch",
            "A branch on tensor data breaks the graph",
            f"`{code}` decides in Python on a value that only exists when the graph "
            "runs. Compute both sides and select, or hand both branches to torch.cond:\n"
            "```python\n"
            "y = torch.where(x.sum() > 0, x.cos(), x.sin())   # cheap branches: both run\n"
            "y = torch.cond(x.sum() > 0, lambda t: t.cos(), lambda t: t.sin(), (x,))\n"
            "```",
        )
    if name == "float_tolist":
        return Cause(
            "graph_break.scalar_output",
            "Tensor.tolist() on a float tensor breaks the graph",
            f"`{code}` turns a float tensor into Python numbers, which Dynamo cannot "
            "trace even with capture_scalar_outputs. Keep the values in a tensor and use "
            "tensor ops on them (indexing, torch.where) instead of a Python list.",
        )
    if name == "scalar_output":
        return _scalar(code)
    if name == "dynamic_output_shape":
        return Cause(
            "graph_break.dynamic_output_shape",
            "An op whose output size depends on the data breaks the graph",
            f"`{code}` (nonzero, unique, masked_select, ...) has a data-dependent output "
            "size. Let Dynamo trace it with an unbacked size:\n"
            "```python\n"
            "torch._dynamo.config.capture_dynamic_output_shape_ops = True\n"
            "```",
            Fix(
                kind="dynamo_config",
                name="capture_dynamic_output_shape_ops",
                value="True",
                code="torch._dynamo.config.capture_dynamic_output_shape_ops = True",
            ),
        )
    if name == "backward":
        return Cause(
            "graph_break.backward",
            "loss.backward() inside the compiled function breaks the graph",
            f"`{code}` runs autograd, which Dynamo does not trace: the forward is one "
            "graph, the backward still runs compiled (AOTAutograd's backward graph), and "
            "the rest of the function is a resume function. Compile the model (or the "
            "forward and the loss) and call backward outside the compiled function:\n"
            "```python\n"
            "compiled = torch.compile(model)\n"
            "loss = compiled(x, labels=x).loss\n"
            "loss.backward()\n"
            "```",
        )
    if name == "disabled":
        return Cause(
            "graph_break.disabled",
            "A function wrapped in torch.compiler.disable breaks the graph",
            f"`{code}` calls a function excluded from compilation; every call splits the "
            "graph there. Remove the `torch.compiler.disable` if the function is "
            "traceable, or move the call out of the compiled region.",
        )
    if name == "logging":
        return _logging(words, code)
    if name == "deepcopy":
        return Cause(
            "graph_break.deepcopy",
            "copy.deepcopy inside the compiled code breaks the graph",
            f"`{code}` deep-copies while Dynamo traces, which it does not support. Copy "
            "before the compiled call (a model or state copied once, outside), or copy "
            "tensors with `t.clone()` / `t.detach().clone()`, which stay in the graph.",
        )
    if name == "hooks":
        return Cause(
            "graph_break.hooks",
            "A hook Dynamo cannot put in the graph breaks it",
            f"`{code}` runs with a module or tensor hook that Dynamo cannot trace ahead "
            "of autograd (a backward hook on a module, a hook handle kept in a global). "
            "Register the hook outside the compiled code and run the backward under "
            "compiled autograd, which traces hooks:\n"
            "```python\n"
            "torch._dynamo.config.compiled_autograd = True\n"
            "```\n"
            "or use forward hooks (traced) where a backward hook only reads values.",
        )
    return _unsupported(words, code)


def _scalar(code: str) -> Cause:
    if re.match(r"(if|elif|while|assert)\b", code):
        # checked on torch 2.13: with capture_scalar_outputs the same line still breaks,
        # now as a data-dependent branch on the captured scalar
        return Cause(
            "graph_break.scalar_branch",
            "A Python decision on a tensor's value (.item()) breaks the graph",
            f"`{code}` branches in Python on a value read from a tensor. "
            "`capture_scalar_outputs` would only move the break to the branch; decide "
            "with tensor ops instead, or hand both branches to torch.cond:\n"
            "```python\n"
            "ids = torch.where(nxt == eos, ids_if_done, ids_if_not)   # both computed\n"
            "out = torch.cond(nxt == eos, done_fn, step_fn, (ids,))\n"
            "```\n"
            "or take the decision out of the compiled function (compile the step, loop "
            "and stop in Python).",
        )
    fix = Fix(
        kind="dynamo_config",
        name="capture_scalar_outputs",
        value="True",
        code="torch._dynamo.config.capture_scalar_outputs = True",
    )
    if _RECORDS.search(code):
        return Cause(
            "graph_break.scalar_output",
            "A tensor value read into Python to record it (.item()) breaks the graph",
            f"`{code}` reads a value only to keep or print it. Return the tensor from "
            "the compiled function and read it outside, where the step has finished:\n"
            "```python\n"
            "loss = step(x)               # compiled; returns loss.detach()\n"
            "losses.append(loss.item())   # outside the compiled code\n"
            "```\n"
            "or let Dynamo keep the value symbolic: "
            "`torch._dynamo.config.capture_scalar_outputs = True`.",
            fix,
        )
    return Cause(
        "graph_break.scalar_output",
        "A tensor value read into Python (.item(), .tolist(), a NumPy scalar) breaks the graph",
        f"`{code}` reads a tensor value into Python. Let Dynamo keep it symbolic:\n"
        "```python\n"
        "torch._dynamo.config.capture_scalar_outputs = True\n"
        "```\n"
        "or keep it a 0-d tensor (`x * x.sum()` rather than `x * x.sum().item()`).",
        fix,
    )


def _logging(words: BreakWords, code: str) -> Cause:
    logging_fn = words.logging_call or "print"
    if logging_fn == "logger":
        method = words.logger_method
        fn = f"logging.Logger.{method}"
        message = words.logged_message
        said = ""
        if message:
            said = f' It logs: "{message}"; changing what the message names avoids the call.'
        return Cause(
            "graph_break.logging",
            f"A `logger.{method}` call breaks the graph",
            f"`{code}` calls a logging.Logger method, which Dynamo cannot put in a graph.{said} "
            "Let Dynamo drop the call while compiling (it then does not log from compiled "
            "code):\n"
            "```python\n"
            "import logging\n"
            f"torch._dynamo.config.ignore_logging_functions.add({fn})\n"
            "```\n"
            "or move the logging out of the compiled function.",
            Fix(
                kind="dynamo_config",
                name="ignore_logging_functions",
                value=fn,
                code=f"torch._dynamo.config.ignore_logging_functions.add({fn})",
            ),
        )
    setting = f"torch._dynamo.config.reorderable_logging_functions.add({logging_fn})"
    return Cause(
        "graph_break.logging",
        "Printing or logging inside the compiled code breaks the graph",
        f"`{code}` runs Python I/O between two graphs. Move it out of the compiled "
        "function, or let Dynamo run it after the graph instead of breaking:\n"
        f"```python\n{setting}\n```",
        Fix(
            kind="dynamo_config",
            name="reorderable_logging_functions",
            value=logging_fn,
            code=setting,
        ),
    )


def _unsupported(words: BreakWords, code: str) -> Cause:
    name = words.callee or "a function"
    extra = ""
    if "random" in name.lower():
        extra = " Here `torch.rand(())` draws the number inside the graph instead."
    return Cause(
        "graph_break.unsupported_call",
        f"A call Dynamo cannot trace ({name}) breaks the graph",
        f"`{code}` calls `{name}`, a builtin or third-party function Dynamo skips."
        f"{extra} Put it in the graph as an opaque call if it only does torch ops, give "
        "Dynamo a traceable Python version, or keep it out on purpose:\n"
        "```python\n"
        "torch.compiler.allow_in_graph(fn)          # fn: torch ops on tensors only\n"
        "@torch.compiler.substitute_in_graph(fn)    # a traceable stand-in for fn\n"
        "def fn_traceable(*args): ...\n"
        "fn = torch.compiler.disable(fn)            # run it eagerly, on purpose\n"
        "```\n"
        "A C/C++ extension is best wrapped as a custom op (`torch.library.custom_op`).",
    )


def from_registry(entry: Entry, words: BreakWords, hints: tuple[str, ...]) -> Cause:
    """A break no rule here tailors, told by torch's registry: its type, what the
    message explains (the registry's template where the message has none), the hints
    recorded with it (else the registry's) and its page.

    Example:
        >>> from compiler.parse.words.breaks import break_words
        >>> e = Entry("GB0003", "Attempt to trace generator", "Generators cannot...", (), "")
        >>> from_registry(e, break_words("", ""), ()).title
        'Attempt to trace generator (GB0003) breaks the graph'
    """
    said = words.explanation or entry.explanation
    listed = hints or entry.hints
    parts = [said] if said else []
    if listed:
        parts.append("What torch suggests:\n" + "\n".join(f"- {h}" for h in listed))
    if entry.link:
        parts.append(f"torch's page for this break: {entry.link}")
    return Cause(
        "graph_break.other",
        f"{entry.gb_type} ({entry.gb_id}) breaks the graph",
        "\n".join(parts) or "See the graph break reason.",
    )
