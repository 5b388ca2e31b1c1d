"""`manage.py webmcp_catalog [--route PATH]`: the tool catalogue as JSON.

The output is the `{"tools": [{name, description, inputSchema}]}` file that Google's webmcp-evals
CLI reads in `local` mode, so an eval can run against the declarations without a browser, and a
reviewer can diff what an agent will see on a route.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import Resolver404, resolve

from django_webmcp import registry as registry_module


class Command(BaseCommand):
    help = "Print the WebMCP tool catalogue (all tools, or those a route can offer) as JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--route",
            metavar="PATH",
            help="A page path such as /items/item-1/: print only the tools that page can offer.",
        )

    def handle(self, *args: Any, route: str | None = None, **options: Any) -> None:
        registry = registry_module.registry  # looked up now, so tests can swap the registry
        if route is None:
            catalogue = registry.catalogue()
        else:
            path = urlsplit(route).path or "/"
            try:
                match = resolve(path)
            except Resolver404 as exc:
                raise CommandError(f"No page matches the path {path!r}.") from exc
            catalogue = registry.catalogue(match.view_name) if match.url_name else {"tools": []}
        self.stdout.write(json.dumps(catalogue, indent=2, ensure_ascii=False))
