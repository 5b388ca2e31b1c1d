"""What the registry needs to know about the named URLs that tool declarations refer to.

Declarations name routes and endpoints by URL name, so a typo must be caught at start-up (the
checks), and the browser runtime must learn an endpoint's path without hard-coding it: it gets a
template such as "/api/items/{item_id}" and fills the braces from the tool input.
"""

from __future__ import annotations

import itertools
from typing import Any

from django.urls import NoReverseMatch, get_resolver, get_urlconf, reverse


def _reverse_entries(url_name: str) -> list[tuple[Any, ...]] | None:
    """The resolver's reverse-table entries of `url_name` ((possibilities, pattern, defaults,
    converters) each); None when no pattern has the name.

    Read from the resolver's reverse table rather than by calling `reverse()`, because a name whose
    pattern takes kwargs cannot be reversed without values and must still count as existing.
    """
    resolver = get_resolver(get_urlconf())
    *namespaces, name = url_name.split(":")
    for namespace in namespaces:
        if namespace not in resolver.namespace_dict and namespace in resolver.app_dict:
            namespace = resolver.app_dict[namespace][0]  # an application namespace: its default instance
        if namespace not in resolver.namespace_dict:
            return None
        resolver = resolver.namespace_dict[namespace][1]
    entries = resolver.reverse_dict.getlist(name)
    return list(entries) or None


def url_parameter_sets(url_name: str) -> list[tuple[str, ...]] | None:
    """The kwarg names of every pattern registered under `url_name`; None when no pattern has it."""
    entries = _reverse_entries(url_name)
    if entries is None:
        return None
    return [tuple(params) for possibilities, *_ in entries for _result, params in possibilities]


def url_converters(url_name: str) -> dict[str, Any]:
    """The path converter of each kwarg of `url_name` (the first pattern's that takes it), e.g.
    {"book_id": IntConverter()}: what a value must look like. Empty when the name is unknown."""
    converters: dict[str, Any] = {}
    for entry in _reverse_entries(url_name) or ():
        for kwarg, converter in entry[3].items():
            converters.setdefault(kwarg, converter)
    return converters


def url_parameters(url_name: str) -> frozenset[str]:
    """Every kwarg name any pattern of `url_name` takes (empty when the name is unknown)."""
    return frozenset(itertools.chain.from_iterable(url_parameter_sets(url_name) or ()))


def _placeholders(index: int) -> tuple[str, ...]:
    """Values that satisfy the built-in converters (str/slug/path, int, uuid) and occur nowhere else."""
    return (
        f"webmcpparam{index:03d}x",
        f"{9_173_005_280_000 + index}",
        f"00000000-0000-4000-8000-{index:012d}",
    )


def url_template(url_name: str) -> str:
    """The path of `url_name` with each kwarg shown as `{kwarg}`, e.g. "/api/items/{item_id}".

    Reverses with placeholder values (so the script prefix and any include prefixes are applied
    exactly as Django would) and then swaps each placeholder for its brace.
    """
    for params in url_parameter_sets(url_name) or ():
        candidates = [_placeholders(index) for index in range(len(params))]
        for values in itertools.product(*candidates):
            try:
                url = reverse(url_name, kwargs=dict(zip(params, values, strict=True)))
            except NoReverseMatch:
                continue
            for param, value in zip(params, values, strict=True):
                url = url.replace(value, "{" + param + "}")
            return url
    raise NoReverseMatch(f"Cannot build a URL template for {url_name!r}.")
