"""Pages for people: the interface beside `api/` (programs) and `agent/` (tool calls, MCP).

`views` draws the catalogue, an event and My events; `door` is the check-in page for the event's
staff; `feeds` answers calendar programs (a person's secret feed and the public search feed). Each
write performs one action row (`events.actions`) and each read goes through the selectors."""
