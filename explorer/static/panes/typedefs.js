// @ts-check
// GENERATED from explorer/panes/types.py by explorer.panes.typedefs();
// do not edit. The Python-to-JS contract of the explorer's panes and index.

/**
 * @typedef {object} AutotuneOp
 * @property {string} op
 * @property {string[]} input_sizes
 * @property {string} chosen
 * @property {(string|null)} kernel
 * @property {[string, string][]} common_config
 * @property {string} common_text
 * @property {(number|null)} fastest_ms
 * @property {(number|null)} slowest_ms
 * @property {AutotuneRow[]} rows
 */
/**
 * @typedef {object} AutotuneRow
 * @property {string} name
 * @property {string} kind
 * @property {(number|null)} ms
 * @property {string} ms_text
 * @property {(number|null)} relative
 * @property {string} relative_text
 * @property {string} description
 * @property {[string, string][]} config
 * @property {string} config_text
 * @property {boolean} chosen
 * @property {(string|null)} kernel
 */
/**
 * @typedef {object} AutotuningPane
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 * @property {AutotuneOp[]} ops
 */
/**
 * @typedef {object} Block
 * @property {string} title
 * @property {string} note
 * @property {string} text
 * @property {string} language
 * @property {(string|null)[]} line_src
 */
/**
 * @typedef {object} CallSummary
 * @property {boolean} slower
 * @property {string} headline
 * @property {[string, string][]} rows
 * @property {string[]} notes
 */
/**
 * @typedef {object} CodePane
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 * @property {Block[]} blocks
 */
/**
 * @typedef {object} CompileEntry
 * @property {string} key
 * @property {string} compile_id
 * @property {(number|null)} rank
 * @property {string} label
 * @property {string} code_name
 * @property {string} status
 * @property {boolean} is_resume
 * @property {number} attempts
 * @property {string[]} restart_reasons
 * @property {string[]} markers
 * @property {(string|null)} parent
 * @property {(string|null)} src
 * @property {PaneError[]} errors
 * @property {PaneRef[]} panes
 * @property {Object<string, KernelRef>} kernels
 * @property {string} name
 * @property {(string|null)} default_stage
 */
/** @typedef {import("./typedefs_costs.js").CompileSaved} CompileSaved */
/** @typedef {import("./typedefs_costs.js").CompileTimeBar} CompileTimeBar */
/** @typedef {import("./typedefs_costs.js").CompileTimePane} CompileTimePane */
/** @typedef {import("./typedefs_costs.js").CudagraphCall} CudagraphCall */
/** @typedef {import("./typedefs_costs.js").CudagraphShape} CudagraphShape */
/** @typedef {import("./typedefs_costs.js").CudagraphSite} CudagraphSite */
/** @typedef {import("./typedefs_costs.js").CudagraphsPane} CudagraphsPane */
/**
 * @typedef {object} DivergenceEntry
 * @property {string} kind
 * @property {string} compile_id
 * @property {string} text
 * @property {EvidenceLink[]} sides
 */
/**
 * @typedef {object} EvidenceLink
 * @property {string} text
 * @property {(string|null)} compile
 * @property {(string|null)} stage
 * @property {(string|null)} src
 * @property {(string|null)} node
 * @property {(string|null)} kernel
 */
/**
 * @typedef {object} FinalRow
 * @property {string} kind
 * @property {string} name
 * @property {string} dtype
 * @property {string} level
 * @property {(number|null)} ratio
 * @property {string} figures
 * @property {string} reason
 */
/**
 * @typedef {object} FindingItem
 * @property {string} kind
 * @property {string} severity
 * @property {string} title
 * @property {SuggestionPart[]} suggestion
 * @property {string} impact
 * @property {EvidenceLink[]} evidence
 * @property {EvidenceLink[]} chain
 * @property {string} tried
 */
/**
 * @typedef {object} FindingsPane
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 * @property {FindingItem[]} items
 */
/**
 * @typedef {object} FusedInfo
 * @property {string} name
 * @property {string} kind
 * @property {string[]} members
 * @property {string[]} buffers
 * @property {string} extern_kernel
 */
/**
 * @typedef {object} GraphBreakItem
 * @property {string} summary
 * @property {string} reason
 * @property {(string|null)} src
 * @property {string} location
 * @property {string} code
 * @property {string[]} hints
 * @property {StackFrame[]} user_stack
 * @property {string} documentation
 */
/**
 * @typedef {object} GraphBreaksPane
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 * @property {GraphBreakItem[]} items
 */
/**
 * @typedef {object} GraphNodes
 * @property {string[]} name
 * @property {number[]} op
 * @property {number[]} target
 * @property {number[]} meta
 * @property {number[]} module_stack
 * @property {number[][]} inputs
 * @property {(number|null)[]} source
 * @property {number[]} kernels
 * @property {number[]} line
 */
