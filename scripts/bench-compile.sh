#!/usr/bin/env bash
# Compile-time cost of the a2a-card macros, per the issue: an agent of 200 skills declared with
# #[agent]/#[skill]/#[derive(Schema)] against the same agent written by hand with the builder;
# prints the medians of `cargo check` of the user crate (clean and incremental) and the ratios
# macros/hand against the 1.15x target.
#
#   scripts/bench-compile.sh
#
# Environment:
#   BENCH_REPS=3            repetitions of each measurement (medians are reported)
#   BENCH_EDITS=3           incremental checks of each kind of edit in each repetition (a
#                           change within a line; a line break added or taken out)
#   BENCH_SKILLS=200        skills in the generated agent
#   BENCH_VARIANTS=macros,hand
#                           add `expanded` to split the cost (see
#                           scripts/bench_compile.py)
#   BENCH_A2A_CARD=path     the a2a-card crate to depend on (default: this checkout's)
#   BENCH_KEEP=1            keep the temporary directory (its path is printed)
#
# The crates are generated in a temporary directory outside the repository, removed on exit.
# Exit status: 0 whatever the ratios (this is a report), non-zero when a build fails.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="$(command -v python3 || true)"
if [[ -z "$python" ]]; then
    echo "bench-compile: python3 is required" >&2
    exit 2
fi
command -v cargo >/dev/null || { echo "bench-compile: cargo is required" >&2; exit 2; }

workdir="$(mktemp -d "${TMPDIR:-/tmp}/a2a-card-bench.XXXXXX")"
cleanup() {
    if [[ "${BENCH_KEEP:-0}" == 1 ]]; then
        echo "bench-compile: kept $workdir" >&2
    else
        rm -rf "$workdir"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$python" "$here/bench_compile.py" --workdir "$workdir" "$@"
