#!/usr/bin/env bash
# Instructions per MCP `tools/call` of `add`, our server (`tests/peers/ours-add`) beside rmcp
# alone (`tests/peers/rmcp-add`), the pair `cargo bench -p tool-tests --bench mcp` runs,
# counted by callgrind (needs valgrind: apt-get install valgrind). Exact and repeatable, where the bench's
# throughput moves from run to run; one call at a time, so nothing but the call is counted.
#
# - stdio: each server started with 200 and with 1,200 calls; the difference over 1,000 calls
#   leaves out start-up and the handshake.
# - streamable HTTP: one session; the counters are zeroed after 50 warm-up calls and dumped
#   after 1,000 more.
#
# The callgrind files are kept in the folder printed last: `callgrind_annotate --inclusive=yes`
# on a pair shows where the difference goes, function by function.
#
#   bash tests/mcp_instructions.sh
set -euo pipefail
cd "$(dirname "$0")/.."
for peer in ours-add rmcp-add; do
  cargo build -q --release --manifest-path "tests/peers/$peer/Cargo.toml" --target-dir target/peers
done
ours=target/peers/release/ours-add
peer=target/peers/release/rmcp-add
out=$(mktemp -d)
driver=tests/python/mcp_instructions.py
# Our server's access log is off, as the peer has none.
export RUST_LOG=warn

total() { sed -n 's/^summary: *//p' "$1"; }

stdio() { # name, server command...
  local name=$1
  shift
  for n in 200 1200; do
    python3 "$driver" stdio "$n" valgrind --tool=callgrind \
      --callgrind-out-file="$out/stdio-$name-$n.out" "$@"
  done
  echo $((($(total "$out/stdio-$name-1200.out") - $(total "$out/stdio-$name-200.out")) / 1000))
}

over_http() { # name, server command...
  local name=$1
  shift
  valgrind --tool=callgrind --callgrind-out-file="$out/http-$name.%p" "$@" >"$out/$name.log" 2>&1 &
  local pid=$!
  local url=""
  for _ in $(seq 1 600); do
    url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$out/$name.log" | head -1)
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "$name did not start" >&2; cat "$out/$name.log" >&2; exit 1; }
  local hostport=${url#http://}
  hostport=${hostport%%/*}
  python3 "$driver" http "${hostport%:*}" "${hostport##*:}" 1000 "$pid"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  mv "$out"/http-"$name".*.1 "$out/http-$name.out"
  echo $(($(total "$out/http-$name.out") / 1000))
}

s_ours=$(stdio ours "$ours" mcp)
s_peer=$(stdio rmcp "$peer" stdio)
h_ours=$(over_http ours "$ours" serve --addr 127.0.0.1:0)
h_peer=$(over_http rmcp "$peer")
row() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%-20s %9d %9d   %.2fx\n", n, a, b, a / b }'; }
printf '%-20s %9s %9s   %s\n' "instructions/call" "ours" "rmcp" "ours/rmcp"
row "stdio" "$s_ours" "$s_peer"
row "streamable HTTP" "$h_ours" "$h_peer"
echo "callgrind files: $out"