/**
 * @typedef {object} GraphPane
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 * @property {string} text
 * @property {string} language
 * @property {[number, number][]} file_comments
 * @property {(string|null)} parse_error
 * @property {GraphNodes} nodes
 * @property {string[]} ops
 * @property {string[]} targets
 * @property {SourceRef[]} sources
 * @property {Meta[][]} metas
 * @property {string[][]} stacks
 * @property {string[][]} kernel_sets
 * @property {SubgraphLink[]} subgraphs
 * @property {[number, string][]} saved
 */
/**
 * @typedef {object} Index
 * @property {string} title
 * @property {string} source
 * @property {string} target
 * @property {Object<string, (string|number|null)>} environment
 * @property {(Object<string, (string|boolean|Object<string, string>|null)>|null)} options
 * @property {string[]} notes
 * @property {PaneError[]} errors
 * @property {Object<string, string>} labels
 * @property {string[]} src_keys
 * @property {string[]} src_labels
 * @property {SourceFile[]} sources
 * @property {CompileEntry[]} compiles
 * @property {(PaneRef|null)} findings
 * @property {Selection} default_selection
 * @property {string[]} exploration_panes
 */
/**
 * @typedef {object} KernelInfo
 * @property {string} id
 * @property {string} name
 * @property {string} language
 * @property {number} first_line
 * @property {number} last_line
 * @property {number[]} call_lines
 * @property {string[]} post_grad_nodes
 * @property {string[]} source_nodes
 * @property {string[]} src
 * @property {(KernelTiming|null)} timing
 * @property {number[]} grid
 * @property {(string|null)} lowering
 */
/**
 * @typedef {object} KernelRef
 * @property {string} name
 * @property {(string|null)} pane
 */
/**
 * @typedef {object} KernelTiming
 * @property {number} calls
 * @property {number} median_us
 * @property {number} min_us
 * @property {(number|null)} bytes
 * @property {(number|null)} achieved_gbps
 * @property {(number|null)} peak_gbps
 * @property {(number|null)} flops
 * @property {(number|null)} achieved_tflops
 */
/**
 * @typedef {object} KernelTimingPane
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 * @property {TimingRow[]} rows
 * @property {number} total_us
 * @property {(number|null)} peak_gbps
 * @property {string} peak_line
 * @property {(number|null)} peak_matmul_tflops
 * @property {boolean} has_flops
 * @property {string} cudagraph_line
 * @property {string[]} untimed
 * @property {string[]} outputs
 * @property {(CallSummary|null)} call
 */
/**
 * @typedef {object} LabFailure
 * @property {string} kind
 * @property {string} message
 * @property {(number|null)} line
 */
/**
 * @typedef {object} LabResult
 * @property {VariantInfo} variant
 * @property {Object<string, number[]>} changed
 * @property {Object<string, number>} removed
 * @property {(number|null)} registers
 * @property {(number|null)} spill_stores
 * @property {(number|null)} spill_loads
 * @property {(number|null)} stack_bytes
 * @property {(boolean|null)} reproduced
 * @property {string} note
 * @property {number} seconds
 */
/**
 * @typedef {object} LoweredStageInfo
 * @property {string} stage
 * @property {string} label
 * @property {string} text
 * @property {string} language
 * @property {(number|null)[]} source_line
 * @property {string} error
 * @property {string} note
 */
/** @typedef {import("./typedefs_costs.js").MemoryPane} MemoryPane */
/**
 * @typedef {object} Meta
 * @property {string} dtype
 * @property {string[]} shape
 * @property {string[]} stride
 * @property {string} device
 */
/**
 * @typedef {object} MetricsPane
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 * @property {[string, string][]} summary
 * @property {Phase[]} phases
 * @property {string[]} cache_events
 * @property {[string, number][]} counters
 */
/**
 * @typedef {object} NumericsPane
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 * @property {string} summary
 * @property {(NumericsRow|null)} first
 * @property {NumericsRow[]} nodes
 * @property {NumericsRow[]} worst
 * @property {[string, number][]} not_compared
 * @property {string[]} notes
 * @property {FindingItem[]} advice
 * @property {string} end_to_end_summary
 * @property {FinalRow[]} end_to_end
 */
/**
 * @typedef {object} NumericsRow
 * @property {number} order
 * @property {string} node
 * @property {string} target
 * @property {string} graph
 * @property {string} compile
 * @property {(string|null)} stage
 * @property {(string|null)} kernel
 * @property {string} kernel_name
 * @property {(string|null)} src
 * @property {string} dtype
 * @property {string} level
 * @property {(number|null)} ratio
 * @property {string} figures
 * @property {string} reason
 * @property {string} output
 */
/**
 * @typedef {object} OutputCodePane
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 * @property {string} text
 * @property {string} language
 * @property {KernelInfo[]} kernels
 * @property {string} path
 */
/**
 * @typedef {object} PaneError
 * @property {string} stage
 * @property {string} message
 * @property {string} traceback
 */
