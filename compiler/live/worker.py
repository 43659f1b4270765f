"""The live compile worker: a process that compiles edited source on request.

Started by ``compiler.live.LiveEngine`` as ``python -m compiler.live.worker``; it speaks
the worker protocol (``compiler.worker.frames``), and the user's prints go to stderr so
they cannot corrupt a frame. It imports torch and runs one warm-up compile before saying
it is ready, so that an edit pays for the compile only.
"""

from __future__ import annotations

import contextlib
import linecache
import pickle
import re
import signal
import sys
import time
import traceback
import types
from typing import Any

from compiler.worker.frames import error as _error
from compiler.worker.frames import serve


def _line_in(tb: Any, filename: str) -> int | None:
    line = None
    for frame in traceback.extract_tb(tb):
        if frame.filename == filename:
            line = frame.lineno
    return line


def _line_in_text(exc: BaseException, filename: str) -> int | None:
    """The last ``File "<live>", line N`` of the "from user code:" stack Dynamo's
    errors print (a graph break under fullgraph is raised by the tracer, not the code)."""
    found = re.findall(rf'File "{re.escape(filename)}", line (\d+)', str(exc))
    return int(found[-1]) if found else None


_loaded: dict[str, Any] = {}  # the state files read so far, by path (the newest of each kind)


def _state(path: str | None, kind: str) -> dict[str, Any]:
    """The values a state file holds (``compiler.live.crossing``), mapped, not copied;
    kept while the kernel sends the same path, so that an edit reads no state again."""
    import torch

    if path is None:
        return {}
    key = f"{kind}:{path}"
    if key not in _loaded:
        for old in [k for k in _loaded if k.startswith(f"{kind}:")]:
            del _loaded[old]
        from compiler.live.crossing import file_of

        _loaded[key] = torch.load(file_of(path), mmap=True, weights_only=False)
    values: dict[str, Any] = _loaded[key]
    return values


def _namespace(req: dict[str, Any]) -> dict[str, Any]:
    """What the source runs with: torch, nn and F; an importable module's globals (a
    library method's); the notebook's values it names."""
    import importlib

    import torch

    # a real module in sys.modules: Dynamo imports the module of a function it inlines
    live = types.ModuleType("__live__")
    ns: dict[str, Any] = vars(live)
    if req.get("module"):
        ns.update(vars(importlib.import_module(req["module"])))
    ns.update({"__name__": "__live__", "torch": torch, "nn": torch.nn, "F": torch.nn.functional})
    ns.update(_state(req.get("names"), "names"))
    sys.modules["__live__"] = live
    return ns


def _target(ns: dict[str, Any], req: dict[str, Any], filename: str,
            stack: contextlib.ExitStack) -> Any:  # fmt: skip
    """The callable to compile, made from the executed source as ``req["kind"]`` says
    (``compiler.live.target.LiveTarget``)."""
    import torch

    kind, name = req.get("kind") or "source", req.get("target")
    if name is None:
        defined = [k for k, v in ns.items() if getattr(getattr(v, "__code__", None),
                   "co_filename", None) == filename or (isinstance(v, type)
                   and getattr(v, "__module__", "") == "__live__")]  # fmt: skip
        if len(defined) != 1:
            found = ", ".join(defined) or "none"
            msg = (f"the source must define one function or nn.Module class to compile (found: "
                   f"{found}); name it with target=NAME.")  # fmt: skip
            raise LookupError(msg)
        name = defined[0]
    if name not in ns or (kind != "source" and getattr(ns[name], "__module__", "") != "__live__"
                          and getattr(getattr(ns[name], "__code__", None), "co_filename",
                                      None) != filename):  # fmt: skip
        raise LookupError(f"the source does not define {name!r}: define it, or pass target=NAME.")
    obj = ns[name]
    fixed = _state(req.get("fixed"), "fixed")
    if kind == "instance":
        # the notebook's module, as an instance of the edited class: same submodules,
        # weights and buffers (shared, not copied), and the cached original left as it was
        root = fixed["root"]
        if not (isinstance(obj, type) and issubclass(obj, torch.nn.Module)):
            raise LookupError(f"{name} must stay an nn.Module class to compile the module.")
        clone = obj.__new__(obj)
        clone.__dict__.update(root.__dict__)
        return clone
    if kind == "method":
        owner = fixed["owner"]
        had = name in vars(owner)
        before = vars(owner).get(name)
        setattr(owner, name, obj)
        # put back after the compile: the next edit starts from the class as it came
        stack.callback(lambda: setattr(owner, name, before) if had else delattr(owner, name))
        return fixed["root"]
    if isinstance(obj, type) and issubclass(obj, torch.nn.Module):
        try:
            return obj()
        except TypeError as exc:
            msg = (f"{name}() needs constructor arguments ({exc}): build it in the notebook "
                   f"and pass the instance, explorer.live({name}(...), x).")  # fmt: skip
            raise LookupError(msg) from exc
    return obj


