"""The soak: every program of the project's corpora, run plainly and under
``compiler.explore(..., measure=True)``, each in fresh processes, and compared.

Programs (builders reused from where they live, nothing copied):

- ``team:*``: the advisor's corpus, ``tests/advisor_corpus`` (each case's ``run()``);
- ``public:*``: the public graph-break corpus models, ``benchmarks/advisor_corpus_models.py``
  in the corpus's mode, ``backend="eager"`` as the corpus compiled them;
- ``models:*``: the real-model programs, ``benchmarks/advisor_model_programs.py``;
- ``programs:*``: the seed programs of the tests, ``tests/programs.py``;
- ``scripts:*``: the programs of the GPU recording scripts, ``scripts/record_*_gpu.py``;
- ``decode:*``: decode loops (``generate()`` over a compiled forward, a greedy loop);
- ``optimizer:*``: a compiled ``opt.step()`` under ``LambdaLR`` with a float lr, 12 steps;
- ``notebook:*``: the notebooks' code cells, run in order in one namespace as a kernel would
  (magic lines and ``%%`` cells left out, ``explorer`` replaced by a stand-in that does
  nothing: views need a browser); a cell's exception is recorded and the next cell runs.

Each program runs twice, in a fresh process each, from the same seeds: plain (its
``compiler.explore`` calls replaced by what a user would run without the explorer:
``torch.compile(target, ...)(*inputs)`` or ``target(*inputs)``), then explored (the same
calls with ``measure=True``; ``try_fixes`` is left out: it calls the target again by design).
Per program:

- new exceptions: the explored run raised where the plain run did not, or raised another
  type (an explorer's documented ``CompileError`` whose cause has the plain run's type
  counts as the same);
- state differences after the run: parameters, buffers, gradients, optimizer state and
  ``param_groups``, LR schedulers' ``state_dict()``, other tensors the target reaches, and
  the Python, torch and CUDA RNG states. Compared with ``torch.equal``; what is not equal
  but ``allclose`` (rtol 1e-4, atol 1e-5) is counted apart as "close" (kernels differ in
  summation order: capture compiles with caches off and, measuring, with kernel profiling);
- extra calls of a target that runs as it is (``wrap=False``: it calls compiled code
  itself, possibly many times): each call writes a byte to a file, a side effect nothing
  restores; a wrapped target (``wrap=True``) is called once and is not counted;
- capture time: the seconds inside the explorer's call against the plain compile and run.

Also listed: the explorer's own failures it caught (``Exploration.errors``), by stage.

    python benchmarks/soak.py --quick                  # ~5 minutes on a 2-core CPU
    python benchmarks/soak.py -o /tmp/soak             # all CPU programs (long)
    python benchmarks/soak.py --device cuda -o $OUT/soak   # the GPU set, ~8 minutes on an H200
    python benchmarks/soak.py --programs optimizer decode  # names containing a word
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import FunctionType, MethodType, ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
PLAIN_TYPES = (int, float, bool, str, type(None))
DEPTH = 5
EXPLORE_OPTIONS = ("mode", "backend", "dynamic", "fullgraph", "options", "keep_caches", "reset",
                   "decompile", "triton_stages", "measure")  # fmt: skip
COMPILE_OPTIONS = ("mode", "backend", "dynamic", "fullgraph", "options")
RTOL, ATOL = 1e-4, 1e-5

# --- the programs -----------------------------------------------------------------------

TEAM = ("gb_data_branch", "gb_print", "gb_item", "gb_item_branch", "gb_tolist_float",
        "gb_nonzero", "gb_random", "gb_disabled", "gb_in_loop_module", "gb_file_io",
        "gb_explicit", "gb_logger", "gb_warnings", "rc_shape", "rc_dtype", "rc_python_value",
        "rc_list_value", "rc_global", "rc_limit", "dyn_specialised", "cache_miss",
        "cache_bypass", "no_kernels", "unrolled_trace", "clean_pointwise", "clean_mlp",
        "clean_dynamic", "clean_where", "clean_training", "clean_train_eval")  # fmt: skip
MODEL_PROGRAMS = ("gpt2_train_step", "gpt2_train_compiled_model", "gpt2_seq_lengths",
                  "gpt2_train_seq_lengths", "gpt2_checkpointed_train", "llama_inference",
                  "llama_train_compiled_model", "bert_inference", "bert_mlm_train_compiled_model",
                  "bert_autocast_inference", "t5_inference", "vit_inference", "resnet_train_step",
                  "resnet_eval_then_train")  # fmt: skip
SEED_PROGRAMS = ("pointwise", "data_dependent", "with_print", "specialises_on_size",
                 "nested_after_break", "closure_after_break", "Printer", "PrintLoop",
                 "FeaturePyramid", "shape_loop", "mlp_training_step", "mlp_training_step_inductor",
                 "gpt2_training_step")  # fmt: skip
SCRIPTS = ("i33_item_list_step", "capstone_gpt2", "capstone_mlp", "advisor_models_gpt2_train_step",
           "advisor_models_resnet18_nograd_ro", "breaks_mixtral", "breaks_adamw")  # fmt: skip
DECODE = ("i33_generate_compiled_forward", "gpt2_greedy_loop", "gpt2_generate_step")
OPTIMIZER = ("i33_lr_scheduler_step",)
NOTEBOOKS = ("tour", "2_graph_breaks_guards_recompiles", "3_inside_inductor",
             "4_compile_and_compare", "5_training", "6_serving_and_export", "7_compiler_api",
             "8_kernel_lab", "9_capstone_real_model", "10_debug_your_model")  # fmt: skip
CUDA_ONLY = {"scripts:breaks_mixtral", "scripts:breaks_adamw",
             "scripts:advisor_models_resnet18_nograd_ro"}  # fmt: skip

# a subset that finishes in about 5 minutes on a 2-core CPU, one of each kind
QUICK = ("team:gb_data_branch", "team:rc_shape", "team:clean_training",
         "programs:mlp_training_step", "models:gpt2_train_compiled_model",
         "decode:gpt2_greedy_loop", "optimizer:i33_lr_scheduler_step")  # fmt: skip
# on an H200 within ~8 minutes: every program that is about the GPU, the decode loops, the
# optimizer step, and a few of each corpus (their graph breaks do not depend on the device)
CUDA = ("optimizer:i33_lr_scheduler_step", "decode:i33_generate_compiled_forward",
        "decode:gpt2_greedy_loop", "scripts:i33_item_list_step", "scripts:capstone_gpt2",
        "scripts:capstone_mlp", "scripts:advisor_models_gpt2_train_step",
        "scripts:advisor_models_resnet18_nograd_ro", "scripts:breaks_mixtral",
        "scripts:breaks_adamw", "programs:mlp_training_step_inductor",
        "programs:gpt2_training_step", "programs:FeaturePyramid",
        "team:gb_data_branch", "team:rc_shape", "team:clean_training", "team:clean_train_eval",
        "team:gb_in_loop_module", "models:gpt2_train_compiled_model", "models:bert_inference",
        "public:GPT2Model", "public:BertModel")  # fmt: skip


def _public_names() -> list[str]:
    labels = json.loads((HERE / "data" / "oss_graph_break_corpus_labels.json").read_text())
    return list(labels["models"])


def all_programs() -> list[str]:
    """Every program's name, ``corpus:name``."""
    return [
        *(f"team:{n}" for n in TEAM),
        *(f"public:{n}" for n in _public_names()),
        *(f"models:{n}" for n in MODEL_PROGRAMS),
        *(f"programs:{n}" for n in SEED_PROGRAMS),
        *(f"scripts:{n}" for n in SCRIPTS),
        *(f"decode:{n}" for n in DECODE),
        *(f"optimizer:{n}" for n in OPTIMIZER),
        *(f"notebook:{n}" for n in NOTEBOOKS),
    ]


