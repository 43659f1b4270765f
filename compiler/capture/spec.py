"""How to call torch.compile: one ``CompileSpec`` and its one check, for every path that
compiles (``explore``, ``%%compile``, ``compare``, ``explorer.live`` and the tried fixes).

A spec holds what torch.compile takes (a backend may be a callable, an option any Python
value) and the explorer's own choices about the compile (``keep_caches``). An Exploration
stores ``spec.record()``, an ``Options`` of JSON-safe text whose form every schema version
shares, so the spec may grow without touching the file format. A new choice is one field
here; ``of`` and ``names`` (the keywords ``explorer.live`` takes), ``check``, ``compile``
and ``describe`` read the fields.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from compiler import _compat
from compiler.errors import OptionError
from compiler.model import Options, as_jsonable

__all__ = ["CompileSpec"]

# what torch.compile itself takes; the other fields are the explorer's choices
_TORCH_ARGS = ("backend", "mode", "dynamic", "fullgraph", "options")


@dataclass(frozen=True, kw_only=True, slots=True)
class CompileSpec:
    """How to compile a target: ``torch.compile``'s arguments and the explorer's choices.

    ``backend=None`` runs the target eagerly (``compare``'s baseline); ``keep_caches``
    keeps the FX graph and AOTAutograd caches on (stages a cache hit skips are missing).

    Example:
        >>> spec = CompileSpec(backend="aot_eager", dynamic=True)
        >>> spec.describe()
        'torch.compile(backend="aot_eager", dynamic=True)'
    """

    backend: str | Callable[..., Any] | None = "inductor"
    mode: str | None = None
    dynamic: bool | None = None
    fullgraph: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    keep_caches: bool = False

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The fields, in order: the keywords a spec is built from.

        Example:
            >>> CompileSpec.names()[:2]
            ('backend', 'mode')
        """
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def of(cls, **kwargs: Any) -> CompileSpec:
        """The spec of these keyword arguments (``options=None``: none); ``TypeError`` for a
        keyword that is not a field. Values are checked by ``check``.

        Example:
            >>> CompileSpec.of(mode="max-autotune", options=None).options
            {}
        """
        unknown = sorted(set(kwargs) - set(cls.names()))
        if unknown:
            msg = (f"unknown compile option{'s' * (len(unknown) > 1)} {', '.join(unknown)}; "
                   f"the options are {', '.join(cls.names())}.")  # fmt: skip
            raise TypeError(msg)
        if kwargs.get("options", {}) is None:
            kwargs["options"] = {}
        return cls(**kwargs)

    def kwargs(self) -> dict[str, Any]:
        """The fields as keyword arguments (``explore``'s, ``of``'s).

        Example:
            >>> CompileSpec(fullgraph=True).kwargs()["fullgraph"]
            True
        """
        return {name: getattr(self, name) for name in self.names()}

    def check(self, *, wrap: bool = True) -> CompileSpec:
        """This spec, once it is known to be one torch.compile accepts: the one check of how
        to compile, for every path, before anything runs.

        ``wrap=False``: the target calls torch.compile itself, so only torch's defaults
        may be given here.

        Raises:
            OptionError: an unknown backend, mode or Inductor option, a value of the wrong
                type, or a choice that does not apply.

        Example:
            >>> try:
            ...     CompileSpec(backend="inductr").check()
            ... except OptionError as e:
            ...     str(e).split(".")[0]
            "unknown backend 'inductr'"
        """
        self._check_types()
        backend, mode, options = self.backend, self.mode, self.options
        if not wrap:
            given = [n for n, v in (("mode", mode), ("options", options)) if v]
            if given or backend != "inductor":
                msg = (
                    f"{', '.join(given) or 'backend'} only applies when explore() compiles the "
                    "target itself, but the target is already compiled (or wrap=False). Pass "
                    "the options to your own torch.compile call, or pass the uncompiled function."
                )
                raise OptionError(msg)
            return self
        # inductor is always registered: not asking spares importing Dynamo where nothing
        # else needs it yet (the notebook side of explorer.live)
        if isinstance(backend, str) and backend != "inductor":
            import torch

            known = set(torch.compiler.list_backends(exclude_tags=()))
            if backend not in known:
                msg = f"unknown backend {backend!r}. Known backends: {', '.join(sorted(known))}."
                raise OptionError(msg)
        elif not isinstance(backend, str) and not callable(backend):
            what = type(backend).__name__
            raise OptionError(f"backend must be a name or a callable, not {what}.")
        if mode is not None:
            modes = _compat.inductor_mode_names()
            if mode not in modes:
                msg = f"unknown mode {mode!r}. Known modes: {', '.join(sorted(modes))}."
                raise OptionError(msg)
            if options:
                msg = "torch.compile takes mode or options, not both: pass one of them."
                raise OptionError(msg)
        if options:
            names = _compat.inductor_option_names()
            unknown = sorted(k for k in options if k not in names)
            if unknown:
                plural = "s" * (len(unknown) > 1)
                msg = (
                    f"unknown Inductor option{plural} {', '.join(map(repr, unknown))}; "
                    "see torch._inductor.list_options() for the names torch.compile accepts."
                )
                raise OptionError(msg)
        return self

    def _check_types(self) -> None:
        for name in ("fullgraph", "keep_caches"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise OptionError(f"{name} must be True or False, not {value!r}.")
        if self.dynamic is not None and not isinstance(self.dynamic, bool):
            raise OptionError(f"dynamic must be True, False or None, not {self.dynamic!r}.")
        if self.mode is not None and not isinstance(self.mode, str):
            raise OptionError(f"mode must be a name such as 'max-autotune', not {self.mode!r}.")
        opts = self.options
        if not isinstance(opts, dict) or not all(isinstance(k, str) for k in opts):
            msg = (f"options must be a dict of Inductor option names to values, not "
                   f"{opts!r:.80}, e.g. {{'trace.enabled': True}}.")  # fmt: skip
            raise OptionError(msg)

    def compile(self, target: Callable[..., Any]) -> Callable[..., Any]:
        """``target`` under ``torch.compile`` as this spec says (``target`` itself when
        ``backend`` is None): the one plain torch.compile call of every path.

        Example:
            >>> import torch
            >>> CompileSpec(backend="eager").compile(torch.sin)(torch.zeros(1))
            tensor([0.])
        """
        if self.backend is None:
            return target
        import torch

        args = {name: getattr(self, name) for name in _TORCH_ARGS}
        # options={} beside a mode is refused by torch: no options is None
        args["options"] = dict(self.options) or None
        return torch.compile(target, **args)

    def compile_fresh(self, target: Callable[..., Any]) -> tuple[Callable[..., Any], object]:
        """``target`` compiled beside whatever the process compiled before, never reusing it
        and never counted against its recompile limit (a backend equal to no other and
        ``isolate_recompiles=True``), so capture sees every compile without a reset; with
        that backend, by which its cache entries are dropped once the capture is done
        (``compiler.capture.observe.Observation.compiled`` keeps both).

        Example:
            >>> import torch
            >>> f, backend = CompileSpec(backend="eager").compile_fresh(torch.sin)
            >>> f(torch.zeros(1)), backend == "eager"
            (tensor([0.]), False)
        """
        import torch

        args = {name: getattr(self, name) for name in _TORCH_ARGS}
        args["options"] = dict(self.options) or None
        if self.backend == "inductor":  # its mode and options go in its wrapper
            mode, options = args.pop("mode"), args.pop("options")
        else:
            mode, options = None, None
        assert self.backend is not None, "an eager spec compiles nothing"
        args["backend"] = _compat.fresh_backend(self.backend, mode, options, self.dynamic)
        args.update(_compat.compile_isolation())
        return torch.compile(target, **args), args["backend"]

    def record(self, *, wrapped: bool = True) -> Options:
        """What an Exploration stores of this spec: its JSON-safe ``Options`` (a callable
        backend by its name, option values as text).

        ``wrapped``: whether the explorer compiled the target itself.

        Example:
            >>> CompileSpec(options={"max_autotune": True}).record().options
            {'max_autotune': 'True'}
        """
        backend = self.backend
        return Options(
            backend=backend if backend is None or isinstance(backend, str)
            else describe_target(backend),
            mode=self.mode,
            dynamic=self.dynamic,
            fullgraph=self.fullgraph,
            options={k: as_jsonable(v) for k, v in self.options.items()},
            keep_caches=self.keep_caches,
            wrapped=wrapped,
        )  # fmt: skip

    def describe(self) -> str:
        """The torch.compile call, as a user would write it; ``eager`` without a backend.

        Example:
            >>> CompileSpec(mode="max-autotune").describe()
            'torch.compile(backend="inductor", mode="max-autotune")'
        """
        if self.backend is None:
            return "eager (no torch.compile)"
        backend = self.backend if isinstance(self.backend, str) else describe_target(self.backend)
        parts = [f'backend="{backend}"']
        if self.mode:
            parts.append(f'mode="{self.mode}"')
        if self.dynamic is not None:
            parts.append(f"dynamic={self.dynamic}")
        if self.fullgraph:
            parts.append("fullgraph=True")
        if self.options:
            parts.append(f"options={self.options!r}")
        return f"torch.compile({', '.join(parts)})"


def describe_target(target: Callable[..., Any]) -> str:
    """A short name for the target: ``module.qualname`` or the class of a module."""
    import torch

    if isinstance(target, torch.nn.Module):
        return type(target).__name__
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    return str(name) if name else type(target).__name__
