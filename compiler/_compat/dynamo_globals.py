"""The globals Dynamo installs in a user's namespace, removed while that namespace still
holds them.

Each compile installs globals in the frame's namespace (``__builtins_dict___N``,
``__compiled_fn_...``, ``__import_...``) and removes each when its transformed code object
dies (torch 2.13: ``CleanupHook`` in ``torch/_dynamo/utils.py``, run by
``CleanupManager``). Whoever clears a namespace before that code dies makes each removal
find its name gone and print ``Exception ignored ... KeyError: '__builtins_dict___N'``:
IPython's exit, whose reset clears the user namespace first (an Exploration keeps the
transformed code of each frame, to decompile it when first read, so that code dies late),
and doctest, which clears an example's namespace when the example ends, before the next
``torch.compiler.reset()`` lets go of the code compiled in it. So the removals are run
while the names are still there: for one namespace just before it is cleared
(``remove_installed_globals(namespace)``), and for every namespace at exit after a capture
(before IPython's own exit handler, registered earlier, which ``atexit`` runs later). Each
removal runs once: the code that dies later has nothing left to do.
"""

from __future__ import annotations

import atexit
from typing import Any

__all__ = ["remove_at_exit", "remove_installed_globals"]

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
        atexit.register(remove_installed_globals)


def remove_installed_globals(namespace: dict[str, Any] | None = None) -> int:
    """Remove now the globals Dynamo installed in ``namespace`` (in every namespace when
    None), and forget those removals, so that none runs again when the transformed code
    that uses the globals dies. Returns how many were removed.

    For a namespace that is about to be cleared, or at exit: code compiled in it and run
    again afterwards would miss the globals. A name removed already (the namespace was
    cleared first) is passed over. ``CleanupManager.instance`` maps each transformed code
    (by ``id``, with a weak reference whose callback runs the removals) to its
    ``CleanupHook``s, each holding ``scope`` and ``name`` (torch 2.11-2.14.1).

    Example:
        >>> import torch
        >>> namespace = {"torch": torch}
        >>> exec("def f(x):\\n    return torch.sin(x)\\n", namespace)
        >>> _ = torch.compile(namespace["f"], backend="eager")(torch.ones(2))
        >>> [n for n in namespace if n.startswith("__builtins_dict")] != []
        True
        >>> remove_installed_globals(namespace) > 0
        True
        >>> [n for n in namespace if n.startswith("__builtins_dict")]
        []
    """
    try:
        from torch._dynamo.utils import CleanupManager
    except ImportError:  # torch changed: its removals run as before
        return 0
    manager = getattr(CleanupManager, "instance", None)
    hooks_of = getattr(manager, "values", None)
    weak_refs = getattr(manager, "refs", None)
    if not isinstance(hooks_of, dict) or not isinstance(weak_refs, dict):
        return 0
    removed = 0
    for idx, hooks in list(hooks_of.items()):
        here = [h for h in hooks if namespace is None or getattr(h, "scope", None) is namespace]
        if not here:
            continue
        for hook in here:
            scope, name = getattr(hook, "scope", None), getattr(hook, "name", None)
            if isinstance(scope, dict) and name in scope:
                hook()
                removed += 1
        rest = [h for h in hooks if all(h is not mine for mine in here)]
        if rest:
            hooks_of[idx] = rest
        else:  # dropping the weak reference drops its callback: nothing runs later
            hooks_of.pop(idx, None)
            weak_refs.pop(idx, None)
    return removed