def _script(name: str) -> ModuleType:
    path = ROOT / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"soak_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def driver(program: str, device: str) -> Callable[[], Any]:
    """A zero-argument callable that runs ``program`` through ``compiler.explore`` calls."""
    import torch

    import compiler

    corpus, name = program.split(":", 1)
    if corpus == "team":
        sys.path.insert(0, str(ROOT / "tests"))
        return importlib.import_module(f"advisor_corpus.{name}").run  # type: ignore[no-any-return]
    if corpus == "public":
        from advisor_corpus_models import available, build

        why = available(name)
        if why:
            raise Skip(why)
        labels = json.loads((HERE / "data" / "oss_graph_break_corpus_labels.json").read_text())
        with torch.device(device):
            m = build(name, labels["models"][name]["mode"])

        def public() -> Any:
            with torch.set_grad_enabled(m.grad):
                return compiler.explore(m.target, *m.inputs, backend="eager")

        return public
    if corpus == "models" or (corpus == "decode" and name.startswith("gpt2_")):
        import advisor_model_programs

        with torch.device(device):
            b = getattr(advisor_model_programs, name)()
        return lambda: compiler.explore(b.target, *b.inputs, wrap=b.wrap, **b.compile_kwargs)
    if corpus == "programs":
        return _seed_program(name, device)
    if corpus == "notebook":
        return functools.partial(_notebook, name)
    if corpus in ("decode", "optimizer") or name.startswith("i33_"):
        return _script("record_i33_advisor_gpu").PROGRAMS[name]  # type: ignore[no-any-return]
    if name.startswith("capstone_"):
        step = _script("record_capstone_gpu").training_step(name.split("_")[1], None, device)
        return lambda: compiler.explore(step, wrap=False)
    if name.startswith("advisor_models_"):
        target, args, kw = _script("record_advisor_models_gpu").JOBS[name[15:]]()
        return lambda: compiler.explore(target, *args, **kw)
    if name.startswith("breaks_"):
        return getattr(_script("record_breaks_gpu"), name[7:])  # type: ignore[no-any-return]
    raise SystemExit(f"unknown program {program}")


