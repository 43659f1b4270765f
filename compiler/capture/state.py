"""What a capture's extra calls touch, saved before them and put back after.

Timing (``explore(measure=True)``), ``try_fixes`` and ``compare`` call the target more
often than the user did. A target with state (a training loop, a module that counts its
calls) would come out changed: ``snapshot`` finds the state reachable from the target and
its inputs, and ``Snapshot.restore`` puts it back in place, into the same tensors, so the
user's objects (and compiled code guarding on them) are the ones they had.

Reached: the target, its inputs, a function's closure, the globals its code names (and
those of functions it reaches), a bound method's object, a compiled function's or
module's original, and what lists, tuples, dicts and plain objects hold, a few levels
deep. Saved: parameters, buffers and gradients of every ``nn.Module``, plain attributes
of modules (ints, floats, bools, strings: call counters), other tensors reached, the
state and ``param_groups`` of optimizers, LR schedulers' attributes, the contents of
lists and dicts reached, and the RNG states (Python, torch CPU, every CUDA device).
Not saved (``Snapshot.missed`` names what was seen): iterators and generators (a data
loader's position), files, sockets, and anything outside what the target reaches.

Dynamo's side of it (compiles beside the process's own, dropped after) and the saving
around extra calls are used through one observation (``compiler.capture.observe``).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType, FunctionType, MethodType, ModuleType
from typing import Any

from compiler.link.user_code import is_torch_or_ours

_DEPTH = 4
_PLAIN = (int, float, bool, str, bytes, type(None))


@dataclass
class Snapshot:
    """Saved state; ``restore()`` puts it back (as often as needed)."""

    tensors: list[tuple[Any, Any]] = field(default_factory=list)
    grads: list[tuple[Any, Any]] = field(default_factory=list)
    attrs: list[tuple[Any, dict[str, Any]]] = field(default_factory=list)
    optimizers: list[tuple[Any, dict[Any, dict[str, Any]], list[dict[str, Any]]]] = field(
        default_factory=list
    )
    schedulers: list[tuple[Any, dict[str, Any]]] = field(default_factory=list)
    containers: list[tuple[Any, Any]] = field(default_factory=list)
    rng: tuple[Any, Any, Any] = (None, None, None)
    modules: int = 0
    missed: list[str] = field(default_factory=list)
    # every module's parameters reached, named ``<module class>.<parameter name>``
    parameters: list[tuple[str, Any]] = field(default_factory=list)

    def restore(self) -> None:
        """Put every saved value back into the objects it came from."""
        import torch

        with torch.no_grad():
            for tensor, saved in self.tensors:
                tensor.copy_(saved)
            for param, grad in self.grads:
                if grad is None:
                    param.grad = None
                elif param.grad is not None and param.grad.shape == grad.shape:
                    param.grad.copy_(grad)
                else:
                    param.grad = grad.clone()
            for opt, state, groups in self.optimizers:
                for key in [k for k in opt.state if k not in state]:
                    del opt.state[key]
                for key, values in state.items():
                    _restore_dict(opt.state[key], values)
                for group, values in zip(opt.param_groups, groups, strict=False):
                    _restore_dict(group, values)
        for obj, values in self.attrs:
            obj.__dict__.update(values)
        for sched, values in self.schedulers:
            sched.__dict__.update(copy.deepcopy(values))
        for container, saved in self.containers:
            if isinstance(container, list):
                container[:] = saved
            else:
                container.clear()
                container.update(saved)
        py, cpu, cuda = self.rng
        random.setstate(py)
        torch.set_rng_state(cpu)
        if cuda is not None:
            torch.cuda.set_rng_state_all(cuda)

    def describe(self) -> str:
        """One sentence for the Exploration's notes: what was saved and put back."""
        parts = [f"{self.modules} module(s)' parameters, buffers and gradients"]
        if self.optimizers:
            parts.append(f"{len(self.optimizers)} optimizer(s)' state and param_groups")
        if self.schedulers:
            parts.append(f"{len(self.schedulers)} LR scheduler(s)")
        parts.append(f"{len(self.tensors)} tensor(s) in all")
        parts.append("the RNG states (Python, torch CPU" + (", CUDA)" if self.rng[2] else ")"))
        text = "saved before the extra calls and restored after them: " + "; ".join(parts) + "."
        if self.missed:
            text += (
                " Not restored (the extra calls may have changed them): "
                + ", ".join(sorted(set(self.missed))[:6])
                + "."
            )
        return text


