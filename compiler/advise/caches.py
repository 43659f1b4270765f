"""FX graph and AOTAutograd cache misses where a warm start was expected, and bypasses.

A warm start is expected when the capture kept torch's caches on (or came from a
``TORCH_TRACE`` log of an ordinary run) and some compile of it did hit the cache: then
a compile of the same run that missed had something in its key change.
"""

from __future__ import annotations

from compiler.advise._common import Ranked, cause_key, finding, plural
from compiler.advise.findings import Evidence
from compiler.link.ids import compile_pane, key_of
from compiler.model import Compile, Exploration
from compiler.parse.words.cache_keys import cache_record


def _hit(c: Compile) -> bool:
    return bool(c.metrics.fx_cache_hits or c.metrics.aot_cache_hits) or any(
        e.endswith("_hit") for e in c.metrics.cache_events
    )


def _missed(c: Compile) -> list[str]:
    return sorted({e for e in c.metrics.cache_events if e.endswith(("_miss", "_bypass"))})


def findings(exp: Exploration) -> list[Ranked]:
    """Cache bypasses, and misses where a warm start was expected."""
    caches_on = exp.source == "trace" or (exp.options is not None and exp.options.keep_caches)
    out: list[Ranked] = []
    for c in exp.compiles:
        bypass = [e for e in c.metrics.cache_events if e.endswith("_bypass")]
        records = [cache_record(name, text) for name, text in c.artifacts.items()]
        reasons = sorted({r.bypass_reason for r in records if r and r.bypass_reason})
        if bypass:
            out.append(
                finding(
                    "cache.bypass",
                    "warning",
                    f"Compile {c.compile_id} cannot be cached ({', '.join(sorted(set(bypass)))})",
                    [
                        Evidence(
                            text=", ".join(bypass + reasons),
                            compile=key_of(c),
                            stage=compile_pane("compilation_metrics"),
                        )
                    ],
                    "Torch skipped its cache for this graph, so every process compiles it "
                    'from scratch. `TORCH_LOGS=+inductor` names the reason ("Bypassing FX '
                    'Graph Cache because ..."); the usual ones are a custom graph pass given '
                    "as a plain function, a custom op or Triton kernel torch cannot hash, or "
                    "a config value it cannot serialise. A custom pass becomes cacheable as a "
                    "`torch._inductor.custom_graph_pass.CustomGraphPass` with a `uuid()`.",
                    "a full compile in every new process",
                    score=1.0,
                    cause=cause_key("cache.bypass", *(reasons or sorted(set(bypass)))),
                )
            )
    if not caches_on:
        return out
    hits = [c for c in exp.compiles if _hit(c)]
    # a bypassed compile has its own finding above; a miss is one the cache could serve
    misses = [
        c for c in exp.compiles if any(e.endswith("_miss") for e in _missed(c)) and not _hit(c)
    ]
    if not hits:
        if misses:
            out.append(
                finding(
                    "cache.cold",
                    "info",
                    f"Cold start: {plural(len(misses), 'compile')} filled the caches",
                    [
                        Evidence(
                            text=", ".join(_missed(misses[0])),
                            compile=key_of(misses[0]),
                            stage=compile_pane("compilation_metrics"),
                        )
                    ],
                    "The next process with the same code, shapes and settings should hit "
                    "the FX graph and AOTAutograd caches. To carry them to another machine:\n"
                    "```python\nartifacts = torch.compiler.save_cache_artifacts()\n"
                    "torch.compiler.load_cache_artifacts(artifacts[0])  # in the new process\n```",
                    cause=cause_key("cache.cold"),
                )
            )
        return out
    ranked = len(exp.ranks) > 1

    def named(c: Compile) -> str:
        return f"{c.compile_id} on rank {c.rank}" if ranked else str(c.compile_id)

    hit_ids = ", ".join(named(c) for c in hits[:3])
    for c in misses:
        recompile = c.is_recompile
        why = (
            "it is a recompile: its graph is new, so a miss is expected"
            if recompile
            else "its graph, input shapes, torch version or Inductor settings differ from "
            "the cached run's"
        )
        out.append(
            finding(
                "cache.miss",
                "info" if recompile else "warning",
                f"Compile {named(c)} (`{c.code_name}`) missed the cache while {hit_ids} hit it",
                [
                    Evidence(
                        text=f"{', '.join(_missed(c))}; {why}",
                        compile=key_of(c),
                        stage=compile_pane("compilation_metrics"),
                    )
                ],
                "A warm start was expected. Compare this compile's graph and the settings "
                "in force when it ran with the cached run: a `torch._inductor.config.patch`, "
                "a changed default dtype or a different input shape each change the cache "
                "key. `compiler.cache_diff(cached_run, this_run)` names the key component "
                "that changed.",
                f"a cold compile ({c.metrics.entire_frame_seconds or 0:.2f} s) "
                "instead of a cache load",
                score=c.metrics.entire_frame_seconds or 0.0,
                # one compile id missing on several ranks is one cause, each miss its evidence
                cause=cause_key("cache.miss", c.compile_id),
            )
        )
    return out
