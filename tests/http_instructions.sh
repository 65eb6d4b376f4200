#!/usr/bin/env bash
# Instructions per request of the HTTP paths in `tests/examples/http_instructions.rs`, counted by
# callgrind (needs valgrind: apt-get install valgrind). Each path runs with 1,000 and 11,000
# requests; the difference divided by 10,000 leaves out start-up. Deterministic, unlike timings.
# Then the router and the hand-written handler over a real connection, served by `http::serve`
# as `benches/http.rs` serves them: the server's instructions over 2,000 requests, hyper
# included (the kernel is not counted).
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
over_wire() { # path
  local out pid url hostport
  out=$(mktemp -d)
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.%p" "$bin" serve "$1" >"$out/log" 2>/dev/null &
  pid=$!
  for _ in $(seq 1 300); do
    url=$(sed -n 's/^listening on //p' "$out/log")
    [ -n "$url" ] && break
    sleep 0.1
  done
  hostport=${url#http://}
  python3 tests/python/http_instructions.py "${hostport%:*}" "${hostport##*:}" 2000 "$pid"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  echo $(($(sed -n 's/^summary: *//p' "$out"/cg.*.1) / 2000))
  rm -rf "$out"
}
wire_router=$(over_wire 0)
wire_hand=$(over_wire 2)
printf '%-48s %7d instructions/request\n' "over a connection: router" "$wire_router"
printf '%-48s %7d instructions/request\n' "over a connection: hand-written axum handler" "$wire_hand"