def _seed_program(name: str, device: str) -> Callable[[], Any]:
    import torch

    import compiler

    sys.path.insert(0, str(ROOT / "tests"))
    import programs

    cpu_backend = "aot_eager" if device == "cpu" else "inductor"
    with torch.device(device):
        if name.startswith("mlp_training_step"):
            step = programs.mlp_training_step("inductor" if "inductor" in name else "aot_eager")
            return lambda: compiler.explore(step, wrap=False)
        if name == "gpt2_training_step":
            step, ids = programs.gpt2_training_step(2)
            return lambda: compiler.explore(step, ids, backend=cpu_backend)
        if name == "shape_loop":
            make = functools.partial(torch.compile, backend=cpu_backend)
            return lambda: compiler.explore(programs.shape_loop, make, wrap=False)
        if name in ("Printer", "PrintLoop"):
            module, x = getattr(programs, name)(), torch.randn(4, 8)
        elif name == "FeaturePyramid":
            module, x = programs.FeaturePyramid(), torch.randn(1, 3, 16, 16)
        else:
            module, x = getattr(programs, name), torch.randn(4, 3)
    return lambda: compiler.explore(module, x, backend=cpu_backend)


class _Anything:
    """Stands in for the ``explorer`` package in a notebook: every use is a no-op."""

    def __getattr__(self, name: str) -> _Anything:
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> _Anything:
        return self

    def __getitem__(self, key: Any) -> _Anything:
        return self

    def __iter__(self) -> Any:
        return iter(())


def _notebook(name: str) -> list[str]:
    """Run the notebook's code cells; returns the cells that raised, with the type."""
    import linecache

    notebook = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())
    cells = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    os.chdir(ROOT / "notebooks")  # cells read recordings/... from here
    sys.modules["explorer"] = _Anything()  # type: ignore[assignment]
    namespace: dict[str, Any] = {"__name__": "__main__"}
    failed = []
    for i, source in enumerate(cells):
        if source.lstrip().startswith("%%"):
            continue
        lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
        text = "\n".join(lines) + "\n"
        filename = f"<{name} cell {i}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        try:
            exec(compile(text, filename, "exec"), namespace)
        except Exception as e:
            message = str(e).splitlines()[0][:120] if str(e) else ""
            failed.append(f"cell {i}: {type(e).__name__}: {message}")
    return failed


class Skip(Exception):
    """The program cannot be built here (a library missing): not a failure."""


# --- one run, in its own process ---------------------------------------------------------


