"""Resident memory of `demo-app serve` under waves of bare MCP `initialize` posts.

Each wave posts 600 `initialize` requests to /mcp (32 at a time) and never finishes a
handshake, so the server opens sessions up to its cap, refuses the rest with 503, and closes
the open ones when their handshake deadline (10 s) passes. After each wave and that deadline
the server's resident memory is read from /proc. Memory that grows wave after wave would be
kept by closed sessions; a plateau is memory reused.

    cargo build -p demo-app
    .venv/bin/python tests/mcp_sessions_memory.py [target/debug/demo-app] [waves]
"""

import concurrent.futures
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time

BINARY = sys.argv[1] if len(sys.argv) > 1 else "target/debug/demo-app"
WAVES = int(sys.argv[2]) if len(sys.argv) > 2 else 5
PER_WAVE = 600

INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"},
        },
    }
)


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def post(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(
            "POST",
            "/mcp",
            INITIALIZE,
            {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
        )
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        server = subprocess.Popen(
            [BINARY, "--db", os.path.join(tmp, "probe.db"), "serve", "--addr", "127.0.0.1:0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            # The first line the server prints holds its address.
            first = server.stdout.readline()
            port = int(first.strip().rsplit(":", 1)[1].split("/")[0])
            time.sleep(0.5)
            print(f"start: {rss_mib(server.pid):.0f} MiB")
            with concurrent.futures.ThreadPoolExecutor(32) as pool:
                for wave in range(1, WAVES + 1):
                    statuses = list(pool.map(post, [port] * PER_WAVE))
                    opened = statuses.count(200)
                    refused = statuses.count(503)
                    other = sorted(s for s in statuses if s not in (200, 503))
                    peak = rss_mib(server.pid)
                    time.sleep(12)  # past the 10 s handshake deadline: every session closed
                    print(
                        f"wave {wave}: {opened} opened, {refused} refused (503), other: {other or 'none'};"
                        f" {peak:.0f} MiB at its end, {rss_mib(server.pid):.0f} MiB once closed"
                    )
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
