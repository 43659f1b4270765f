"""What an Inductor Triton kernel's module, and the tools that lower it, print: the module
file a TTIR's locations name, the ``size_hints`` and heuristics of the kernel's
decorator, its block-size parameters, a compile target's name, the line of its ``def``,
and ptxas's resource report. The kernel lab reads these of the captured kernel and of the
user's edit alike."""

from __future__ import annotations

import ast
import re

__all__ = [
    "block_params",
    "lines_before_def",
    "module_path",
    "ptxas_stats",
    "size_hints",
    "target_arch",
    "with_heuristics",
]

# a TTIR location of the kernel's module file: ``#loc1 = loc("/tmp/.../cxyz.py":18:0)``
_MODULE_LOC = re.compile(r'#loc\d* = loc\("(?P<path>[^"]+\.py)":\d+:\d+\)')
_SIZE_HINTS = re.compile(r"size_hints=(?P<hints>\{[^}]*\})")
_TARGET = re.compile(r"^(?:cuda\s+)?(?:sm_?)?(?P<arch>\d{2,3})a?(?:\s+warp32)?$")
_CONSTEXPR_PARAM = re.compile(r"(?P<name>[A-Z0-9_]*BLOCK)\s*:\s*tl\.constexpr")
_SIGNATURE_START = re.compile(r"^def\s+(?P<name>\w+)\s*\((?P<params>[^)]*)\)", re.MULTILINE)
_DECORATOR = re.compile(r"^@triton_heuristics\.(?P<kind>\w+)\(", re.MULTILINE)
_DEF = re.compile(r"^\s*def\s", re.MULTILINE)
_PTXAS_REGS = re.compile(r"Used (?P<n>\d+) registers")
_PTXAS_SPILLS = re.compile(
    r"(?P<stack>\d+) bytes stack frame, (?P<stores>\d+) bytes spill stores, "
    r"(?P<loads>\d+) bytes spill loads"
)
_PTXAS_SMEM = re.compile(r"(?P<n>\d+) bytes smem")


def module_path(ttir: str) -> str:
    """The path of the kernel's module file that a TTIR's locations name, or "".

    Example:
        >>> module_path('#loc1 = loc("/tmp/ti/cx/cxyz.py":18:0)')
        '/tmp/ti/cx/cxyz.py'
    """
    m = _MODULE_LOC.search(ttir)
    return m["path"] if m else ""


def size_hints(source: str) -> dict[str, int]:
    """Inductor's ``size_hints`` of the kernel's decorator.

    Example:
        >>> size_hints("@triton_heuristics.reduction(size_hints={'x': 2048, 'r0_': 1024},")
        {'x': 2048, 'r0_': 1024}
    """
    m = _SIZE_HINTS.search(source)
    if m is None:
        return {}
    try:
        hints = ast.literal_eval(m["hints"])
    except (ValueError, SyntaxError):
        return {}
    return {str(k): int(v) for k, v in hints.items() if isinstance(v, int)}


def block_params(source: str) -> list[str]:
    """The block-size ``tl.constexpr`` parameters of the kernel's signature.

    Example:
        >>> block_params("def k(x, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):")
        ['XBLOCK', 'R0_BLOCK']
    """
    sig = _SIGNATURE_START.search(source)
    return [m["name"] for m in _CONSTEXPR_PARAM.finditer(sig["params"] if sig else "")]


def target_arch(target: str) -> int | None:
    """The compute capability a target names (``sm_80``, ``sm90``, ``90``, or Triton's
    ``cuda sm90 warp32``), or None.

    Example:
        >>> target_arch("cuda sm90 warp32"), target_arch("sm_80"), target_arch("volta")
        (90, 80, None)
    """
    m = _TARGET.match(target.strip())
    return int(m["arch"]) if m else None


def with_heuristics(source: str, name: str) -> str:
    """``source`` with its ``@triton_heuristics.<kind>(`` decorator calling ``name``'s
    ``<kind>`` instead, lines kept.

    Example:
        >>> with_heuristics("@triton_heuristics.pointwise(\\n", "h")
        '@h.pointwise(\\n'
    """
    return _DECORATOR.sub(lambda m: f"@{name}.{m['kind']}(", source)


def lines_before_def(text: str) -> int:
    """How many lines of a function's source come before its ``def`` (its decorators).

    Example:
        >>> lines_before_def("@triton.jit\\ndef k(x):\\n    pass")
        1
    """
    m = _DEF.search(text)
    return text.count("\n", 0, m.start()) if m else 0


def ptxas_stats(log: str) -> dict[str, int | None]:
    """ptxas's registers, spills, stack and shared memory, from its ``-v`` report.

    Example:
        >>> ptxas_stats("ptxas info    : Used 32 registers, 0 bytes smem")["registers"]
        32
    """
    regs = _PTXAS_REGS.search(log)
    spills = _PTXAS_SPILLS.search(log)
    smem = _PTXAS_SMEM.search(log)
    return {
        "registers": int(regs["n"]) if regs else None,
        "spill_stores": int(spills["stores"]) if spills else None,
        "spill_loads": int(spills["loads"]) if spills else None,
        "stack_bytes": int(spills["stack"]) if spills else None,
        "static_shared": int(smem["n"]) if smem else 0,
    }
