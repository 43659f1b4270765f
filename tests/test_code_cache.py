"""``compiler/_compat/code_cache.py`` on the installed torch (issue 42, part 4): each function
on its own, and a canary naming every private torch name ``_compat/`` reads, which fails on
a torch that lacks one. Fast (eager backends): part of the 2.14.1 smoke set.

tests/conftest.py resets Dynamo around every test.
"""

from __future__ import annotations

import ast
import gc
import pickle
from pathlib import Path

import pytest
import torch

import compiler
from compiler import _compat
from compiler._compat import code_cache

COMPAT = Path(compiler.__file__).parent / "_compat"


class Counting:
    """A backend that runs the graph eagerly and counts the graphs it was handed."""

    def __init__(self) -> None:
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return gm.forward


def cosine(x):
    return x.cos() + 1


def tripled(x):
    return x * 3


def entries(code):
    from torch._C._dynamo.eval_frame import _debug_get_cache_entry_list

    return _debug_get_cache_entry_list(code)


# --- the canary ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "name", "since"),
    code_cache.PRIVATE_NAMES,
    ids=[f"{m}.{n}" for m, n, _ in code_cache.PRIVATE_NAMES],
)
def test_every_private_name_code_cache_reads_is_on_this_torch(module, name, since):
    if since is not None and _compat.torch_release() < since:
        pytest.skip(f"{module}.{name} is read from torch {since} on")
    assert hasattr(code_cache._module(module), name), (
        f"torch {torch.__version__} lacks {module}.{name}: capture's isolation needs a new "
        "way to do what it did (compiler/_compat/code_cache.py), and says so in its notes"
    )


def _private_uses(path: Path) -> set[tuple[str, str]]:
    """(module, name) of each private torch name a _compat module reads: ``from torch._x
    import y``, ``torch._x.y`` attribute chains and ``_private("torch._x", "y")``."""
    found: set[tuple[str, str]] = set()
    tree = ast.parse(path.read_text())
    # only whole chains: ``torch._dynamo`` inside ``torch._dynamo.lookup_backend`` is no use
    nested = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):
        if id(node) in nested:
            continue
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("torch"):
            if "._" in node.module or any(a.name.startswith("_") for a in node.names):
                found.update((node.module, a.name) for a in node.names)
        elif isinstance(node, ast.Attribute):
            chain, inner = [node.attr], node.value
            while isinstance(inner, ast.Attribute):
                chain.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id == "torch" and len(chain) > 0:
                dotted = ["torch", *reversed(chain)]
                if any(part.startswith("_") and not part.startswith("__") for part in dotted):
                    found.add((".".join(dotted[:-1]), dotted[-1]))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "_private"
            and all(isinstance(a, ast.Constant) for a in node.args[:2])
        ):
            found.add((node.args[0].value, node.args[1].value))
    return found


def _resolves(module: str, name: str) -> bool:
    import importlib

    parts = module.split(".")
    for i in range(len(parts), 0, -1):  # the longest importable prefix, then attributes
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        path = ".".join(parts[:i])
        for attr in [*parts[i:], name]:
            path = f"{path}.{attr}"
            if not hasattr(obj, attr):
                try:  # a submodule not imported yet
                    importlib.import_module(path)
                except ImportError:
                    return False
            obj = getattr(obj, attr)
        return True
    return False


def test_code_cache_reads_torch_only_through_the_names_it_lists():
    listed = {(m, n) for m, n, _ in code_cache.PRIVATE_NAMES}
    used = _private_uses(COMPAT / "code_cache.py")
    unlisted = {u for u in used if u not in listed and u[0] != "torch._dynamo.config"}
    assert not unlisted, f"add these to code_cache.PRIVATE_NAMES: {sorted(unlisted)}"
    source = (COMPAT / "code_cache.py").read_text()
    assert "from torch._" not in source and "import torch._" not in source  # all guarded