_FILE = "<live>"  # the edited source's filename, as the requests name it
LINE_REPORT = "live worker: stopped at line "


def _report_line(_signum: int, frame: Any) -> None:
    """Where the compile is in the edited source: the innermost frame running it, or the
    line Dynamo is tracing (a hang while tracing runs none of the user's frames)."""
    from compiler import _compat

    while frame is not None:
        line = frame.f_lineno if frame.f_code.co_filename == _FILE else None
        line = line or _compat.traced_line(frame, _FILE)
        if line:
            print(f"{LINE_REPORT}{line}", file=sys.stderr, flush=True)
            return
        frame = frame.f_back


def compile_request(req: dict[str, Any]) -> dict[str, Any]:
    """Run one request: exec the source, compile its target on the inputs, capture it."""
    import compiler

    global _FILE
    source, filename = req["source"], req["filename"]
    _FILE = filename
    lines = [line + "\n" for line in source.split("\n")]
    linecache.cache[filename] = (len(source), None, lines, filename)
    try:
        code = compile(source, filename, "exec")
    except SyntaxError as exc:
        return _error("syntax", f"SyntaxError: {exc.msg}", exc.lineno)
    with contextlib.ExitStack() as stack:
        try:
            ns = _namespace(req)
        except Exception as exc:
            msg = ("the notebook's state could not be loaded in the worker: "
                   f"{type(exc).__name__}: {exc}")  # fmt: skip
            return _error("state", msg)
        try:
            exec(code, ns)
            target = _target(ns, req, filename, stack)
        except LookupError as exc:
            return _error("target", str(exc))
        except Exception as exc:
            msg = f"running the source raised {type(exc).__name__}: {exc}"
            return _error("exception", msg, _line_in(exc.__traceback__, filename))
        inputs = pickle.loads(req["inputs"])
        started = time.perf_counter()
        try:
            exploration = compiler.explore(target, *inputs, **req.get("options", {}))
        except compiler.ExploreError as exc:
            return _compile_error(exc, filename)
        seconds = time.perf_counter() - started
    # the plain form: the kernel reads it at once on this machine, and the compact
    # form's string table and compression only add time to every edit
    return {"ok": True, "json": exploration.to_json(compact=False), "seconds": seconds}


def _compile_error(exc: Any, filename: str) -> dict[str, Any]:
    line = None
    for gb in reversed(exc.exploration.graph_breaks if exc.exploration else ()):
        if gb.location is not None and gb.location.filename == filename:
            line = gb.location.line
            break
    cause = exc.__cause__ or exc
    line = line or _line_in(cause.__traceback__, filename) or _line_in_text(cause, filename)
    kind = {"CompileError": "compile", "InputError": "exception",
            "OptionError": "option"}.get(type(exc).__name__, "compile")  # fmt: skip
    return _error(kind, str(exc), line)


def _warm_up(hello: dict[str, Any]) -> None:
    import torch

    import compiler

    backend = hello.get("backend") or "inductor"
    compiler.explore(lambda x: (x.relu() + 1).sum(), torch.ones(4), backend=backend)


def main() -> None:
    """Serve requests until stdin closes."""
    # the edited source's line on SIGUSR1, which the engine sends to a compile past its
    # timeout (``serve`` adds the stack to it, and writes the stack on a crash)
    signal.signal(signal.SIGUSR1, _report_line)
    serve(compile_request, _warm_up, "live compile worker")


if __name__ == "__main__":
    main()
