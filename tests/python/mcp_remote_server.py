"""A server built with the official Python MCP SDK (`MCPServer`), mounted by the tests of
`mcp::RemoteServer` (tests/tests/suite/remote.rs) over stdio:

- `grow()` adds the tool `grown` and tells the client its tool list changed;
- a tool whose name is 70 characters long, past the 64 the registry allows, so the registry
  shortens `{component}-{name}` with a hash;
- `fail(text)` answers with an error result.

    python mcp_remote_server.py
"""

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("python-remote", log_level="WARNING")

LONG = "a_tool_whose_name_is_much_longer_than_the_registry_allows_" + "x" * 12


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `grown`, then tells the client the tool list changed."""

    def grown() -> str:
        """A tool added at run time."""
        return "I grew"

    server.add_tool(grown, name="grown")
    # On protocol 2026-07-28, to `subscriptions/listen` streams; before, unasked.
    await ctx.notify_tools_changed()
    await ctx.session.send_tool_list_changed()
    return "added `grown`"


def long_named() -> str:
    """A tool with a 70-character name."""
    return "long"


server.add_tool(long_named, name=LONG)


@server.tool()
def fail(text: str) -> str:
    """Fails with `text`."""
    raise ToolError(text)


if __name__ == "__main__":
    assert len(LONG) == 70
    server.run(transport="stdio")
