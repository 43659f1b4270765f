"""Turn an ``Exploration`` into the plain JSON data the front-end draws.

``build_view(exp)`` returns a dict that is self-sufficient: ``explorer.js`` needs
nothing else (no Python round trips), so the same data drives the notebook widget
and the offline HTML export. Its shape::

    {
      "version": 1,
      "title": str, "source": "live" | "trace", "target": str,
      "environment": {torch, triton, python, platform, device},
      "options": {backend, mode, dynamic, fullgraph, options, ...} | None,
      "notes": [str], "errors": [{"stage", "message"}],
      "labels": {stage id: UI label},          # the one label table, STAGE_LABELS
      "src_keys": ["file:line", ...],          # sorted; palette colour = index % 8
      "sources": [{filename, available, note, windows: [{start, lines: [Line]}]}],
      "default_selection": {compile, stage, src, node, kernel},
      "compiles": [{
        "id": "0/1", "rank": int | None, "label": str, "code_name": str,
        "status": "ok" | "graph_break" | "no_graph" | "failed", "is_resume": bool,
        "attempts": int, "markers": ["graph_break", "recompile", "failed"],
        "parent": compile id | None,          # resume -> breaking compile, N/k -> N/k-1
        "src": "file:line" | None,            # the frame's first line
        "errors": [{"stage", "message"}],
        "panes": [Pane, ...],                 # only the stages this compile has
      }],
    }

A ``Line`` is ``[[tokenclass, text], ...]`` (pygments short class names); joining the
texts gives back the original line exactly. A ``Text`` is ``{"language", "lines":
[Line], "line_src": ["file:line" | None per line]}``. Every ``Pane`` has ``id``
(unique in its compile, e.g. ``dynamo_output_graph`` or
``forward/inductor_post_grad_graph``), ``stage`` (the trace key, for the label
table), ``label``, ``group`` and ``group_label`` (Dynamo, AOTAutograd, ...),
``kind`` and ``errors``, plus by kind:

- ``code``: ``blocks: [{title, note, text: Text}]`` (bytecode, guards).
- ``graph``: ``text: Text`` (with ``line_node``), ``graph: {nodes, svg, renderer,
  renderer_note, parse_error}``; each node is ``{name, op, target, args, kwargs,
  meta: [{dtype, shape, stride, device}], module, line, group: [str], inputs: [int],
  users: [int], src, loc, code, kernels: [kernel id]}``.
- ``output_code``: ``text: Text`` (with ``line_kernel``: kernel id | None per line),
  ``kernels: [{id, name, language, first_line, last_line, call_lines,
  post_grad_nodes, source_nodes, src: [key], timing: KernelTiming fields | None,
  grid: [int] (the Triton launch grid; empty when unknown)}]``, ``path``.
- ``schedule``: ``blocks`` (before / after fusion) and ``fused: [{name, kind,
  members, buffers, extern_kernel}]``.
- ``graph_breaks``: ``items: [{summary, reason, src, location, code, hints,
  user_stack: [{src, text}], documentation}]``.
- ``recompile_reasons``: ``items: [{previous, reason, text}]``.
- ``autotuning`` (id ``autotuning``, one per compile with max-autotune records, in the
  Inductor group just before the first output code): ``ops: [{op, input_sizes: [str],
  chosen, kernel (id | None), common_config: [[key, value]], common_text (settings all
  configured candidates share), fastest_ms, slowest_ms, rows}]``; ``rows`` are the
  candidates fastest first (untimed last): ``{name, kind ("triton" | "extern" | ""),
  ms | None, ms_text (4 decimals), relative (ms / fastest), relative_text ("1.00x",
  "1.05x slower"), description, config: [[key, value]], config_text (without the
  common settings), chosen, kernel}``;
  ``kernel`` is set on the chosen row only where the output-code kernel running it is
  proven (see ``explorer/_autotuning_view.py``).
- ``kernel_timing`` (id ``kernel_timing``, one per compile, before the compile time,
  only when a kernel of the compile was measured): ``rows`` (slowest median first:
  ``{kernel (id), name, language, output (output code key), calls, median_us, min_us,
  total_us, bytes, mb, achieved_gbps, peak_gbps, peak_pct, share, note}``; ``share``
  is the kernel's part of ``total_us``, the time of all measured kernels; ``bytes`` and
  the figures from it are None, and ``note`` says so, where a shape is not static),
  ``total_us``, ``peak_gbps`` (the device's measured copy bandwidth), ``peak_line``,
  ``untimed: [kernel name]`` (extern kernels are not measured) and ``outputs``.
- ``metrics``: ``summary: [[label, value]]`` (with the CUDA-graph skip reason),
  ``phases: [{name, seconds, depth}]``, ``cache_events: [str]``, ``counters: [[name,
  int]]`` (the capture's Dynamo/Inductor counter deltas, the same in every compile).
- ``triton_lowering`` (id ``<output code key>/<kernel name>/lowered``, one per Triton
  kernel with compiled variants, right after its output code): ``kernel`` (kernel id),
  ``kernel_name``, ``source: Text`` (``Kernel.source``), ``def_line``, ``info: [[label,
  value]]`` (autotuning), ``default_variant`` (index of the chosen one) and ``variants:
  [{hash, cache_key, config, chosen, target, triton_version, shared_memory, module_file,
  line_offset, stages: [{stage, label, text: Text, source_line: [int | None], error,
  note}]}]``; ``source_line`` is the 1-based ``Kernel.source`` line per stage line
  (see ``explorer/_lowered_view.py`` for how, and for the module-file line offset).

Kernel ids are ``<output code key>/<kernel name>`` (``forward/cpp_fused_add_0``).
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from typing import Any

import compiler
from compiler import Compile

from ._autotuning_view import autotuning_pane
from ._graph_view import attach_svg, run_dot
from ._inductor_view import (
    kernel_of_post,
    kernel_timing_pane,
    metrics_pane,
    output_code_keys,
    output_panes,
)
from ._panes import STAGE_LABELS, Links, graph_pane, pane, text_data
from ._sources import sources_table

__all__ = ["STAGE_LABELS", "build_view"]

VIEW_VERSION = 1

# The one table of UI labels, keyed by stage id (the trace keys, verbatim).

_GRAPH_ORDER = (
    "dynamo_output_graph",
    "before_pre_grad_graph",
    "after_pre_grad_graph",
    "aot_joint_graph",
    "before_joint_graph",
    "after_joint_graph",
    "aot_forward_graph",
    "aot_backward_graph",
    "aot_inference_graph",
)
_FRAME_ORDER = (
    "bytecode",
    "dynamo_output_graph",
    "dynamo_cpp_guards_str",
    "dynamo_graph_break_reason",
    "recompile_reasons",
)
_RESUME = re.compile(r"^torch_dynamo_resume_in_(?P<fn>.+)_at_(?P<line>\d+)$")
_DIS_LINE = re.compile(r"^\s*(?P<line>\d+)\s+(?:-->\s+)?(?:>>\s+)?(?:\d+|L\d+:)\s+[A-Z]")
# AOT graphs share node names with the post-grad graph of the same output code.
_AOT_FOR = {
    "aot_forward_graph": "forward",
    "aot_backward_graph": "backward",
    "aot_inference_graph": "inference",
}


def build_view(exp: compiler.Exploration, *, graph_renderer: str = "auto") -> dict[str, Any]:
    """The front-end's data for ``exp``: plain JSON types only.

    Args:
        exp: a live capture or a loaded trace.
        graph_renderer: ``auto`` (Graphviz ``dot`` for graphs of up to 400 nodes when
            it is on ``PATH``, else the built-in renderer), ``dot`` (dot whenever it is
            available) or ``builtin``.

    Returns:
        The dict described at the top of this module.

    Raises:
        ValueError: for an unknown ``graph_renderer``.

    Example:
        >>> import torch, compiler
        >>> exp = compiler.explore(torch.sin, torch.randn(4), backend="eager")
        >>> view = build_view(exp, graph_renderer="builtin")
        >>> [p["id"] for p in view["compiles"][0]["panes"]][:2]
        ['bytecode', 'dynamo_output_graph']
    """
    if graph_renderer not in ("auto", "dot", "builtin"):
        msg = f"graph_renderer must be 'auto', 'dot' or 'builtin', not {graph_renderer!r}"
        raise ValueError(msg)
    links = Links(frozenset(c.filename for c in exp.compiles if c.filename))
    dot_jobs: list[tuple[dict[str, Any], str]] = []
    compiles = [_compile(c, exp, links, graph_renderer, dot_jobs) for c in exp.compiles]
    _parents(exp.compiles, compiles)
    if dot_jobs:
        results: dict[str, Any] = {}
        unique = list(dict.fromkeys(src for _, src in dot_jobs))
        with ThreadPoolExecutor(max_workers=min(4, len(unique))) as pool:
            for src, result in zip(unique, pool.map(run_dot, unique), strict=True):
                results[src] = result
        for pane, src in dot_jobs:
            attach_svg(pane, results[src])
    sources = sources_table(links.involved, links.code, links.functions, links.frame_files)
    first = compiles[0] if compiles else None
    stage = None
    if first is not None and first["panes"]:
        ids = [p["id"] for p in first["panes"]]
        stage = "dynamo_output_graph" if "dynamo_output_graph" in ids else ids[0]
    return {
        "version": VIEW_VERSION,
        "title": f"torch.compile explorer: {exp.target}"
        if exp.target
        else "torch.compile explorer",
        "source": exp.source,
        "target": exp.target,
        "environment": asdict(exp.environment),
        "options": asdict(exp.options) if exp.options is not None else None,
        "notes": list(exp.notes),
        "errors": [asdict(e) for e in exp.errors],
        "labels": dict(STAGE_LABELS),
        "src_keys": links.keys(),
        "sources": sources,
        "default_selection": {
            "compile": first["id"] if first else None,
            "stage": stage,
            "src": None,
            "node": None,
            "kernel": None,
        },
        "compiles": compiles,
    }


def _compile_key(c: Compile) -> str:
    cid = str(c.compile_id)
    return cid if c.rank is None else f"rank{c.rank}:{cid}"


def _markers(c: Compile) -> list[str]:
    out = []
    if c.graph_breaks:
        out.append("graph_break")
    if c.recompile_reasons or (c.compile_id.frame_compile_id or 0) > 0:
        out.append("recompile")
    if c.status == "failed":
        out.append("failed")
    return out


def _parents(raw: tuple[Compile, ...], compiles: list[dict[str, Any]]) -> None:
    """Resume functions hang under the compile whose graph break made them; N/k under N/k-1."""
    by_key = {(c.rank, str(c.compile_id)): i for i, c in enumerate(raw)}
    for i, c in enumerate(raw):
        parent = None
        cid = c.compile_id
        if cid.frame_compile_id and cid.compiled_autograd_id is None:
            prev = compiler.CompileId(
                frame_id=cid.frame_id, frame_compile_id=cid.frame_compile_id - 1
            )
            j = by_key.get((c.rank, str(prev)))
            parent = compiles[j]["id"] if j is not None else None
        m = _RESUME.match(c.code_name)
        if parent is None and m:
            fn, line = m["fn"], int(m["line"])
            candidates = [j for j in range(i) if raw[j].rank == c.rank and raw[j].code_name == fn]
            at_line = [
                j
                for j in candidates
                if any(
                    gb.location is not None and gb.location.line == line
                    for gb in raw[j].graph_breaks
                )
            ]
            pick = at_line or [j for j in candidates if raw[j].graph_breaks] or candidates
            parent = compiles[pick[-1]]["id"] if pick else None
        compiles[i]["parent"] = parent


def _compile(
    c: Compile, exp: compiler.Exploration, links: Links, renderer: str, dot_jobs: list[Any]
) -> dict[str, Any]:
    if c.bytecode and c.bytecode.source and not c.is_resume and c.filename and c.first_line:
        entry = (c.first_line, c.bytecode.source.rstrip("\n"))
        if entry not in links.functions.setdefault(c.filename, []):
            links.functions[c.filename].append(entry)
    frame_src = links.add_line(c.filename, c.first_line)
    oc_keys = output_code_keys(c.output_code)
    post_kernels = {
        key: kernel_of_post(oc, key) for key, oc in zip(oc_keys, c.output_code, strict=True)
    }
    panes: list[dict[str, Any]] = []
    extra_graphs = sorted(set(c.graphs) - set(_GRAPH_ORDER))
    for stage in (*_FRAME_ORDER, *_GRAPH_ORDER[1:], *extra_graphs):
        if stage in c.graphs:
            kernels = _graph_kernel_links(c, stage, oc_keys, post_kernels)
            panes.append(
                graph_pane(stage, stage, c.graphs[stage], links, renderer, dot_jobs, kernels)
            )
            continue
        frame = _frame_pane(c, stage, links)
        if frame is not None:
            panes.append(frame)
    for key, oc in zip(oc_keys, c.output_code, strict=True):
        panes.extend(output_panes(key, oc, links, renderer, dot_jobs, post_kernels[key]))
    autotuning = autotuning_pane(c, oc_keys)
    if autotuning is not None:
        # a compile-time choice that made the output code: just before the first one
        at = next(
            (i for i, p in enumerate(panes) if p["stage"] == "inductor_output_code"), len(panes)
        )
        panes.insert(at, autotuning)
    timing = kernel_timing_pane(c, oc_keys, exp.environment)
    if timing is not None:
        panes.append(timing)
    panes.append(metrics_pane(c, exp.counters, exp.environment))
    return {
        "id": _compile_key(c),
        "compile_id": str(c.compile_id),
        "rank": c.rank,
        "label": c.label,
        "code_name": c.code_name,
        "status": c.status,
        "is_resume": c.is_resume,
        "attempts": c.attempts,
        "restart_reasons": list(c.restart_reasons),
        "markers": _markers(c),
        "parent": None,
        "src": frame_src,
        "errors": [asdict(e) for e in c.errors],
        "panes": panes,
    }


def _stage_errors(c: Compile, *stages: str) -> list[dict[str, str]]:
    return [asdict(e) for e in c.errors if e.stage in stages]


def _frame_pane(c: Compile, stage: str, links: Links) -> dict[str, Any] | None:
    if stage == "bytecode":
        errors = _stage_errors(c, "bytecode")
        b = c.bytecode
        if b is None:
            return (
                pane("bytecode", "bytecode", "code", blocks=[], errors=errors) if errors else None
            )
        blocks = []
        for title, text in (
            ("original_bytecode", b.original),
            ("transformed_bytecode", b.transformed),
        ):
            if text is not None:
                blocks.append(
                    {
                        "title": STAGE_LABELS[title],
                        "note": "",
                        "text": text_data(text, "text", _dis_src(text, c.filename, links)),
                    }
                )
        note = "" if b.decompiled is not None else (b.decompile_error or "not decompiled")
        blocks.append(
            {
                "title": STAGE_LABELS["decompiled"],
                "note": note,
                "text": text_data(b.decompiled or "", "python"),
            }
        )
        return pane("bytecode", "bytecode", "code", blocks=blocks, errors=errors)
    if stage == "dynamo_cpp_guards_str" and c.guards is not None:
        block = {"title": STAGE_LABELS[stage], "note": "", "text": text_data(c.guards.tree, "text")}
        blocks = [block]
        if c.guards.symbolic:
            blocks.append(
                {
                    "title": "Symbolic shape guards",
                    "note": "",
                    "text": text_data("\n".join(c.guards.symbolic), "text"),
                }
            )
        return pane(stage, stage, "code", blocks=blocks)
    if stage == "dynamo_graph_break_reason" and c.graph_breaks:
        items = []
        for gb in c.graph_breaks:
            items.append(
                {
                    "summary": gb.summary,
                    "reason": gb.reason,
                    "src": links.add(gb.location),
                    "location": str(gb.location) if gb.location else "",
                    "code": gb.location.code if gb.location else "",
                    "hints": list(gb.hints),
                    "user_stack": [
                        {
                            "src": links.add(loc) if _user_frame(loc, links) else None,
                            "text": f"{loc} in {loc.function}",
                        }
                        for loc in gb.user_stack
                    ],
                    "documentation": gb.documentation,
                }
            )
        return pane(stage, stage, "graph_breaks", items=items)
    if stage == "recompile_reasons" and c.recompile_reasons:
        items = [asdict(r) for r in c.recompile_reasons]
        return pane(stage, stage, "recompile_reasons", items=items)
    return None


_COMPILER_DIR = os.path.dirname(os.path.abspath(compiler.__file__)) + os.sep


def _user_frame(loc: Any, links: Links) -> bool:
    """A frame of the user's compiled code, not of the caller (pytest, runpy, our wrapper)."""
    ours = os.path.abspath(loc.filename).startswith(_COMPILER_DIR)
    return not ours and loc.filename in links.frame_files


