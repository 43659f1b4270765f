// @ts-check
// GENERATED from explorer/panes/kinds.py KINDS by explorer.panes.kinds.renderers_js();
// do not edit. Each pane kind's renderer, as the shell looks it up by `pane.kind`.

/** @import { Renderer } from "../util.js" */
import { renderCode, renderGraph, renderGraphBreaks, renderRecompileReasons, renderFindings } from "./frame.js";
import { renderOutputCode, renderSchedule, renderTritonLowering } from "./inductor.js";
import { renderAutotuning, renderKernelTiming, renderMetrics, renderProfile } from "./runtime.js";
import { renderRanks } from "./ranks.js";
import { renderCompileTime } from "./compile_time.js";
import { renderMemory } from "./memory.js";
import { renderCudagraphs } from "./cudagraphs.js";
import { renderNumerics } from "./numerics.js";

/** @type {Object<string, Renderer>} */
const RENDERERS = {
  code: renderCode,
  graph: renderGraph,
  output_code: renderOutputCode,
  schedule: renderSchedule,
  graph_breaks: renderGraphBreaks,
  recompile_reasons: renderRecompileReasons,
  autotuning: renderAutotuning,
  kernel_timing: renderKernelTiming,
  metrics: renderMetrics,
  triton_lowering: renderTritonLowering,
  findings: renderFindings,
  ranks: renderRanks,
  profile: renderProfile,
  compile_time: renderCompileTime,
  memory: renderMemory,
  cudagraphs: renderCudagraphs,
  numerics: renderNumerics,
};

export { RENDERERS };
