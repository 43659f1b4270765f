"""The names torch gives: Dynamo's placeholder names, which spell a module path, the
descriptor comments AOTAutograd prints beside its graphs' inputs and outputs (torch 2.13:
``torch/_functorch/_aot_autograd/descriptors.py``), the globals and temporaries of the
code Dynamo transforms, and the output code's library calls."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

# `L_self_modules_h_modules_0_modules_attn_parameters_weight_`: module path `h.0.attn`
_ATTR = re.compile(r"^(?:L|G)_self_(?P<rest>.+?)_(?:parameters|buffers)_(?P<leaf>.+)_$")
_MODULES_PREFIX = "modules_"
_ITEM = re.compile(r"\[['\"]?(?P<key>[^'\"\]]+)['\"]?\]")

_INPUT = re.compile(r'^\s*(?P<name>\w+): "[^"]*",?\s*# (?P<desc>\w*AOTInput\(.*\))\s*$')
_OUTPUT = re.compile(r"^\s*(?P<name>\w+),\s*# (?P<desc>\w*AOTOutput\(.*\))\s*$")
_PLAIN = re.compile(r"PlainAOTInput\(idx=(?P<idx>\d+)\)")
_TARGET = re.compile(r"(?:Param|Buffer)AOTInput\(target=['\"](?P<target>[^'\"]+)['\"]\)")
_TANGENT = re.compile(r"^TangentAOTInput\(output=(?P<output>.*)\)$")
_PRIMAL = re.compile(r"^primals_(?P<n>\d+)$")
# an inference graph's inputs, without descriptors: arg0_1, arg1_1, ...
_ARG = re.compile(r"^arg(?P<n>\d+)_1$")


def module_path_of_placeholder(target: str) -> str | None:
    """The module path Dynamo encoded in a parameter or buffer placeholder name ("" for
    the root module's own, None for a name that holds none).

    Example:
        >>> module_path_of_placeholder("L_self_modules_h_modules_0_modules_attn_parameters_weight_")
        'h.0.attn'
    """
    m = _ATTR.match(target)
    if m is None:
        return None
    rest = m["rest"]
    if not rest.startswith(_MODULES_PREFIX):
        return ""  # a parameter of the root module itself
    return ".".join(rest[len(_MODULES_PREFIX) :].split("_modules_"))


def attribute_of_placeholder(target: str) -> str | None:
    """The parameter or buffer a Dynamo placeholder name spells, as a dotted path from the
    root module (``h.0.attn.weight``), None for a name that spells none.

    Example:
        >>> attribute_of_placeholder("L_self_modules_h_modules_0_parameters_weight_")
        'h.0.weight'
        >>> attribute_of_placeholder("L_self_modules_bn_buffers_running_mean_")
        'bn.running_mean'
        >>> attribute_of_placeholder("L_x_") is None
        True
    """
    path = module_path_of_placeholder(target)
    m = _ATTR.match(target)
    if path is None or m is None:
        return None
    return f"{path}.{m['leaf']}" if path else m["leaf"]


def module_paths(nn_module_stack: Mapping[str, object]) -> tuple[str, ...]:
    """Module paths from torch's ``nn_module_stack`` (``{key: (path, type)}``), outermost first.

    torch writes paths as the Python that reaches the module (``L['self'].h[0].attn``,
    ``L['self']._modules['h']``); they come out as ``h.0.attn``. The root (``self``)
    is dropped.

    Example:
        >>> module_paths({"k": ("L['self'].h[0]", object)})
        ('h.0',)
    """
    out: list[str] = []
    for value in nn_module_stack.values():
        raw = value[0] if isinstance(value, (tuple, list)) and value else value
        path = _normalise(str(raw))
        if path and path not in out:
            out.append(path)
    return tuple(out)


@functools.lru_cache(maxsize=8192)  # capture normalises the same few paths for every node
def _normalise(raw: str) -> str:
    text = raw
    for root in ("L['self']", 'L["self"]', "self"):
        if text.startswith(root):
            text = text[len(root) :]
            break
    else:
        if text.startswith(("L[", "G[")):
            text = text.split("]", 1)[1] if "]" in text else ""
    text = text.replace("._modules", "")
    text = _ITEM.sub(lambda m: "." + m["key"], text)
    return text.strip(".")


def descriptors(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """(placeholder name -> input descriptor, output descriptor -> returned node name)
    of an AOT graph's text.

    Example:
        >>> descriptors('    primals_1: "f32[4][1]cpu"  # PlainAOTInput(idx=0)')
        ({'primals_1': 'PlainAOTInput(idx=0)'}, {})
    """
    inputs: dict[str, str] = {}
    outputs: dict[str, str] = {}
    for line in text.split("\n"):
        if "AOT" not in line:
            continue
        m = _INPUT.match(line)
        if m:
            inputs[m["name"]] = m["desc"]
            continue
        m = _OUTPUT.match(line)
        if m:
            outputs.setdefault(m["desc"], m["name"])
    return inputs, outputs


def input_target(desc: str) -> str | None:
    """The parameter or buffer a lifted input's descriptor names, else None.

    Example:
        >>> input_target("ParamAOTInput(target='lin.weight')")
        'lin.weight'
    """
    m = _TARGET.search(desc)
    return m["target"] if m else None


def input_index(desc: str, name: str) -> int:
    """Which of the Dynamo graph's placeholders an AOT input is: ``PlainAOTInput(idx=N)``
    gives N; without a descriptor (older torch), ``primals_N`` is taken to be the N-th
    (1-based) and an inference graph's ``argN_1`` the N-th (0-based); -1 where neither
    says.

    Example:
        >>> input_index("PlainAOTInput(idx=2)", "primals_3"), input_index("", "primals_3")
        (2, 2)
        >>> input_index("", "arg0_1")
        0
    """
    m = _PLAIN.search(desc)
    if m is None and not desc:
        p = _PRIMAL.match(name)
        if p:
            return int(p["n"]) - 1
        a = _ARG.match(name)
        return int(a["n"]) if a else -1
    return int(m["idx"]) if m else -1


def tangent_of(desc: str) -> str | None:
    """The output descriptor whose gradient a ``TangentAOTInput`` is, else None.

    Example:
        >>> tangent_of("TangentAOTInput(output=PlainAOTOutput(idx=0))")
        'PlainAOTOutput(idx=0)'
    """
    m = _TANGENT.match(desc)
    return m["output"] if m else None


def is_plain_output(desc: str) -> bool:
    """Whether an output descriptor is one of the user's outputs (``PlainAOTOutput``), not
    a gradient, a saved tensor or a mutated input.

    Example:
        >>> is_plain_output("PlainAOTOutput(idx=0)"), is_plain_output("GradAOTOutput(grad_of=...)")
        (True, False)
    """
    return desc.startswith("PlainAOTOutput")


def is_primal(name: str) -> bool:
    """Whether ``name`` is one of AOTAutograd's forward inputs (``primals_N``).

    Example:
        >>> is_primal("primals_12"), is_primal("tangents_1")
        (True, False)
    """
    return _PRIMAL.match(name) is not None


# Inductor's C++ kernels under ``cpp.enable_kernel_profile`` record ``graph_<id>_<kernel>``
_CPP_PROFILED = re.compile(r"^graph_\d+_(?P<kernel>cpp_\w+)$")


def profiled_kernel_name(event: str) -> str:
    """The output code's kernel name in a profiler event's name (a C++ kernel's event
    carries its graph's number first; a Triton kernel's is the kernel name itself).

    Example:
        >>> profiled_kernel_name("graph_0_cpp_fused_add_0")
        'cpp_fused_add_0'
        >>> profiled_kernel_name("triton_poi_fused_add_0")
        'triton_poi_fused_add_0'
    """
    m = _CPP_PROFILED.match(event)
    return m["kernel"] if m else event


# --- the globals and temporaries Dynamo names in the code it transforms -----------------

# Dynamo's temporaries in a transformed frame: ``tmp_3``
_DYNAMO_TEMPORARY = re.compile(r"tmp_\d+")
# each module its code needs, as a global ``__import_<dotted_dot_name>``
_IMPORT_GLOBAL = re.compile(r"__import_(?P<module>\w+)")
# and the builtins module's dict as ``__builtins_dict___N``
_BUILTINS_GLOBAL = re.compile(r"__builtins_dict___\d+")
# the globals a transformed frame calls: its compiled graphs and resume functions
DYNAMO_CALL_PREFIXES = ("__compiled_fn", "__resume_at")


def is_dynamo_temporary(name: str) -> bool:
    """Whether ``name`` is one of Dynamo's temporaries.

    Example:
        >>> is_dynamo_temporary("tmp_3"), is_dynamo_temporary("tmp")
        (True, False)
    """
    return _DYNAMO_TEMPORARY.fullmatch(name) is not None


def imported_module(name: str) -> str | None:
    """The module a Dynamo ``__import_...`` global holds, or None for another name.

    Example:
        >>> imported_module("__import_torch_dot_nn_dot_functional")
        'torch.nn.functional'
    """
    found = _IMPORT_GLOBAL.fullmatch(name)
    return found["module"].replace("_dot_", ".") if found else None


def is_builtins_dict(name: str) -> bool:
    """Whether ``name`` is the global Dynamo keeps the builtins module's dict in.

    Example:
        >>> is_builtins_dict("__builtins_dict___2")
        True
    """
    return _BUILTINS_GLOBAL.fullmatch(name) is not None


# --- the output code's library calls ----------------------------------------------------

# how the output code names a library call: ``extern_kernels.mm(...)``
EXTERN_PREFIX = "extern_kernels."


def extern_call(op: str) -> str:
    """The output code's name of library call ``op`` (an autotuning choice's name).

    Example:
        >>> extern_call("mm")
        'extern_kernels.mm'
    """
    return EXTERN_PREFIX + op


def library_aten_name(name: str) -> str | None:
    """The profiler's name for a library call of the output code: ``extern_kernels.mm``
    and ``torch.ops.aten.mm.default`` both run under ``aten::mm``.

    Example:
        >>> library_aten_name("extern_kernels.mm"), library_aten_name("torch.ops.aten.bmm.default")
        ('aten::mm', 'aten::bmm')
    """
    if name.startswith(EXTERN_PREFIX):
        return f"aten::{name.split('.', 1)[1]}"
    if name.startswith("torch.ops.aten."):
        return f"aten::{name.split('.')[3]}"
    return None


def input_name(target: str) -> str:
    """The user's name of a Dynamo graph input (its placeholder target ``L_x_``; a
    global's ``G_scale_``).

    Example:
        >>> input_name("L_x_"), input_name("L_attention_mask_")
        ('x', 'attention_mask')
    """
    m = re.match(r"^[LG]_(?P<name>.+?)_?$", target)
    return m["name"] if m else target