def test_every_private_torch_name_compat_reads_is_on_this_torch():
    # the rest of _compat/ guards most of its reads (getattr with a default, hasattr): a
    # name missing here is either guarded there, or the function that reads it breaks
    optional = {
        ("torch._inductor", "list_options"),
        ("torch._inductor", "list_mode_options"),
        ("torch._dynamo.exc", "get_gbid_documentation_link"),
    }
    # names PRIVATE_NAMES says a later torch introduced (recompile regions: 2.13) are
    # looked for only from that torch on; code_cache runs without them before
    installed = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    later = {(m, n) for m, n, since in code_cache.PRIVATE_NAMES if since and since > installed}
    missing = sorted(
        f"{m}.{n}"
        for path in sorted(COMPAT.glob("*.py"))
        for m, n in _private_uses(path)
        if (m, n) not in optional | later and not _resolves(m, n)
    )
    assert not missing, f"torch {torch.__version__} lacks {missing} (read in compiler/_compat/)"


def test_lacking_names_no_needed_name_on_this_torch_and_a_missing_one_switches_nothing(
    monkeypatch,
):
    assert code_cache.lacking() == []
    assert code_cache._module("torch._dynamo.no_such_module") is None
    gone = ("torch._dynamo.convert_frame", "a_name_a_later_torch_dropped", None)
    monkeypatch.setattr(code_cache, "PRIVATE_NAMES", (*code_cache.PRIVATE_NAMES, gone))
    assert code_cache.lacking() == ["torch._dynamo.convert_frame.a_name_a_later_torch_dropped"]
    mine = torch.compile(cosine, backend="eager")
    with code_cache.own_compiles() as own:
        mine(torch.randn(4))
    assert not own.active and own.lacking and own.dropped == 0
    # a capture on such a torch says so, records what the run compiled, resets nothing
    backend = Counting()
    kept = torch.compile(tripled, backend=backend)
    kept(torch.randn(4))
    exp = compiler.explore(lambda: mine(torch.randn(8)), wrap=False)
    assert any("lacks torch._dynamo.convert_frame.a_name" in n for n in exp.notes), exp.notes
    assert exp.compiles
    kept(torch.randn(4))
    assert backend.graphs == 1  # nothing was reset


# --- each function ------------------------------------------------------------------------


def test_fresh_backend_equals_no_other_backend_and_keeps_the_users_compiler():
    mine = code_cache.fresh_backend("inductor", None, None, None)
    theirs = torch._TorchCompileInductorWrapper(None, None, None)
    # Dynamo asks the capture's backend: it equals only itself (torch's compares settings)
    assert mine.__eq__(theirs) is NotImplemented and mine == mine
    assert isinstance(mine, torch._TorchCompileInductorWrapper) and mine.__name__ == "inductor"
    backend = Counting()
    fresh = code_cache.fresh_backend(backend, None, None, None)
    assert fresh != backend and fresh.func is backend
    assert code_cache.fresh_backend("eager", None, None, None) != code_cache.fresh_backend(
        "eager", None, None, None
    )


def test_compile_isolation_asks_for_isolated_recompiles_where_torch_compile_takes_it():
    import inspect

    takes = "isolate_recompiles" in inspect.signature(torch.compile).parameters
    assert code_cache.compile_isolation() == ({"isolate_recompiles": True} if takes else {})


def test_drop_entries_drops_only_the_matching_entries_and_the_next_call_compiles():
    backend = Counting()
    f = torch.compile(cosine, backend=backend)
    f(torch.randn(4))
    assert code_cache._drop_entries([cosine.__code__], lambda b: False) == 0
    assert code_cache._drop_entries([cosine.__code__], lambda b: True) == 1
    f(torch.randn(4))
    assert backend.graphs == 2


def test_evict_backend_drops_every_entry_of_one_backend():
    backend = Counting()
    f = torch.compile(cosine, backend=backend)
    f(torch.randn(4))
    assert code_cache.evict_backend(None) == 0
    assert code_cache.evict_backend(backend) == 1
    f(torch.randn(4))
    assert backend.graphs == 2


def test_evict_compiled_drops_a_compiled_functions_entries_and_names_it():
    backend = Counting()
    f = torch.compile(cosine, backend=backend)
    f(torch.randn(4))
    assert code_cache.evict_compiled(f) == ("cosine", 1)
    assert code_cache.evict_compiled(cosine) == ("", 0)  # not a torch.compile result


