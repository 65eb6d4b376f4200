#!/usr/bin/env bash
# Throughput of `demo-app serve` behind nginx with 1, 2 and 3 replicas, beside one replica
# called directly, in one run (needs `nginx` and `wrk`: apt-get install nginx wrk).
#
#   bash tests/replicas_throughput.sh [DEMO_APP_BINARY]
#
# Three replicas of the release build (or the binary given), each in a working directory of
# its own (its own SQLite database), with the in-memory defaults and `RUST_LOG=warn`; three
# nginx instances, each on the shipped demo-app/deploy/nginx.conf with its upstreams cut to the
# first 1, 2 or 3 replicas and its ports moved to free ones. `wrk` (one thread, C connections)
# posts `{}` to the read-only `device_list` for S seconds against each of the four targets in
# turn, the order rotated each round; calls/s is the median over the rounds, a ratio the median
# of the per-round ratios to the direct target. Every answer must be 2xx.
#
# Environment: REPLICAS_BENCH_SECONDS (S, default 5), REPLICAS_BENCH_CONNECTIONS (C, 32),
# REPLICAS_BENCH_ROUNDS (3), REPLICAS_BENCH_KEEPALIVE (N: `keepalive N;` added to every
# upstream, so nginx reuses its connections to the replicas; the shipped site opens one per
# request, so that a stopping replica refuses a connection rather than drop a request sent on
# one).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${REPLICAS_BENCH_SECONDS:-5}
connections=${REPLICAS_BENCH_CONNECTIONS:-32}
rounds=${REPLICAS_BENCH_ROUNDS:-3}
keepalive=${REPLICAS_BENCH_KEEPALIVE:-}

nginx_bin=$(command -v nginx || true)
[ -z "$nginx_bin" ] && [ -x /usr/sbin/nginx ] && nginx_bin=/usr/sbin/nginx
[ -n "$nginx_bin" ] || { echo "nginx is needed: apt-get install nginx" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install wrk" >&2; exit 1; }
if [ $# -ge 1 ]; then
  bin=$(realpath "$1")
else
  cargo build -q --release -p demo-app
  bin=$(realpath "${CARGO_TARGET_DIR:-target}/release/demo-app")
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/replicas-throughput.XXXXXX")
declare -a replica_pids=()
cleanup() {
  for dir in "$work"/nginx-*; do
    [ -f "$dir/nginx.pid" ] && "$nginx_bin" -p "$dir" -c "$dir/nginx.conf" -s stop 2>/dev/null
  done
  for pid in "${replica_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_ready() { # url what
  for _ in $(seq 1 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$1/readyz")" = 200 ] && return 0
    sleep 0.1
  done
  echo "$2 did not answer $1/readyz with 200 within 10 s" >&2
  exit 1
}

declare -a port=()
for i in 1 2 3; do
  port[i]=$(free_port)
  mkdir "$work/r$i"
  (cd "$work/r$i" && RUST_LOG=warn exec "$bin" serve --addr "127.0.0.1:${port[i]}" \
    --replica-id "r$i" >"$work/r$i/log" 2>&1) &
  replica_pids+=($!)
done
for i in 1 2 3; do wait_ready "http://127.0.0.1:${port[i]}" "replica r$i"; done

# The shipped site with the upstreams of replicas above $1 taken out and the ports moved.
site() { # replicas listen-port
  local script="s/listen 127\.0\.0\.1:8080;/listen 127.0.0.1:$2;/"
  for ((j = $1 + 1; j <= 3; j++)); do
    script+=";/^upstream r$j {/,/^}/d;/~\\^r$j\\\\\\./d;/127\\.0\\.0\\.1:808$j /d"
  done
  for ((j = 1; j <= $1; j++)); do
    script+=";s/127\\.0\\.0\\.1:808$j /127.0.0.1:${port[j]} /"
  done
  if [ -n "$keepalive" ]; then
    script+=";s/^upstream \\(.*\\) {\$/upstream \\1 {\\n    keepalive $keepalive;/"
  fi
  sed -e "$script" demo-app/deploy/nginx.conf
}

declare -a nginx_port=()
for k in 1 2 3; do
  dir="$work/nginx-$k"
  mkdir "$dir"
  nginx_port[k]=$(free_port)
  site "$k" "${nginx_port[k]}" >"$dir/site.conf"
  cat >"$dir/nginx.conf" <<EOF
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 1024; }
http {
  access_log $dir/access.log;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  include $dir/site.conf;
}
EOF
  "$nginx_bin" -p "$dir" -c "$dir/nginx.conf" -q
  wait_ready "http://127.0.0.1:${nginx_port[k]}" "nginx with $k replicas"
done

cat >"$work/post.lua" <<'EOF'
wrk.method = "POST"
wrk.body = "{}"
wrk.headers["Content-Type"] = "application/json"
EOF

names=("direct to one replica" "nginx, 1 replica" "nginx, 2 replicas" "nginx, 3 replicas")
targets=("http://127.0.0.1:${port[1]}" "http://127.0.0.1:${nginx_port[1]}" \
         "http://127.0.0.1:${nginx_port[2]}" "http://127.0.0.1:${nginx_port[3]}")

measure() { # target seconds -> calls/s
  local out
  out=$(wrk -t1 -c"$connections" -d"${2}s" -s "$work/post.lua" "$1/tools/device_list")
  if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then
    echo "errors against $1:" >&2
    echo "$out" >&2
    exit 1
  fi
  awk '/^Requests\/sec:/ { print $2 }' <<<"$out"
}

for t in 0 1 2 3; do measure "${targets[t]}" 1 >/dev/null; done # warm-up
declare -a results=() # results[round*4 + target]
for ((r = 0; r < rounds; r++)); do
  for ((n = 0; n < 4; n++)); do
    t=$(((n + r) % 4))
    results[r * 4 + t]=$(measure "${targets[t]}" "$seconds")
  done
  echo "round $((r + 1)): ${results[*]:r*4:4}" >&2
done

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "demo-app serve, POST /tools/device_list, wrk -t1 -c$connections -d${seconds}s, $rounds rounds (median; ratio to direct: median of the rounds' ratios)${keepalive:+; nginx keepalive $keepalive}"
for t in 0 1 2 3; do
  rate=$(for ((r = 0; r < rounds; r++)); do echo "${results[r * 4 + t]}"; done | median)
  ratio=$(for ((r = 0; r < rounds; r++)); do
    awk -v a="${results[r * 4 + t]}" -v d="${results[r * 4]}" 'BEGIN { print a / d }'
  done | median)
  printf '%-24s %9.0f calls/s  %5.2fx\n' "${names[t]}" "$rate" "$ratio"
done
