"""Dynamo's, Inductor's and functorch's config modules: patched for a block, read by name as
this torch spells it, listed, and snapshotted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def patched_configs(inductor: dict[str, Any], functorch: dict[str, Any]) -> Iterator[None]:
    """Set inductor and functorch config values, restoring them on exit, also on error.

    Uses each config module's own ``patch`` (torch 2.11/2.13 ``ConfigModule.patch``).
    """
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    with inductor_config.patch(inductor), functorch_config.patch(functorch):
        yield


def patched_dynamo_config(values: dict[str, Any]) -> contextlib.AbstractContextManager[None]:
    """Set ``torch._dynamo.config`` values for one block (its ``ConfigModule.patch``,
    torch 2.11/2.13); a set-valued setting gets the set given, restored on exit."""
    import torch._dynamo.config as dynamo_config

    return dynamo_config.patch(values)  # type: ignore[no-any-return]


# settings renamed between torch versions: the newer name, and the older one it replaced
_DYNAMO_RENAMED = {"ignore_logging_functions": "ignore_logger_methods"}


def dynamo_config_name(name: str) -> str:
    """``name`` as this torch spells it: ``ignore_logging_functions`` (torch 2.13) was
    ``ignore_logger_methods`` before (still an alias on 2.13)."""
    import torch._dynamo.config as dynamo_config

    old = _DYNAMO_RENAMED.get(name)
    if old is not None and not hasattr(dynamo_config, name) and hasattr(dynamo_config, old):
        return old
    return name


def dynamo_config_value(name: str) -> Any:
    """The current value of a ``torch._dynamo.config`` setting."""
    import torch._dynamo.config as dynamo_config

    return getattr(dynamo_config, dynamo_config_name(name))


def inductor_option_names() -> frozenset[str]:
    """Names accepted in ``torch.compile(options=...)`` (``torch._inductor.list_options``)."""
    import torch._inductor

    return frozenset(torch._inductor.list_options())


def inductor_mode_names() -> frozenset[str]:
    """Values accepted as ``torch.compile(mode=...)`` (``torch._inductor.list_mode_options``)."""
    import torch._inductor

    return frozenset(torch._inductor.list_mode_options())


def dynamo_config_snapshot() -> dict[str, Any]:
    """Dynamo's config as a dict, to check capture leaves it unchanged."""
    import torch._dynamo.config as dynamo_config

    return dict(dynamo_config.get_config_copy())


def inductor_config_snapshot() -> dict[str, Any]:
    """Inductor's config as a dict, to check capture leaves it unchanged."""
    import torch._inductor.config as inductor_config

    return dict(inductor_config.get_config_copy())


def functorch_config_snapshot() -> dict[str, Any]:
    """AOTAutograd's (functorch) config as a dict, to check capture leaves it unchanged."""
    import torch._functorch.config as functorch_config

    return dict(functorch_config.get_config_copy())
