"""The globals Dynamo installs in a user's namespace, removed while that namespace still
holds them.

Each compile installs globals in the frame's namespace (``__builtins_dict___N``,
``__compiled_fn_...``, ``__import_...``) and removes each when its transformed code object
dies (torch 2.13: ``CleanupHook`` in ``torch/_dynamo/utils.py``, run by
``CleanupManager``). An Exploration keeps the transformed code of each frame (to decompile
it when first read), so that code can die late: at IPython's exit, whose reset clears the
user namespace first, and each hook then finds its name gone and prints
``Exception ignored ... KeyError: '__builtins_dict___N'``. So after a capture, at exit
(before IPython's own exit handler, registered earlier, which ``atexit`` runs later), the
hooks run while the names are still there, and the code dies later with nothing to do.
"""

from __future__ import annotations

import atexit
import contextlib

__all__ = ["remove_at_exit"]

_registered = False


def remove_at_exit() -> None:
    """Remove Dynamo's installed globals at interpreter exit, while the namespaces that
    hold them are intact (once per process; later calls do nothing).

    Example:
        >>> remove_at_exit(); remove_at_exit()  # registers one exit handler
    """
    global _registered
    if not _registered:
        _registered = True
        atexit.register(_remove_installed_globals)


def _remove_installed_globals() -> None:
    try:
        from torch._dynamo.utils import CleanupManager
    except ImportError:  # torch changed: its hooks run as before
        return
    manager = CleanupManager.instance
    for key in list(getattr(manager, "values", {})):
        with contextlib.suppress(Exception):  # a hook whose name is gone already
            manager._remove_id(key)
