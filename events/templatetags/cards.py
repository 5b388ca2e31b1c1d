"""Drawn parts of the list page, kept once per revision of what they show.

- `{% event_card event saved_ids %}`: an event's card.
- `{% kept key [html] %}…{% endkept %}`: a block, under a key its view made (`drawn_key`; none: drawn
  every time); `html`, when the view has already read the kept block, is used as it is.

Drawing ten cards was most of a list page's time (bench/README.md, "Pages"), and the same cards are
drawn again for every visitor and every search that lists them. So a drawn part is kept in the
`pages` cache (settings.PAGE_CACHE) under a key made of everything its HTML depends on: for a card,
its own fields, its seats (confirmed and held), whether this visitor saved it, the list's query its
link carries back; for every part, the language, the time zone and the running code. A change to any
of them is a new key, so a kept part can never be out of date: nothing has to be invalidated, and an
old key simply ages out.

A miss draws the part with the page's context, exactly as the template did without it (a card as
`{% include %}` did), so the HTML is the same with the cache and without it
(tests/pages/test_page_cache.py).
"""

from __future__ import annotations

import hashlib
from typing import Any

from django import template
from django.conf import settings
from django.core.cache import caches
from django.utils import timezone, translation
from django.utils.safestring import SafeString, mark_safe

from core.revision import revision

register = template.Library()

CARD_TEMPLATE = "events/includes/event_card.html"
#: What an event read for the list carries that its card does not show: left out of the key, so a
#: card is not drawn again because another event started to match the search.
NOT_SHOWN = frozenset({"_state", "total_matching", "visitor_saved"})


def drawn_key(kind: str, *parts: Any) -> str:
    """The cache key of a part drawn now from `parts`, with what every part's HTML depends on besides:
    the running code (templates), the language and the time zone."""
    material = (revision(), translation.get_language(), timezone.get_current_timezone_name(), parts)
    return f"{kind}:" + hashlib.blake2b(repr(material).encode(), digest_size=16).hexdigest()


def card_key(event: Any, *, saved: bool, from_query: str) -> str:
    """The cache key of `event`'s card as drawn now: a digest of everything the card's HTML can read.

    Every value the event was read with is in it (its fields and its seat counts, whatever the
    selector annotates), not a chosen list of fields, so a field added to the card later cannot be
    left out of the key."""
    return drawn_key("card", shown_values(event), saved, from_query)


def shown_values(event: Any) -> list[tuple[str, Any]]:
    """Every value `event` was read with that its card may show, in a stable order."""
    return sorted((name, value) for name, value in vars(event).items() if name not in NOT_SHOWN)


@register.simple_tag(takes_context=True)
def event_card(context: template.Context, event: Any, saved_ids: Any) -> SafeString:
    """The card of `event` on this page (`saved_ids`: the events this visitor saved)."""
    saved = event.public_id in saved_ids
    from_query = context.get("from_query")
    key = card_key(event, saved=saved, from_query=from_query.urlencode() if from_query else "")
    cache = caches[settings.PAGE_CACHE]
    html = cache.get(key)
    if html is None:
        if context.template is None:
            raise template.TemplateSyntaxError("event_card is drawn inside a template")
        card = context.template.engine.get_template(CARD_TEMPLATE)
        with context.push(event=event, saved_ids=saved_ids):
            html = card.render(context)
        cache.set(key, str(html))
    return mark_safe(html)  # the card template's own output, autoescaped as it was drawn


@register.tag("kept")
def kept(parser: template.base.Parser, token: template.base.Token) -> KeptNode:
    """`{% kept key [html] %}…{% endkept %}`: the block's HTML, kept under `key` (see the module)."""
    bits = token.split_contents()
    if len(bits) not in (2, 3):
        raise template.TemplateSyntaxError(f"{bits[0]} takes a key and, if read already, its HTML")
    nodelist = parser.parse(("endkept",))
    parser.delete_first_token()
    given = parser.compile_filter(bits[2]) if len(bits) == 3 else None
    return KeptNode(nodelist, parser.compile_filter(bits[1]), given)


class KeptNode(template.Node):
    def __init__(
        self,
        nodelist: template.NodeList,
        key: template.base.FilterExpression,
        given: template.base.FilterExpression | None,
    ) -> None:
        self.nodelist = nodelist
        self.key = key
        self.given = given

    def render(self, context: template.Context) -> SafeString:
        given = self.given.resolve(context, ignore_failures=True) if self.given else None
        if given is not None:
            return mark_safe(given)  # read from the cache by the view
        key = self.key.resolve(context)
        if not key:
            return self.nodelist.render(context)
        cache = caches[settings.PAGE_CACHE]
        html = cache.get(key)
        if html is None:
            html = self.nodelist.render(context)
            cache.set(key, str(html))
        return mark_safe(html)  # the block's own output, autoescaped as it was drawn
