"""Where compiled values leave eager's: one record per post-grad node of every Inductor
graph that ran, and the whole target's outputs and gradients against an eager rerun
(``compiler.numerics``; schema 4.3, ``end_to_end`` 4.4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from compiler.model.base import _FROZEN, SourceLoc
from compiler.model.derived import DERIVED

if TYPE_CHECKING:
    from compiler.model.exploration import Exploration


@dataclass(frozen=True, kw_only=True, slots=True)  # _FROZEN, for mypy to see kw_only
class Measured:
    """One compiled value against eager's: the figures and verdicts, or why it could not
    be compared (``reason``). Errors are against eager in the same dtype (``max_abs``,
    ``max_rel``: largest |compiled - eager| / |eager| where eager is not 0) and against
    float64 where there is a float64 reference (``rmse`` for compiled, ``rmse_eager``
    for eager, ``rmse_bound`` the most torch's ``same()`` allows: multiplier x
    ``rmse_eager`` + tolerance / 10). ``within`` is ``same()``'s verdict (allclose at
    ``tolerance``, else the RMSE test against float64); ``assert_close`` is
    ``torch.testing.assert_close``'s with its per-dtype defaults; ``ratio`` is the error
    over what is allowed (above 1 = not within); ``closer`` says which of compiled and
    eager is nearer float64 (``compiled``, ``eager``, ``equal``)."""

    reason: str = ""
    dtype: str = ""
    shape: tuple[int, ...] = ()
    max_abs: float | None = None
    max_rel: float | None = None
    rmse: float | None = None
    rmse_eager: float | None = None
    rmse_bound: float | None = None
    tolerance: float | None = None
    ratio: float | None = None
    within: bool | None = None
    assert_close: bool | None = None
    closer: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)  # _FROZEN, for mypy to see kw_only
class FinalNumerics(Measured):
    """One value the whole target produced, its compiled run against an eager rerun of
    the target (same inputs, same starting state and RNG): a returned output (``kind``
    ``output``; ``name`` its place in what the target returned: ``result``,
    ``result[0]``, ``result['loss']``) or a gradient the run left on a parameter (``kind``
    ``gradient``; ``name`` the module class and parameter: ``TwoLayers.a.weight``).
    ``compared`` is False where ``reason`` says why not (``random``: the compiled run drew
    its own random numbers; ``only the compiled run has this ...``). The reference is a
    float64 rerun of the whole target where one ran (its floating state and inputs cast to
    float64): then ``within`` is ``same()`` against float64, as for a node, and ``rmse``,
    ``rmse_bound`` and ``closer`` are set; where it could not run (an op without float64,
    random ops: ``Numerics.notes`` says why) they are None and ``within`` is ``same()``'s
    allclose at ``tolerance``.

    Example:
        >>> FinalNumerics(kind="output", name="result", compared=True, within=False).diverges
        True
    """

    kind: str
    name: str
    compared: bool

    @property
    def diverges(self) -> bool:
        """Compared and outside ``same()``'s tolerance."""
        return self.compared and self.within is False


@dataclass(frozen=True, kw_only=True, slots=True)  # _FROZEN, for mypy to see kw_only
class NodeNumerics(Measured):
    """One post-grad node: the compiled value against eager's (``Measured``'s figures), or
    why it was not compared.

    ``graph`` is the output code's graph (``forward``, ``backward``, ``inference``) of
    compile ``compile_id``; ``kernel`` the kernel whose call wrote ``buffer`` (its
    ``Kernel.id`` in ``kernel_id`` where the Exploration has it); ``source`` the user's
    line. ``output`` names a graph output (``forward output 0``, ``gradient 2``).
    ``reason`` starts with its kind and a colon: ``graph input``, ``view``, ``fused``,
    ``random``, ``not materialized``, ``no reference``, ``shape``, ``dtype``,
    ``not a tensor``.
    """

    graph: str
    compile_id: str
    node: str
    target: str
    order: int
    compared: bool
    kernel: str = ""
    kernel_id: str = ""
    buffer: str = ""
    source: SourceLoc | None = None
    output: str = ""

    @property
    def diverges(self) -> bool:
        """Compared and outside ``same()``'s tolerance."""
        return self.compared and self.within is False


@dataclass(**_FROZEN)
class Numerics:
    """Compiled against eager, node by node, for one run of a target.

    ``nodes`` are in graph order, graph after graph as they ran (forward, then backward).
    ``first_divergence`` is the first node past its tolerance (None when all agree);
    ``outputs`` the graph outputs among ``nodes`` (forward results, gradients), each
    against the eager run of its own graph; ``end_to_end`` what the whole target returned
    and the gradients it left, against an eager rerun of the whole target.
    ``exploration`` is the capture the nodes link into (not stored: the Exploration holds
    this record in ``Exploration.numerics``).

    Example:
        >>> Numerics(target="f").first_divergence is None
        True
    """

    target: str
    device: str = ""
    torch_version: str = ""
    tolerance: float = 1e-3
    low_precision: str = ""
    fallback_random: bool = False
    nodes: tuple[NodeNumerics, ...] = ()
    notes: tuple[str, ...] = ()
    # schema 4.4: the whole target's outputs and gradients against an eager rerun of it
    end_to_end: tuple[FinalNumerics, ...] = ()
    exploration: Exploration | None = field(
        default=None, compare=False, repr=False, metadata=DERIVED
    )

    @property
    def first_divergence(self) -> NodeNumerics | None:
        """The earliest node in graph order whose error passes its tolerance."""
        return next((n for n in self.nodes if n.diverges), None)

    @property
    def compared(self) -> tuple[NodeNumerics, ...]:
        """The nodes whose values were compared."""
        return tuple(n for n in self.nodes if n.compared)

    @property
    def not_compared(self) -> tuple[NodeNumerics, ...]:
        """The nodes that could not be compared, each with its reason."""
        return tuple(n for n in self.nodes if not n.compared)

    @property
    def outputs(self) -> tuple[NodeNumerics, ...]:
        """Graph outputs: forward results and gradients."""
        return tuple(n for n in self.nodes if n.output)

    @property
    def end_to_end_diverges(self) -> bool:
        """Whether any of the whole target's outputs or gradients leaves its tolerance."""
        return any(f.diverges for f in self.end_to_end)

    def worst(self, count: int = 10) -> tuple[NodeNumerics, ...]:
        """The compared nodes with the largest error over tolerance, worst first."""
        ranked = sorted(self.compared, key=lambda n: -(n.ratio or 0.0))
        return tuple(ranked[:count])
