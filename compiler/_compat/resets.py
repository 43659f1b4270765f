"""Whether Dynamo was reset while the explorer watched (torch internals, like the rest of
``compiler._compat``)."""

from __future__ import annotations

from typing import Any


def converted_codes() -> list[Any]:
    """The live code objects Dynamo has converted in this process
    (``convert_frame.input_codes``, 2.11-2.14): a reset empties it, so a code held from
    before and missing afterwards says that something reset Dynamo (strict
    ``torch.export`` does, 2.13: ``torch/_dynamo/functional_export.py``)."""
    from torch._dynamo import convert_frame

    return [c for ref in list(convert_frame.input_codes.seen) if (c := ref()) is not None]
