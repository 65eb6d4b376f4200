#!/usr/bin/env bash
# Instructions per request of the HTTP paths in `tests/examples/http_instructions.rs`, counted by
# callgrind (needs valgrind: apt-get install valgrind). Each path runs with 1,000 and 11,000
# requests; the difference divided by 10,000 leaves out start-up. Deterministic, unlike timings.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --release -p tool-tests --example http_instructions
bin=target/release/examples/http_instructions
count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 |
    sed -n 's/.*I *refs: *//p' | tr -d ,
}
names=("router (front layer + pipeline + envelope)" "tool_route (pipeline + envelope)" \
       "hand-written axum handler" "pipeline alone: Registry::call + serialize")
declare -a per
for path in 0 1 2 3; do
  a=$(count "$path" 1000)
  b=$(count "$path" 11000)
  per[$path]=$(( (b - a) / 10000 ))
  printf '%-48s %7d instructions/request\n' "${names[$path]}" "${per[$path]}"
done
awk -v h="${per[2]}" -v r="${per[0]}" \
  'BEGIN { printf "hand-written / router: %.3f (the fraction of the router'"'"'s work the hand-written handler does)\n", h / r }'