class Shim:
    """Stands in for ``compiler.explore``: plain, or the explorer with ``measure=True``."""

    def __init__(self, mode: str, explore: Callable[..., Any], count_path: str) -> None:
        self.mode, self.explore, self.count_path = mode, explore, count_path
        self.seconds = 0.0
        self.roots: list[Any] = []
        self.wrapped: list[bool] = []
        self.caught: list[str] = []
        # explores whose run called each compiled frame once: the explorer's rule calls
        # such a one-call target again on CUDA, by design, and says so in its notes
        self.called_again: list[bool] = []

    def __call__(self, target: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        import torch

        from compiler import _compat
        from compiler.capture.explore import _calls_compiled_code

        wrap = kw.pop("wrap", None)
        options = {k: kw.pop(k) for k in EXPLORE_OPTIONS if k in kw}
        if wrap is None:  # the explorer's own default
            wrap = not (_compat.is_compiled(target) or _calls_compiled_code(target))
        self.roots.append((target, args, kw))
        self.wrapped.append(wrap)
        run = target if wrap else self._counted(target)
        start = time.perf_counter()
        try:
            if self.mode == "explore":
                exp = self.explore(run, *args, wrap=wrap, **{**options, "measure": True}, **kw)
                self.caught.extend(f"{e.stage}: {e.message.splitlines()[0][:160]}"
                                   for e in exp.errors)  # fmt: skip
                self.called_again.append(exp.call_timing is not None)
                return exp
            if wrap:
                compile_kw = {k: v for k, v in options.items() if k in COMPILE_OPTIONS}
                return torch.compile(run, **compile_kw)(*args, **kw)
            return run(*args, **kw)
        finally:
            self.seconds += time.perf_counter() - start

    def _counted(self, target: Callable[..., Any]) -> Callable[..., Any]:
        path = self.count_path

        @functools.wraps(target)
        def counted(*args: Any, **kwargs: Any) -> Any:
            with open(path, "ab") as f:  # a side effect no snapshot restores
                f.write(b".")
            return target(*args, **kwargs)

        return counted


def _seed(device: str) -> None:
    import torch

    random.seed(0)
    torch.manual_seed(0)
    try:
        import numpy

        numpy.random.seed(0)
    except ImportError:
        pass


def _state(roots: list[Any]) -> dict[str, Any]:
    """Tensors and values the programs' targets reach, by a path that names them."""
    import torch

    found: dict[str, Any] = {}
    seen: set[int] = set()
    pending: list[tuple[Any, str, int]] = [(r, f"call{i}", 0) for i, r in enumerate(roots)]
    while pending:
        obj, path, depth = pending.pop(0)
        if id(obj) in seen or depth > DEPTH or isinstance(obj, (*PLAIN_TYPES, ModuleType, type)):
            continue
        seen.add(id(obj))
        children: list[tuple[Any, str]] = []
        if isinstance(obj, torch.Tensor):
            found[path] = obj.detach().clone()
        elif isinstance(obj, torch.nn.Module):
            for k, t in (*obj.named_parameters(), *obj.named_buffers()):
                found[f"{path}.{k}"] = t.detach().clone()
                seen.add(id(t))
            for k, p in obj.named_parameters():
                if p.grad is not None:
                    found[f"{path}.{k}.grad"] = p.grad.detach().clone()
            for sub_name, sub in obj.named_modules():
                for k, v in vars(sub).items():
                    if isinstance(v, (int, float, bool)) and not k.startswith("_"):
                        found[f"{path}.{sub_name}.{k}"] = v
        elif isinstance(obj, torch.optim.Optimizer):
            sd = obj.state_dict()
            for i, st in sd["state"].items():
                for k, v in st.items():
                    found[f"{path}.state.{i}.{k}"] = v.detach().clone() if torch.is_tensor(v) else v
            for g, group in enumerate(sd["param_groups"]):
                for k, v in group.items():
                    if k != "params":
                        found[f"{path}.group{g}.{k}"] = repr(v)
            seen.update(id(p) for g in obj.param_groups for p in g["params"])
        elif isinstance(obj, torch.optim.lr_scheduler.LRScheduler):
            for k, v in obj.state_dict().items():
                found[f"{path}.{k}"] = repr(v)
        elif isinstance(obj, MethodType):
            children = [(obj.__self__, "self"), (obj.__func__, "func")]
        elif isinstance(obj, FunctionType):
            cells = [(c.cell_contents, f"cell{i}") for i, c in enumerate(obj.__closure__ or ())
                     if _full(c)]  # fmt: skip
            names = sorted(n for n in obj.__code__.co_names if n in obj.__globals__)
            children = [*cells, *((obj.__globals__[n], n) for n in names)]
            wrapped = getattr(obj, "__wrapped__", None) or getattr(
                obj, "_torchdynamo_orig_callable", None
            )
            if wrapped is not None:
                children.append((wrapped, "orig"))
        elif isinstance(obj, (list, tuple)):
            children = [(v, str(i)) for i, v in enumerate(obj)]
            found[f"{path}.len"] = len(obj)
        elif isinstance(obj, dict):
            children = [(v, str(k)) for k, v in obj.items()]
            found[f"{path}.keys"] = repr(sorted(map(str, obj)))
        elif getattr(obj, "_orig_mod", None) is not None:
            children = [(obj._orig_mod, "orig")]
        elif isinstance(getattr(obj, "__dict__", None), dict) and not callable(
            getattr(obj, "__next__", None)
        ):
            children = list((v, k) for k, v in vars(obj).items())
        pending.extend((child, f"{path}.{key}", depth + 1) for child, key in children)
    found["rng.python"] = hashlib.sha1(repr(random.getstate()).encode()).hexdigest()
    found["rng.torch"] = torch.get_rng_state()
    if torch.cuda.is_initialized():
        for i, s in enumerate(torch.cuda.get_rng_state_all()):
            found[f"rng.cuda{i}"] = s
    return found


def _full(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018
        return True
    except ValueError:
        return False


def child(program: str, mode: str, device: str, out: Path) -> None:
    """Run ``program`` once (``mode``: plain or explore) and save what it left."""
    # scripts/ too: the recording scripts import their shared module (gpu_recording)
    sys.path[:0] = [str(ROOT), str(HERE), str(ROOT / "scripts")]
    import torch

    import compiler

    count_path = str(out.with_suffix(".calls"))
    Path(count_path).write_bytes(b"")
    shim = Shim(mode, compiler.explore, count_path)
    compiler.explore = shim  # type: ignore[assignment]
    compiler.try_fixes = lambda exp, *a, **k: exp  # type: ignore[assignment]
    _seed(device)
    result: dict[str, Any] = {"program": program, "mode": mode, "error": None, "skip": None}
    try:
        drive = driver(program, device)
        cells = drive()
        if isinstance(cells, list):
            result["cells_failed"] = cells
    except Skip as s:
        result["skip"] = str(s)
    except BaseException as e:
        cause = e.__cause__ or e.__context__
        result["error"] = {
            "type": type(e).__name__,
            "cause": type(cause).__name__ if cause is not None else None,
            "message": str(e).splitlines()[0][:300] if str(e) else "",
            "traceback": traceback.format_exc()[-4000:],
        }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()
    result["seconds"] = shim.seconds
    result["wrapped"] = shim.wrapped
    result["called_again"] = shim.called_again
    result["calls"] = len(Path(count_path).read_bytes())
    result["caught"] = shim.caught
    torch.save(_state(shim.roots), out.with_suffix(".pt"))
    out.write_text(json.dumps(result))


# --- the soak: two processes a program, then the comparison ------------------------------


def _run(program: str, mode: str, device: str, folder: Path, timeout: float) -> dict[str, Any]:
    out = folder / f"{program.replace(':', '__').replace('/', '_')}.{mode}.json"
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    # an empty Inductor cache for each run: both compile cold, neither reuses the other's
    cache = tempfile.TemporaryDirectory(prefix="soak_inductor_")
    env = dict(os.environ, PYTHONPATH=path, TORCHINDUCTOR_CACHE_DIR=cache.name)
    command = [sys.executable, __file__, "--child", program, "--mode", mode, "--device", device,
               "--out", str(out)]  # fmt: skip
    start = time.perf_counter()
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True,
                              timeout=max(timeout, 1))  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"crash": f"timed out after {timeout:.0f} s"}
    finally:
        cache.cleanup()
    if done.returncode != 0 or not out.exists():
        return {"crash": f"exit {done.returncode}: {done.stderr[-2000:]}"}
    result: dict[str, Any] = json.loads(out.read_text())
    result["process_s"] = time.perf_counter() - start
    return result