def _restore_dict(target: dict[str, Any], saved: dict[str, Any]) -> None:
    import torch

    for key in [k for k in target if k not in saved and k != "params"]:
        del target[key]
    for key, value in saved.items():
        now = target.get(key)
        if (
            isinstance(value, torch.Tensor)
            and isinstance(now, torch.Tensor)
            and now.shape == value.shape
            and now.dtype == value.dtype
        ):
            now.copy_(value)
        elif isinstance(value, torch.Tensor):
            target[key] = value.clone()
        else:
            target[key] = copy.deepcopy(value)


def _saved_dict(values: dict[str, Any]) -> dict[str, Any]:
    import torch

    return {
        k: v.detach().clone() if isinstance(v, torch.Tensor) else copy.deepcopy(v)
        for k, v in values.items()
        if k != "params"
    }


def snapshot(target: Callable[..., Any], *args: Any, **kwargs: Any) -> Snapshot:
    """Save the state ``target(*args, **kwargs)`` can reach (see the module's text).

    Example:
        >>> import torch
        >>> m = torch.nn.Linear(2, 2)
        >>> before = m.weight.detach().clone()
        >>> snap = snapshot(m)
        >>> with torch.no_grad():
        ...     _ = m.weight.add_(1)
        >>> snap.restore()
        >>> torch.equal(m.weight, before), snap.modules
        (True, 1)
    """
    import torch

    snap = Snapshot()
    seen: set[int] = set()
    tensors: dict[int, Any] = {}
    pending: list[tuple[Any, int]] = [(target, 0), *((a, 0) for a in (*args, *kwargs.values()))]
    while pending:
        obj, depth = pending.pop()
        if id(obj) in seen or depth > _DEPTH or isinstance(obj, (*_PLAIN, ModuleType, type)):
            continue
        seen.add(id(obj))
        pending.extend((child, depth + 1) for child in _children(obj, snap, tensors))
    with torch.no_grad():
        snap.tensors = [(t, t.detach().clone()) for t in tensors.values()]
    # CUDA's RNG only where CUDA is in use: reading it would start CUDA otherwise
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None  # type: ignore[no-untyped-call]
    snap.rng = (random.getstate(), torch.get_rng_state(), cuda)
    return snap


def _children(obj: Any, snap: Snapshot, tensors: dict[int, Any]) -> list[Any]:
    """Save what ``obj`` holds itself; return the objects it leads to."""
    import torch

    if isinstance(obj, torch.Tensor):
        if not isinstance(obj, torch.nn.Parameter) or obj.requires_grad:
            tensors.setdefault(id(obj), obj)
        return []
    if isinstance(obj, torch.nn.Module):
        snap.modules += 1
        for sub in obj.modules():
            snap.attrs.append(
                (sub, {k: v for k, v in vars(sub).items() if isinstance(v, _PLAIN)})
            )
        for t in (*obj.parameters(), *obj.buffers()):
            tensors.setdefault(id(t), t)
        snap.grads.extend(
            (p, None if p.grad is None else p.grad.detach().clone()) for p in obj.parameters()
        )
        snap.parameters.extend((f"{type(obj).__name__}.{n}", p) for n, p in obj.named_parameters())
        # what a module's forward reads besides its own state
        return [getattr(type(obj), "forward", None)]
    if isinstance(obj, torch.optim.Optimizer):
        state = {k: _saved_dict(v) for k, v in obj.state.items()}
        groups = [_saved_dict(g) for g in obj.param_groups]
        snap.optimizers.append((obj, state, groups))
        plain = {k: v for k, v in vars(obj).items() if isinstance(v, _PLAIN)}
        snap.attrs.append((obj, plain))
        return [p for g in obj.param_groups for p in g["params"]]
    if isinstance(obj, torch.optim.lr_scheduler.LRScheduler):
        values = {k: v for k, v in vars(obj).items() if k != "optimizer"}
        snap.schedulers.append((obj, copy.deepcopy(values)))
        return [obj.optimizer]
    if isinstance(obj, MethodType):
        return [obj.__self__, obj.__func__]
    if isinstance(obj, FunctionType):
        return _function_children(obj)
    if isinstance(obj, list | dict):
        snap.containers.append((obj, copy.copy(obj)))
        return list(obj.values() if isinstance(obj, dict) else obj)
    if isinstance(obj, tuple | set | frozenset):
        return list(obj)
    original = getattr(obj, "_torchdynamo_orig_callable", None) or getattr(obj, "_orig_mod", None)
    if original is not None:
        return [original]
    if hasattr(obj, "__next__") or hasattr(obj, "send") or hasattr(obj, "fileno"):
        snap.missed.append(f"{type(obj).__name__} (an iterator or file: its position)")
        return []
    held = getattr(obj, "__dict__", None)
    if isinstance(held, dict):
        snap.attrs.append((obj, {k: v for k, v in held.items() if isinstance(v, _PLAIN)}))
        return list(held.values())
    return []


