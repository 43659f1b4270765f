#!/usr/bin/env bash
# The main job: set up .venv (with the lab extra), then
#   - JupyterLab on notebooks/tour.ipynb when that notebook exists; extra arguments go to
#     jupyter, e.g. scripts/start.sh --no-browser --ip 127.0.0.1
#   - otherwise, or with --headless: capture examples/graph_break.py and write its report
#     folder (default report/; change it with -o DIR).
#   --triton also installs the [triton] extra (Triton 3.6.0, about 640 MB), which notebook 8's
#     kernel lab needs; the other notebooks run without it.
# Inductor builds its CPU kernels with a C++ compiler (g++, or $CXX): checked before starting.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

NOTEBOOK=notebooks/tour.ipynb
EXAMPLE=examples/graph_break.py

headless=0
triton=0
out=report
passthrough=()
while (($#)); do
    case $1 in
        --headless) headless=1 ;;
        --triton) triton=1 ;;
        -o | --output)
            (($# >= 2)) || { echo "start.sh: $1 needs a folder" >&2; exit 2; }
            out=$2
            shift
            ;;
        -o=* | --output=*) out=${1#*=} ;;
        -h | --help) sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) passthrough+=("$1") ;;
    esac
    shift
done

out=${out%/}
[[ -n $out ]] || { echo "start.sh: -o needs a folder other than /" >&2; exit 2; }

if ((triton)); then
    bash scripts/setup.sh lab triton
else
    bash scripts/setup.sh lab
fi

# Inductor compiles its CPU kernels with the C++ compiler that torch/_inductor/config.py names
# (cpp.cxx: $CXX, else g++; clang++ on macOS) and includes Python's headers (Python.h). Without
# them the notebooks' Inductor cells fail with InvalidCxxCompiler or a missing Python.h, long
# after start; say it now.
cxx=${CXX:-$([[ $(uname) == Darwin ]] && echo clang++ || echo g++)}
if ! command -v "$cxx" >/dev/null 2>&1; then
    echo "start.sh: warning: no C++ compiler '$cxx' on PATH. torch.compile's default backend" \
        "(Inductor) builds C++ on a CPU: install one (Debian/Ubuntu: sudo apt-get install g++;" \
        "macOS: xcode-select --install) or set CXX; every Inductor cell of the notebooks needs it." >&2
fi
if ! .venv/bin/python -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
    echo "start.sh: warning: Python's headers (Python.h) are missing; Inductor's C++ builds" \
        "include them. Debian/Ubuntu: sudo apt-get install python3-dev (for your Python version)." >&2
fi
if ((!triton)) && ! .venv/bin/python -c 'import triton' 2>/dev/null; then
    echo "start.sh: notebook 8 (kernel lab) needs Triton: run scripts/start.sh --triton (about 640 MB)"
fi

if ((!headless)) && [[ -f $NOTEBOOK ]]; then
    jupyter_args=()
    # Jupyter refuses to run as root without this (containers, CI machines).
    if (($(id -u) == 0)) && [[ " ${passthrough[*]-} " != *" --allow-root "* ]]; then
        jupyter_args+=(--allow-root)
    fi
    echo "start.sh: starting JupyterLab on $NOTEBOOK (Ctrl-C to stop)"
    exec .venv/bin/jupyter lab "$NOTEBOOK" ${jupyter_args[@]+"${jupyter_args[@]}"} \
        ${passthrough[@]+"${passthrough[@]}"}
fi

if ((${#passthrough[@]})); then
    echo "start.sh: headless run: ignoring JupyterLab arguments: ${passthrough[*]}" >&2
fi
if ((!headless)); then
    echo "start.sh: $NOTEBOOK does not exist yet; running the headless report instead"
fi
echo "start.sh: capturing $EXAMPLE into $out/"
.venv/bin/python -m compiler report "$EXAMPLE" -o "$out/"
# The same capture as one offline page with the explorer's linked views, and the
# Markdown report beside it (report.md).
.venv/bin/python -m explorer report "$out/exploration.json" -o "$out"
echo "start.sh: report written to $(cd "$out" && pwd)/"