def test_frame_compile_counts_counts_the_compiles_of_each_frame():
    f = torch.compile(cosine, backend="eager", dynamic=False)
    before = code_cache.frame_compile_counts()
    f(torch.randn(4))
    f(torch.randn(5))
    after = code_cache.frame_compile_counts()
    assert sorted(v - before.get(k, 0) for k, v in after.items() if v != before.get(k)) == [2]


def test_owns_compiles_on_this_torch():
    assert code_cache.owns_compiles()


def test_innermost_follows_the_orig_backend_chain():
    class Wrapped:
        def __init__(self, inner):
            self._torchdynamo_orig_backend = inner

    backend = Counting()
    assert code_cache._innermost(Wrapped(Wrapped(backend))) is backend
    assert code_cache._innermost(backend) is backend


def test_own_compiles_compiles_beside_the_users_entries_and_drops_its_own():
    backend = Counting()
    mine = torch.compile(cosine, backend=backend)
    mine(torch.randn(4))
    with code_cache.own_compiles() as own:
        mine(torch.randn(4))
    assert own.active and own.dropped == 1 and not own.failed
    assert backend.graphs == 2  # the block compiled with its own backend
    mine(torch.randn(4))
    assert backend.graphs == 2  # and the user's entry still serves
    assert len([e for e in entries(cosine.__code__) if "explorer" not in str(e.guard_manager)])


def test_marks_go_back_even_when_dropping_the_captures_entries_fails(monkeypatch):
    torch.compile(tripled, backend="eager")(3)  # no tensor: skipped, marked to run eagerly
    assert code_cache._looks_marked(tripled.__code__)

    def fails(codes, matches):
        raise RuntimeError("planted")

    monkeypatch.setattr(code_cache, "_drop_entries", fails)
    with code_cache.own_compiles([tripled.__code__]) as own:
        assert own.unmarked == ["tripled"]
    assert own.failed and "planted" in own.failed[0]
    assert tripled.__code__ in code_cache._MARKS_PUT_BACK  # the mark is back


def test_seen_shapes_are_set_aside_and_the_size_profile_is_not_written(monkeypatch):
    from torch._dynamo import convert_frame, pgo

    saved, writer = vars(pgo)["_CODE_STATE"], convert_frame.put_code_state
    shapes = code_cache._SeenShapes()
    assert vars(pgo)["_CODE_STATE"] is not saved and not vars(pgo)["_CODE_STATE"]
    assert convert_frame.put_code_state is code_cache._no_write
    assert code_cache._no_write() is None
    shapes.close()
    assert vars(pgo)["_CODE_STATE"] is saved and convert_frame.put_code_state is writer


def test_a_capture_writes_nothing_into_the_users_saved_size_profile(tmp_path, monkeypatch):
    # torch writes Dynamo's code state after each successful compile once a cache key
    # exists (a job id): the user's compiles write it, the capture's must not
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    with torch.compiler.config.patch(job_id="explorer-pgo-test"):
        mine = torch.compile(cosine, backend="eager")
        mine(torch.randn(4))
        mine(torch.randn(6))  # a size change: dynamic, as the saved profile records
        saved = list((tmp_path / "dynamo").glob("code_state_*.pkl"))
        assert len(saved) == 1, "torch wrote no size profile: the check below would pass idly"
        before = saved[0].read_bytes()
        compiler.explore(lambda: [mine(torch.randn(n)) for n in (3, 5, 7)], wrap=False)
        compiler.explore(tripled, torch.randn(9), backend="eager")
        assert saved[0].read_bytes() == before
        assert list((tmp_path / "dynamo").glob("code_state_*.pkl")) == saved
        torch.compile(tripled, backend="eager")(torch.randn(9))  # the user's own: written
        assert saved[0].read_bytes() != before
        assert any("tripled" in str(k) for k in pickle.loads(saved[0].read_bytes()))


