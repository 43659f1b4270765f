"""One compiled value against eager's: the errors, the tolerance torch's accuracy tooling
allows, and its verdict (``torch._dynamo.utils.same``) beside ``assert_close``'s, as the
model's ``Measured`` (the figures every ``NodeNumerics`` carries)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from compiler._compat import numerics as torch_numerics
from compiler.model.numerics import Measured

_LOW = ("torch.float16", "torch.bfloat16")
# error over tolerance where nothing is allowed: large but finite, so the JSON stays standard
_FAR = 1e30


def figures(found: Measured) -> dict[str, Any]:
    """``found``'s fields by name, for the record that extends ``Measured`` with where the
    value is (``NodeNumerics``, ``FinalNumerics``).

    Example:
        >>> figures(Measured(max_abs=0.5))["max_abs"]
        0.5
    """
    return {f.name: getattr(found, f.name) for f in dataclasses.fields(Measured)}


def _number(value: Any) -> float | None:
    found = float(value)
    return None if math.isnan(found) else found


def _multiplier(dtype: str, numel: int, tol: float) -> float:
    # torch._dynamo.utils.same's get_multiplier with the minifier's arguments
    if dtype in _LOW or numel < 1000 or tol >= 2e-2:
        return 3.0
    return 2.0


def measure(res: Any, ref: Any, ref64: Any, tol: float) -> Measured:
    """Compare compiled ``res`` with eager ``ref`` (same dtype) and ``ref64`` (float64
    eager, or None where the graph could not run in float64).

    Example:
        >>> import torch
        >>> m = measure(torch.ones(3) + 1e-6, torch.ones(3), torch.ones(3).double(), 1e-3)
        >>> m.within, m.ratio < 1
        (True, True)
        >>> measure(torch.ones(3) + 1, torch.ones(3), torch.ones(3).double(), 1e-3).within
        False
    """
    import torch

    if not isinstance(res, torch.Tensor) or not isinstance(ref, torch.Tensor):
        if isinstance(ref, (int, float, bool)) and not isinstance(ref, torch.Tensor):
            same = res == ref
            return Measured(dtype=type(ref).__name__, within=same, assert_close=same,
                            ratio=0.0 if same else _FAR)  # fmt: skip
        return Measured(reason="not a tensor: nothing to compare")
    dtype = str(ref.dtype)
    shape = tuple(int(s) for s in ref.shape)
    if res.shape != ref.shape:
        return Measured(reason=f"shape: compiled {tuple(res.shape)}, eager {shape}",
                        dtype=dtype, shape=shape)  # fmt: skip
    if res.dtype != ref.dtype:
        return Measured(reason=f"dtype: compiled {res.dtype}, eager {ref.dtype}",
                        dtype=dtype, shape=shape)  # fmt: skip
    if res.device != ref.device:
        res = res.to(ref.device)
    try:
        torch.testing.assert_close(res, ref, equal_nan=True)
        asserted = True
    except AssertionError:
        asserted = False
    fp64 = ref64 if isinstance(ref64, torch.Tensor) and ref64.dtype == torch.float64 else None
    within = torch_numerics.same(ref, res, fp64, tol)
    if ref.numel() == 0:
        return Measured(dtype=dtype, shape=shape, within=within, assert_close=asserted, ratio=0.0)
    if not (ref.is_floating_point() or ref.is_complex()):
        wrong = int((res != ref).sum())
        return Measured(dtype=dtype, shape=shape, max_abs=float(wrong), within=within,
                        assert_close=asserted, ratio=0.0 if wrong == 0 else _FAR)  # fmt: skip
    a, b = res.double(), ref.double()
    both_nan = torch.isnan(a) & torch.isnan(b)
    diff = torch.where(both_nan, torch.zeros_like(a), (a - b).abs())
    nonzero = b != 0
    rel = (diff[nonzero] / b[nonzero].abs()).max() if bool(nonzero.any()) else diff.new_zeros(())
    allowed = (diff / (tol + tol * b.abs())).max()
    ratio = _number(allowed)
    rmse = rmse_eager = bound = None
    closer = ""
    if fp64 is not None:
        rmse = _number(torch.sqrt(torch.mean((fp64 - a) ** 2)))
        rmse_eager = _number(torch.sqrt(torch.mean((fp64 - b) ** 2)))
        if rmse is not None and rmse_eager is not None:
            bound = _multiplier(dtype, ref.numel(), tol) * rmse_eager + tol / 10.0
            closer = "equal" if rmse == rmse_eager else "compiled" if rmse < rmse_eager else "eager"
            if ratio is None or ratio > 1:
                ratio = rmse / bound if bound > 0 else (0.0 if rmse == 0 else _FAR)
    ratio = _FAR if ratio is None else min(ratio, _FAR)
    if within and ratio > 1:  # same() passed on a rule of its own (NaNs where float64 has none)
        ratio = 1.0
    if not within and ratio <= 1:
        ratio = math.nextafter(1.0, math.inf)
    return Measured(dtype=dtype, shape=shape, max_abs=_number(diff.max()), max_rel=_number(rel),
                    rmse=rmse, rmse_eager=rmse_eager, rmse_bound=bound, tolerance=tol,
                    ratio=ratio, within=within, assert_close=asserted, closer=closer)  # fmt: skip