def compare(plain: dict[str, Any], explored: dict[str, Any]) -> dict[str, Any]:
    """The state the explored run left against the plain run's: keys equal, close, differing."""
    import torch

    exact, close, differ = 0, [], []
    for key in sorted(set(plain) | set(explored)):
        a, b = plain.get(key), explored.get(key)
        if torch.is_tensor(a) and torch.is_tensor(b):
            if a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b):
                exact += 1
            elif a.shape == b.shape and a.is_floating_point() and b.is_floating_point() and \
                    torch.allclose(a.float(), b.float(), rtol=RTOL, atol=ATOL, equal_nan=True):
                close.append(key)
            else:
                differ.append(key)
        elif a == b and (key in plain) == (key in explored):
            exact += 1
        else:
            differ.append(key)
    return {"exact": exact, "close": close, "differ": differ}


def _cell_key(failure: str) -> str:
    return ": ".join(failure.split(": ")[:2])  # "cell 3: TypeError", without the message


def _same_error(plain: dict[str, Any] | None, explored: dict[str, Any] | None) -> bool:
    if explored is None:
        return True
    if plain is None:
        return False
    return plain["type"] in (explored["type"], explored.get("cause"))


def one_program(program: str, device: str, folder: Path, timeout: float,
                deadline: float = float("inf")) -> dict[str, Any]:  # fmt: skip
    """Run ``program`` plainly, then explored, each in a fresh process; compare them.
    Neither process runs past ``deadline`` (``time.perf_counter()``)."""
    import torch

    def within() -> float:
        return min(timeout, deadline - time.perf_counter())

    plain = _run(program, "plain", device, folder, within())
    if plain.get("skip") or plain.get("crash"):
        return {"program": program, "skip": plain.get("skip") or f"plain run: {plain['crash']}"}
    explored = _run(program, "explore", device, folder, within())
    row: dict[str, Any] = {"program": program, "plain": plain, "explored": explored}
    if str(explored.get("crash")).startswith("timed out"):
        return {"program": program, "skip": f"explored run {explored['crash']} (the plain run "
                f"took {plain['seconds']:.0f} s)"}  # fmt: skip
    if explored.get("crash"):
        row["new_exceptions"] = 1
        row["explore_error"] = {"type": "crash", "traceback": explored["crash"]}
        return row
    stem = folder / f"{program.replace(':', '__').replace('/', '_')}"
    state = compare(torch.load(f"{stem}.plain.pt", weights_only=False),
                    torch.load(f"{stem}.explore.pt", weights_only=False))  # fmt: skip
    new = not _same_error(plain["error"], explored["error"])
    plain_cells = {_cell_key(c) for c in plain.get("cells_failed", [])}
    cells = [c for c in explored.get("cells_failed", []) if _cell_key(c) not in plain_cells]
    # a multi-call target: run as it is, and not a one-call target the rule times again
    one_call = explored.get("called_again") or []
    multi = not all(explored["wrapped"]) and not any(one_call)
    row.update(
        new_exceptions=int(new or bool(cells)),
        explore_error=explored["error"] if new else None,
        cells_new=cells,
        state=state,
        # a notebook's cells that read an Exploration fail in the plain run, and the cells
        # that ran differ: its state is not compared then
        state_differences=None if plain.get("cells_failed") else len(state["differ"]),
        state_close=len(state["close"]),
        extra_calls=explored["calls"] - plain["calls"] if multi else None,
        one_call_extra=explored["calls"] - plain["calls"] if any(one_call) else None,
        plain_s=plain["seconds"],
        explore_s=explored["seconds"],
        ratio=explored["seconds"] / plain["seconds"] if plain["seconds"] else None,
        caught=explored["caught"],
        plain_error=plain["error"]["type"] if plain["error"] else None,
    )
    return row