def _dis_src(text: str, filename: str, links: Links) -> list[str | None]:
    """The source line each ``dis`` line belongs to (line numbers in the first column)."""
    out: list[str | None] = []
    current: str | None = None
    for line in text.split("\n"):
        m = _DIS_LINE.match(line)
        if m:
            current = links.add_line(filename, int(m["line"]))
        elif not line.strip() or line.startswith("Disassembly of"):
            current = None if line.startswith("Disassembly of") else current
        out.append(current if line.strip() else None)
    return out


def _graph_kernel_links(
    c: Compile, gid: str, oc_keys: list[str], post_kernels: dict[str, dict[str, list[str]]]
) -> dict[str, list[str]]:
    """Node name -> kernel ids, for a compile-level graph."""
    out: dict[str, list[str]] = {}
    for key, oc in zip(oc_keys, c.output_code, strict=True):
        posts = post_kernels[key]
        if gid == "dynamo_output_graph" or gid.endswith("pre_grad_graph"):
            for pre, post_names in oc.provenance.pre_to_post.items():
                for post in post_names:
                    for kid in posts.get(post, ()):
                        if kid not in out.setdefault(pre, []):
                            out[pre].append(kid)
        elif _AOT_FOR.get(gid) == oc.graph:
            for post, kids in posts.items():
                out.setdefault(post, []).extend(k for k in kids if k not in out.get(post, []))
    return out
