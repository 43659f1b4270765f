// @ts-check
// GENERATED from explorer/panes/types.py by explorer.panes.typedefs();
// do not edit. The Python-to-JS contract of the explorer's panes and index.

/** @import { EvidenceLink, FindingItem, PaneError } from "./typedefs.js" */
/**
 * @typedef {object} CompileSaved
 * @property {string} compile
 * @property {string} compile_id
 * @property {string} title
 * @property {SavedRow[]} rows
 */
/**
 * @typedef {object} CompileTimeBar
 * @property {string} compile
 * @property {(string|null)} stage
 * @property {(string|null)} graph
 * @property {string} compile_id
 * @property {string} name
 * @property {(string|null)} src
 * @property {number} seconds
 * @property {PhaseSeconds[]} phases
 * @property {string} recompile
 */
/**
 * @typedef {object} CompileTimePane
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 * @property {string} summary
 * @property {string[]} legend
 * @property {PhaseSeconds[]} totals
 * @property {CompileTimeBar[]} bars
 * @property {number} longest
 * @property {string} recompiles
 * @property {string} warm
 */
/**
 * @typedef {object} CudagraphCall
 * @property {number} batch
 * @property {number} ms
 * @property {number} pool_mib
 */
/**
 * @typedef {object} CudagraphShape
 * @property {string} key
 * @property {number} trees
 * @property {number} warmups
 * @property {number} recordings
 * @property {string[]} sizes
 * @property {number[]} calls_ms
 */
/**
 * @typedef {object} CudagraphSite
 * @property {string} compile
 * @property {string} label
 * @property {string} status
 * @property {string} summary
 * @property {(EvidenceLink|null)} reason
 * @property {EvidenceLink[]} kept_out
 * @property {CudagraphShape[]} shapes
 * @property {string[]} rerecords
 */
/**
 * @typedef {object} CudagraphsPane
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 * @property {string} summary
 * @property {CudagraphSite[]} sites
 * @property {CudagraphCall[]} calls
 * @property {number} pool_mib
 * @property {EvidenceLink[]} problems
 */
/**
 * @typedef {object} MemoryPane
 * @property {string} kind
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {string} group
 * @property {PaneError[]} errors
 * @property {string} summary
 * @property {CompileSaved[]} compiles
 * @property {PeakRow[]} peaks
 * @property {FindingItem[]} advice
 */
/**
 * @typedef {object} PeakRow
 * @property {string} label
 * @property {string[]} cells
 * @property {boolean} above_eager
 */
/**
 * @typedef {object} PhaseSeconds
 * @property {string} name
 * @property {number} seconds
 * @property {number} slot
 */
/**
 * @typedef {object} SavedRow
 * @property {string} node
 * @property {(string|null)} stage
 * @property {string} kind
 * @property {string} shape
 * @property {string} dtype
 * @property {(number|null)} bytes
 * @property {string} size
 * @property {(string|null)} src
 * @property {string} module
 */

export {}; // a module: typedefs.js names these types for the others