def soak(
    programs: list[str], device: str, folder: Path, timeout: float, jobs: int, budget: float
) -> list[dict[str, Any]]:
    """Every program, ``jobs`` at a time, all ended within ``budget`` seconds (a program
    still running then is stopped and reported as timed out; one not started is skipped)."""
    from concurrent.futures import ThreadPoolExecutor

    deadline = time.perf_counter() + budget

    def run(program: str) -> dict[str, Any]:
        if deadline - time.perf_counter() < 30:
            return {"program": program, "skip": f"not started: the {budget:.0f} s budget was spent"}
        row = one_program(program, device, folder, timeout, deadline)
        print(_line(row), flush=True)
        return row

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(run, programs))


def _line(row: dict[str, Any]) -> str:
    if "skip" in row:
        return f"| {row['program']} | skipped: {row['skip'][:80]} | | | | | |"
    if "state" not in row:
        return f"| {row['program']} | **1** (explored run crashed) | - | - | - | - | |"
    extra = "-" if row["extra_calls"] is None else str(row["extra_calls"])
    if row.get("one_call_extra") is not None:  # timed again by the rule, state restored
        extra = f"- (one-call target: timed by {row['one_call_extra']} calls)"
    ratio = f"{row['ratio']:.2f}x" if row["ratio"] else "-"
    caught = "; ".join(sorted(set(row["caught"])))[:160] or ""
    plain_err = f" (both raise {row['plain_error']})" if row["plain_error"] else ""
    seconds = f"{row['plain_s']:.1f} s | {row['explore_s']:.1f} s"
    state = ("n/a (cells reading an Exploration fail plainly)" if row["state_differences"] is None
             else f"{row['state_differences']} ({row['state_close']} close)")  # fmt: skip
    return (f"| {row['program']}{plain_err} | {row['new_exceptions']} | {state} | {extra} | "
            f"{seconds} | {ratio} | {caught} |")  # fmt: skip


