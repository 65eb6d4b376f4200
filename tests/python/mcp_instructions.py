"""Drives an MCP server for `tests/mcp_instructions.sh`: `add` called N times, one call at a
time, over stdio (the server is started here) or over streamable HTTP (one session).

    mcp_instructions.py stdio N COMMAND...
    mcp_instructions.py http HOST PORT N PID   (callgrind counters of PID zeroed after the
                                                warm-up calls and dumped after the N calls)
"""

import http.client
import json
import subprocess
import sys

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "mcp-instructions", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
WARM_UP = 50


def call(i):
    return {
        "jsonrpc": "2.0",
        "id": i + 1,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 20, "b": i}},
    }


def stdio(n, command):
    server = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )

    def send(message):
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()

    send(INITIALIZE)
    server.stdout.readline()
    send(INITIALIZED)
    for i in range(n):
        send(call(i))
        line = server.stdout.readline()
        assert b'"result"' in line, line
    server.stdin.close()
    server.wait()


def over_http(host, port, n, pid):
    conn = http.client.HTTPConnection(host, port, timeout=600)
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}

    def post(message, session=None):
        h = dict(headers)
        if session:
            h["mcp-session-id"] = session
            h["mcp-protocol-version"] = "2025-11-25"
        conn.request("POST", "/mcp", json.dumps(message), h)
        response = conn.getresponse()
        return response, response.read()

    response, _ = post(INITIALIZE)
    session = response.getheader("mcp-session-id")
    post(INITIALIZED, session)

    def calls(count, first):
        for i in range(first, first + count):
            _, body = post(call(i), session)
            assert b'"result":' in body, body

    calls(WARM_UP, 0)
    subprocess.run(["callgrind_control", "-z", pid], check=True, capture_output=True)
    calls(n, WARM_UP)
    subprocess.run(["callgrind_control", "-d", pid], check=True, capture_output=True)


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        stdio(int(sys.argv[2]), sys.argv[3:])
    else:
        over_http(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
