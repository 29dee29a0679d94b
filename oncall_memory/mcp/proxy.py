"""`oncall-memory mcp` while a service runs: the agent's stdio session is relayed to the service's own MCP
endpoint (`/mcp`, streamable HTTP, with the local token or the API token), since the service holds the store and a second
process cannot open it. The agent sees the same tools, the same answers and the same refusals as over
HTTP: tools, their calls and the resources are passed through as the service gives them.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


async def relay(base_url: str, token: str | None) -> None:
    """Serve stdio, answering each request by asking the service at `base_url`."""
    import httpx2  # the MCP SDK's own HTTP stack

    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with Client(streamable_http_client(f"{base_url.rstrip('/')}/mcp", http_client=http)) as service:

            async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
                return await service.list_tools(cursor=params.cursor if params else None)

            async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
                return await service.call_tool(params.name, params.arguments)

            async def list_resources(
                ctx: Any, params: types.PaginatedRequestParams | None
            ) -> types.ListResourcesResult:
                return await service.list_resources(cursor=params.cursor if params else None)

            async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
                return await service.read_resource(params.uri)

            info = service.server_info if hasattr(service, "server_info") else None
            server: Server[Any] = Server(
                getattr(info, "name", None) or "oncall-memory",
                version=getattr(info, "version", None) or "",
                instructions=getattr(service, "instructions", None),
                on_list_tools=list_tools,
                on_call_tool=call_tool,
                on_list_resources=list_resources,
                on_read_resource=read_resource,
            )
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())


def run(base_url: str, token: str | None) -> None:
    anyio.run(relay, base_url, token)