HEADER = ("| program | new exceptions | state differences | extra calls | plain | explored | "
          "ratio | caught by the explorer |\n|---|---|---|---|---|---|---|---|")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--programs", nargs="*", help="only programs whose name contains one")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--quick", action="store_true", help="a small subset (~5 min on a CPU)")
    parser.add_argument("-o", "--out", type=Path, help="folder for soak.md, soak.json, runs")
    parser.add_argument("--timeout", type=float, help="seconds per process (600; cuda 240)")
    parser.add_argument("--jobs", type=int, help="programs at a time (1; cuda 4)")
    parser.add_argument("--budget", type=float, help="seconds for the whole soak (none; cuda "
                        "420: done within ~8 minutes with the imports and the tables)")  # fmt: skip
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=("plain", "explore"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.mode, args.device, Path(args.out))
        return
    if args.quick:
        names = list(QUICK)
    elif args.device == "cuda":
        names = list(CUDA)
    else:
        names = [p for p in all_programs() if p not in CUDA_ONLY]
    if args.programs:
        pool = all_programs() if not args.quick else names
        names = [p for p in pool if any(word in p for word in args.programs)]
    folder = args.out or Path(tempfile.mkdtemp(prefix="soak_"))
    folder.mkdir(parents=True, exist_ok=True)
    import torch

    print(f"torch {torch.__version__}, Python {sys.version.split()[0]}, device {args.device}, "
          f"{len(names)} programs; runs in {folder}\n\n{HEADER}", flush=True)  # fmt: skip
    start = time.perf_counter()
    cuda = args.device == "cuda"
    timeout = args.timeout or (240 if cuda else 600)
    jobs = args.jobs or (4 if cuda else 1)
    budget = args.budget or (420 if cuda else float("inf"))
    rows = soak(names, args.device, folder, timeout, jobs, budget)
    ran = [r for r in rows if "skip" not in r]
    totals = {
        "programs": len(rows),
        "ran": len(ran),
        "new_exceptions": sum(r["new_exceptions"] for r in ran),
        "state_differences": sum(r.get("state_differences") or 0 for r in ran),
        "extra_calls": sum(r.get("extra_calls") or 0 for r in ran),
        "seconds": time.perf_counter() - start,
    }
    print(f"\n{totals['ran']} of {totals['programs']} programs ran; new exceptions "
          f"{totals['new_exceptions']}, state differences {totals['state_differences']}, "
          f"extra calls {totals['extra_calls']} (goal: 0 each); {totals['seconds']:.0f} s")
    table = "\n".join([HEADER, *map(_line, rows)])
    (folder / "soak.md").write_text(f"torch {torch.__version__}, device {args.device}\n\n{table}\n")
    (folder / "soak.json").write_text(json.dumps(
        {"torch": torch.__version__, "device": args.device, "totals": totals, "rows": rows},
        indent=1, default=str,
    ))  # fmt: skip
    for r in ran:
        err = r.get("explore_error")
        for cell in r.get("cells_new") or ():
            print(f"\n## {r['program']}: new exception in {cell}")
        if err:
            print(f"\n## {r['program']}: new exception\n{err.get('traceback', '')[-3000:]}")


if __name__ == "__main__":
    main()