/**
 * @typedef {object} PaneHead
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 */
/**
 * @typedef {object} PaneRef
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {string} kind
 */
/** @typedef {import("./typedefs_costs.js").PeakRow} PeakRow */
/**
 * @typedef {object} Phase
 * @property {string} name
 * @property {number} seconds
 * @property {number} depth
 */
/** @typedef {import("./typedefs_costs.js").PhaseSeconds} PhaseSeconds */
/**
 * @typedef {object} ProfilePane
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 * @property {string} summary
 * @property {ProfileRow[]} kernels
 * @property {ProfileRow[]} lines
 * @property {ProfileRow[]} modules
 * @property {string[]} unlinked
 * @property {string[]} notes
 */
/**
 * @typedef {object} ProfileRow
 * @property {EvidenceLink} link
 * @property {string} detail
 * @property {number} events
 * @property {number} total_us
 * @property {number} share
 */
/**
 * @typedef {object} RankCell
 * @property {(string|null)} compile
 * @property {(string|null)} stage
 * @property {string} text
 * @property {boolean} diverges
 * @property {(number|null)} seconds
 * @property {string} cache
 */
/**
 * @typedef {object} RankRow
 * @property {string} compile_id
 * @property {string} name
 * @property {string[]} kinds
 * @property {RankCell[]} cells
 */
/**
 * @typedef {object} RanksPane
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 * @property {string[]} ranks
 * @property {string} summary
 * @property {DivergenceEntry[]} divergences
 * @property {RankRow[]} rows
 * @property {number[]} totals
 * @property {boolean[]} slow
 * @property {number} longest
 */
/**
 * @typedef {object} RecompileItem
 * @property {string} previous
 * @property {string} reason
 * @property {string} text
 */
/**
 * @typedef {object} RecompileReasonsPane
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 * @property {RecompileItem[]} items
 */
/** @typedef {import("./typedefs_costs.js").SavedRow} SavedRow */
/**
 * @typedef {object} SchedulePane
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 * @property {Block[]} blocks
 * @property {FusedInfo[]} fused
 */
/**
 * @typedef {object} Selection
 * @property {(string|null)} compile
 * @property {(string|null)} stage
 * @property {(string|null)} src
 * @property {(string|null)} node
 * @property {(string|null)} kernel
 */
/**
 * @typedef {object} SourceFile
 * @property {string} filename
 * @property {string} short_name
 * @property {boolean} available
 * @property {string} note
 * @property {SourceWindow[]} windows
 */
/**
 * @typedef {object} SourceRef
 * @property {(string|null)} src
 * @property {string} function
 * @property {string} code
 * @property {string} label
 */
/**
 * @typedef {object} SourceWindow
 * @property {number} start
 * @property {string[]} lines
 * @property {(string|null)[]} src
 */
/**
 * @typedef {object} StackFrame
 * @property {(string|null)} src
 * @property {string} text
 */
/**
 * @typedef {object} SubgraphLink
 * @property {number} caller
 * @property {number} first
 * @property {number} last
 * @property {string} op
 * @property {string} role
 * @property {string} module
 * @property {string} id
 */
/**
 * @typedef {object} SuggestionPart
 * @property {string} kind
 * @property {string} text
 * @property {string} language
 */
/**
 * @typedef {object} TimingRow
 * @property {string} kernel
 * @property {string} name
 * @property {string} language
 * @property {string} output
 * @property {number} calls
 * @property {number} median_us
 * @property {number} min_us
 * @property {number} total_us
 * @property {(number|null)} bytes
 * @property {(number|null)} mb
 * @property {(number|null)} achieved_gbps
 * @property {(number|null)} peak_gbps
 * @property {(number|null)} peak_pct
 * @property {string} note
 * @property {(number|null)} flops
 * @property {(number|null)} gflop
 * @property {(number|null)} achieved_tflops
 * @property {(number|null)} matmul_peak_pct
 * @property {number} share
 * @property {string[]} src
 */
/**
 * @typedef {object} TritonLoweringPane
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 * @property {string} kernel
 * @property {string} kernel_name
 * @property {string} source
 * @property {(number|null)} def_line
 * @property {[string, string][]} info
 * @property {number} default_variant
 * @property {VariantInfo[]} variants
 */
/**
 * @typedef {object} VariantInfo
 * @property {string} hash
 * @property {string} cache_key
 * @property {Object<string, string>} config
 * @property {boolean} chosen
 * @property {string} target
 * @property {string} triton_version
 * @property {number} shared_memory
 * @property {LoweredStageInfo[]} stages
 */
/** @typedef {CodePane|GraphPane|OutputCodePane|SchedulePane|GraphBreaksPane|RecompileReasonsPane|AutotuningPane|KernelTimingPane|MetricsPane|TritonLoweringPane|FindingsPane|RanksPane|ProfilePane|CompileTimePane|MemoryPane|CudagraphsPane|NumericsPane} Pane */

export {}; // a module: other files take these types with @import
