"""Sends `POST /tools/add` over one kept-alive connection for `tests/http_instructions.sh`:
50 warm-up requests, then the callgrind counters of the server (PID) zeroed, N requests, and
the counters dumped.

    http_instructions.py HOST PORT N PID
"""

import http.client
import subprocess
import sys


def main(host, port, n, pid):
    conn = http.client.HTTPConnection(host, port, timeout=600)

    def send(count):
        for _ in range(count):
            conn.request(
                "POST", "/tools/add", '{"a": 20, "b": 22}', {"content-type": "application/json"}
            )
            response = conn.getresponse()
            body = response.read()
            assert response.status == 200, body

    send(50)
    subprocess.run(["callgrind_control", "-z", pid], check=True, capture_output=True)
    send(n)
    subprocess.run(["callgrind_control", "-d", pid], check=True, capture_output=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