def _function_children(fn: FunctionType) -> list[Any]:
    original = getattr(fn, "_torchdynamo_orig_callable", None)
    # torch's own functions and the explorer's (by their code's file: a compiled function
    # takes its original's __module__): what their closures and globals hold is library
    # state (Dynamo's caches, a capture's own bookkeeping), never the user's, and putting
    # it back would undo the capture's work. A compiled function leads to the original.
    if is_torch_or_ours(fn.__code__.co_filename):
        return [original] if original is not None else []
    found: list[Any] = list(fn.__defaults__ or ())
    for cell in fn.__closure__ or ():
        try:
            found.append(cell.cell_contents)
        except ValueError:  # an empty cell
            continue
    names: set[str] = set()
    codes: list[CodeType] = [fn.__code__]
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes.extend(c for c in code.co_consts if isinstance(c, CodeType))
    found.extend(fn.__globals__[n] for n in sorted(names) if n in fn.__globals__)
    if original is not None:
        found.append(original)
    return found


def compiled_reachable(target: Callable[..., Any], *args: Any) -> list[Any]:
    """The ``torch.compile`` results ``target`` reaches (itself, its closure, the globals
    its code names, a few levels deep): what it compiles when it runs as it is.

    Example:
        >>> import torch
        >>> f = torch.compile(torch.sin, backend="eager")
        >>> compiled_reachable(lambda x: f(x)) == [f]
        True
    """
    from compiler import _compat

    found: list[Any] = []
    seen: set[int] = set()
    pending: list[tuple[Any, int]] = [(target, 0), *((a, 0) for a in args)]
    while pending:
        obj, depth = pending.pop()
        if id(obj) in seen or depth > _DEPTH or isinstance(obj, (*_PLAIN, ModuleType, type)):
            continue
        seen.add(id(obj))
        if _compat.is_compiled(obj):
            found.append(obj)
            continue
        if isinstance(obj, FunctionType):
            children = _function_children(obj)
        elif isinstance(obj, MethodType):
            children = [obj.__self__, obj.__func__]
        elif isinstance(obj, list | tuple | dict):
            children = list(obj.values() if isinstance(obj, dict) else obj)
        else:
            continue
        pending.extend((c, depth + 1) for c in children)
    return found


def recompile_user_code(compiled: list[Any]) -> list[str]:
    """Drop Dynamo's cache entries of these ``torch.compile`` results (their code and
    resume functions, their backend) so that the capture sees them compile again, with the
    user's own backend; the capture's run rebuilds them. Returns what was dropped, named."""
    from compiler import _compat

    names = []
    for obj in compiled:
        try:
            name, dropped = _compat.evict_compiled(obj)
        except (AttributeError, ImportError, TypeError):  # a torch without these internals
            continue  # the capture then records what the run compiles, maybe nothing
        if dropped:
            names.append(name)
    return names