def test_own_callback_rebuilds_torchs_callback_around_an_observer():
    from torch._dynamo import convert_frame, eval_frame

    compiled = torch.compile(cosine, backend="eager")
    ctx = next(
        c.cell_contents
        for c in compiled.__closure__
        if isinstance(c.cell_contents, eval_frame._TorchDynamoContext)
    )
    out = eval_frame._callback_from_stance(ctx.callback)
    sentinel, seen = object(), []
    own = code_cache._own_callback(out, sentinel, lambda frame, r: seen.append(frame) or r)
    assert type(own) is convert_frame.CatchErrorsWrapper and own._explorer_own
    assert code_cache._innermost(own) is sentinel

    def plain(frame, *args):
        return "result"

    other = code_cache._own_callback(plain, sentinel, lambda frame, r: seen.append(r) or r)
    assert other("frame") == "result" and seen == ["result"]
    assert other._torchdynamo_orig_backend is sentinel


def test_sentinel_is_shared_by_equal_backends_and_calls_the_users():
    known: list = []
    a, b = Counting(), Counting()
    one = code_cache._sentinel(a, known)
    assert code_cache._sentinel(a, known) is one and code_cache._sentinel(b, known) is not one
    assert one.func is a and len(known) == 2


def test_looks_marked_reads_no_entries_as_a_mark_and_remembers_marks_put_back():
    f = torch.compile(cosine, backend="eager")
    f(torch.randn(4))
    assert not code_cache._looks_marked(cosine.__code__)
    assert code_cache._looks_marked(tripled.__code__)  # no entry at all


def test_lift_marks_lifts_only_converted_codes_without_entries():
    torch.compile(tripled, backend="eager")(3)  # marked
    f = torch.compile(cosine, backend="eager")
    f(torch.randn(4))  # compiled fine: no mark
    lifted: list = []
    code_cache._lift_marks([tripled.__code__, cosine.__code__, entries.__code__], lifted)
    assert lifted == [tripled.__code__]
    backend = Counting()
    torch.compile(tripled, backend=backend)(torch.randn(4))
    assert backend.graphs == 1  # lifted: it compiles again


def test_put_marks_back_unmarks_the_blocks_marks_and_remarks_the_lifted():
    torch.compile(tripled, backend="eager")(3)
    lifted: list = []
    code_cache._lift_marks([tripled.__code__], lifted)
    undone = code_cache._put_marks_back({id(cosine.__code__): cosine.__code__}, lifted)
    assert undone == 1 and tripled.__code__ in code_cache._MARKS_PUT_BACK
    backend = Counting()
    torch.compile(tripled, backend=backend)(torch.randn(4))
    assert backend.graphs == 0  # marked again: torch runs it eagerly


def test_marks_put_back_are_held_weakly():
    namespace: dict = {}
    exec("def short_lived(x):\n    return x\n", namespace)
    code = namespace["short_lived"].__code__
    code_cache._MARKS_PUT_BACK.add(code)
    before = len(code_cache._MARKS_PUT_BACK)
    del code, namespace
    gc.collect()
    assert len(code_cache._MARKS_PUT_BACK) == before - 1


def test_strategy_builds_torchs_frame_exec_strategy():
    from torch._C._dynamo.eval_frame import _FrameAction

    skip = code_cache._strategy("SKIP")
    assert skip.cur_action == _FrameAction.SKIP and skip.recursive_action == _FrameAction.DEFAULT


class Block(torch.nn.Module):
    def forward(self, x):
        return x + 1


def test_compiled_codes_names_a_functions_and_a_modules_codes():
    assert code_cache.compiled_codes(torch.compile(cosine)) == [cosine.__code__]
    assert code_cache.compiled_codes(cosine) == [cosine.__code__]
    assert Block.forward.__code__ in code_cache.compiled_codes(torch.compile(Block()))


def test_own_compiles_reads_each_guards_source_and_still_calls_the_users_guard_hook():
    exported: list = []

    def f(batch):
        return batch["x"] * 2 if "mask" in batch else batch["x"] + 1

    compiled = torch._dynamo.optimize("eager", guard_export_fn=exported.append)(f)
    with code_cache.own_compiles() as own:
        compiled({"x": torch.ones(2)})
    assert exported  # the user's hook ran, with Dynamo's guards
    assert own.guard_paths.get("not ___dict_contains('mask', L['batch'])") == "batch"
    assert own.guard_paths.get("L['batch']['x']") == "batch['x']"
    assert not own.failed
