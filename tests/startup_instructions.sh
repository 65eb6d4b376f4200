#!/usr/bin/env bash
# Instructions to first output of `demo-app --json device-list` and of the hand-written clap +
# rusqlite binary, counted by callgrind (needs valgrind: apt-get install valgrind), on the same
# database as `cargo bench -p demo-app --bench startup` (20 paired devices, 5 pending codes).
# Exact and repeatable, where the bench's timings move by ±0.1 ms on this shared machine.
#
#   bash tests/startup_instructions.sh           # the dist profile (fat LTO: how binaries ship)
#   bash tests/startup_instructions.sh release   # the release profile
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-dist}
cargo build -q --profile "$profile" -p demo-app --bins
dir=target/$profile
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$work/bench.db
for i in $(seq 0 24); do
  code=$("$dir/demo-app" --db "$db" --json device-add | sed -n 's/.*"code":"\([0-9]*\)".*/\1/p')
  if [ "$i" -lt 20 ]; then
    "$dir/demo-app" --db "$db" device-pair --code "$code" --device-name "device-$i" >/dev/null
  fi
done
count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    sed -n 's/.*I *refs: *//p' | tr -d ,
}
relocs() { readelf -rW "$1" | grep -c R_X86_64_RELATIVE; }
ours=$(count "$dir/demo-app" --db "$db" --json device-list)
theirs=$(count "$dir/device-list-handwritten" --db "$db" --json)
printf '%-32s %10d instructions  %6d relative relocations\n' \
  "demo-app --json device-list" "$ours" "$(relocs "$dir/demo-app")" \
  "hand-written clap + rusqlite" "$theirs" "$(relocs "$dir/device-list-handwritten")"
awk -v a="$ours" -v b="$theirs" -v p="$profile" \
  'BEGIN { printf "ratio %.2fx (%s profile; the start-up target, <= 1.3x, is of the time)\n", a / b, p }'
