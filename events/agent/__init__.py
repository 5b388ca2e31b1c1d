"""Agents: tool calls on the page routes (`pages`) and over MCP (`mcp`). Each performs the action row
of its tool's name, as the pages and the API do; the page's region is redrawn by `events.web.builders`."""
