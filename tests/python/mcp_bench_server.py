"""The benchmark peer: the same `add` tool served by the official Python SDK's `MCPServer`
over streamable HTTP (its defaults: sessions, SSE responses), on 127.0.0.1:PORT.

    python mcp_bench_server.py PORT
"""

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("python-bench", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


if __name__ == "__main__":
    server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
