// @ts-check
// Syntax colours for one line at a time, by small regular expressions: Python (graphs,
// wrapper code, Triton), C++ (CPU kernels), MLIR (TTIR/TTGIR), LLVM IR, PTX, SASS and
// plain text. Only the lines a pane draws are highlighted, when it draws them. The
// classes are pygments' short names (explorer.css colours them); text goes in through
// textContent, so joining the pieces gives back the line exactly.

const HL_PY_KW = new Set(("and as assert async await break class continue def del elif else except finally for " +
  "from global if import in is lambda nonlocal not or pass raise return try while with yield").split(" "));
const HL_PY_CONST = new Set(["None", "True", "False"]);
const HL_PY_BUILTIN = new Set(("abs all any bool dict enumerate float getattr int isinstance len list max min " +
  "object print range repr set slice str sum super tuple type zip").split(" "));
const HL_CPP_KW = new Set(("auto bool break case char const constexpr continue default do double else enum extern " +
  "float for if inline int long namespace return short signed sizeof static struct switch template typedef " +
  "typename unsigned using void volatile while #include #pragma").split(" "));

/** @type {Object<string, RegExp>} one alternation per language; group names are the classes */
const HL_RULES = {
  python: /(?<c1>#.*)|(?<s>"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?)|(?<m>\b\d+(?:\.\d*)?(?:[eE][-+]?\d+)?\b)|(?<n>[A-Za-z_]\w*)|(?<o>[-+*/%=<>!&|^~@]+)/g,
  cpp: /(?<c1>\/\/.*|\/\*.*?(?:\*\/|$))|(?<cp>^\s*#\s*\w+)|(?<s>"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?)|(?<m>\b(?:0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)[fFuUlL]*\b)|(?<n>[A-Za-z_]\w*)|(?<o>[-+*/%=<>!&|^~?:]+)/g,
  mlir: /(?<c1>\/\/.*)|(?<s>"(?:[^"\\]|\\.)*"?)|(?<nv>%[\w.$-]+)|(?<nd>#[\w.$-]+)|(?<nf>@[\w.$-]+)|(?<kt>![\w.$-]+|\b(?:tensor|memref|vector|ptr|[iuf]\d+|bf16|index)\b)|(?<m>\b0x[0-9a-fA-F]+\b|\b\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\b)|(?<nb>\b[a-z_]+\.[\w.]+\b)|(?<k>\b(?:loc|module|attributes|public|private|dense|unknown|callsite|at|fused)\b)/g,
  llvm: /(?<c1>;.*)|(?<s>"(?:[^"\\]|\\.)*"?)|(?<nv>[%@][\w.$-]+)|(?<nd>![\w.$-]+|#\d+)|(?<kt>\b(?:i\d+|half|bfloat|float|double|void|ptr|label)\b)|(?<m>\b-?\d+(?:\.\d+)?(?:e[-+]?\d+)?\b)|(?<k>\b(?:define|declare|call|ret|br|load|store|getelementptr|alloca|phi|icmp|fcmp|add|sub|mul|fadd|fsub|fmul|fdiv|and|or|xor|select|tail|to|align|addrspace|global|constant)\b)/g,
  ptx: /(?<c1>\/\/.*)|(?<s>"(?:[^"\\]|\\.)*"?)|(?<nv>%[\w.$]+)|(?<nd>\.[a-z][\w.]*)|(?<m>\b0[xXfF][0-9a-fA-F]+\b|\b-?\d+(?:\.\d+)?\b)|(?<k>\b[a-z]+(?=[.\s]))/g,
  sass: /(?<c1>\/\*.*?\*\/|\/\/.*)|(?<nv>\b(?:U?R\d+|U?P\d+|U?RZ|U?PT|SR_[\w.]+)\b)|(?<m>\b0x[0-9a-fA-F]+\b|\b\d+(?:\.\d+)?\b)|(?<k>\b[A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*\b)/g,
};

/**
 * `line` as [class, text] pieces ("" for plain text); the texts joined are `line`.
 * @param {string} line @param {string} language
 * @returns {[string, string][]}
 */
function highlightLine(line, language) {
  const re = HL_RULES[language === "triton" ? "python" : language];
  if (!re || !line) return line ? [["", line]] : [];
  /** @type {[string, string][]} */
  const out = [];
  let at = 0;
  re.lastIndex = 0;
  for (let m = re.exec(line); m; m = re.exec(line)) {
    if (!m[0]) { re.lastIndex++; continue; }
    const groups = /** @type {Object<string, string|undefined>} */ (m.groups);
    let cls = Object.keys(groups).find((k) => groups[k] !== undefined) || "";
    if (cls === "n") cls = hlName(m[0], language, line, m.index);
    if (m.index > at) out.push(["", line.slice(at, m.index)]);
    out.push([cls, m[0]]);
    at = m.index + m[0].length;
  }
  if (at < line.length) out.push(["", line.slice(at)]);
  return out;
}

/** @param {string} word @param {string} language @param {string} line @param {number} at */
function hlName(word, language, line, at) {
  if (language === "cpp") return HL_CPP_KW.has(word) ? "k" : "";
  if (HL_PY_KW.has(word)) return "k";
  if (HL_PY_CONST.has(word)) return "kc";
  if (HL_PY_BUILTIN.has(word)) return "nb";
  if (at >= 4 && line.slice(at - 4, at) === "def ") return "nf";
  return "";
}

/** Append `line`, highlighted, to `into`. @param {string} line @param {string} language @param {HTMLElement} into */
function appendHighlighted(line, language, into) {
  for (const [cls, text] of highlightLine(line, language)) {
    if (cls) {
      const span = document.createElement("span");
      span.className = "t-" + cls;
      span.textContent = text;
      into.append(span);
    } else {
      into.append(document.createTextNode(text));
    }
  }
}

export { appendHighlighted };
