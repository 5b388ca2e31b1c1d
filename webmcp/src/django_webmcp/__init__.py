"""Generic WebMCP layer: tool registry, schema generation, per-route manifests, template tags and the
one browser runtime. It knows nothing about the apps whose tools it serves."""
