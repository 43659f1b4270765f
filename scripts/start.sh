#!/usr/bin/env bash
# The main job: set up .venv (with the lab extra), then
#   - JupyterLab on notebooks/tour.ipynb when that notebook exists; extra arguments go to
#     jupyter, e.g. scripts/start.sh --no-browser --ip 127.0.0.1
#   - otherwise, or with --headless: capture examples/graph_break.py and write its report
#     folder (default report/; change it with -o DIR).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

NOTEBOOK=notebooks/tour.ipynb
EXAMPLE=examples/graph_break.py

headless=0
out=report
passthrough=()
while (($#)); do
    case $1 in
        --headless) headless=1 ;;
        -o | --output)
            (($# >= 2)) || { echo "start.sh: $1 needs a folder" >&2; exit 2; }
            out=$2
            shift
            ;;
        -o=* | --output=*) out=${1#*=} ;;
        -h | --help) sed -n '2,6p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) passthrough+=("$1") ;;
    esac
    shift
done

out=${out%/}
[[ -n $out ]] || { echo "start.sh: -o needs a folder other than /" >&2; exit 2; }

bash scripts/setup.sh lab

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
