"""Drawn parts of the list page, kept once per revision of what they show.

- `{% event_card event saved_ids %}`: an event's card.
- the list's region (all of the page but its messages): Django's own `{% cache %}` in
  templates/events/event_list.html, varying on `REGION_VARY` (`region_vary` makes the values, and
  `region_key` the key the view reads it by first, to skip the search it would draw).

Drawing ten cards was most of a list page's time (bench/README.md, "Pages"), and the same cards are
drawn again for every visitor and every search that lists them. So a drawn part is kept in the
`pages` cache (settings.PAGE_CACHE; the list template's `{% cache %}` names it too) under a key made
of everything its HTML depends on: for a card, its own fields, its seats (confirmed and held),
whether this visitor saved it, the list's query its link carries back; for every part, the
language, the time zone and the running code. A change to any of them is a new key, so a kept part
can never be out of date: nothing has to be invalidated, and an old key simply ages out.

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
from django.core.cache.utils import make_template_fragment_key
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


#: What the list's drawn region varies on, in the order its `{% cache %}` tag names them
#: (templates/events/event_list.html): the URL (the form, the conditions, the page), the visitor and
#: their state (saves: the cards' badges; the manifest), the catalogue's revision (its events, seats
#: and clock), and what every part depends on besides.
REGION_VARY = ("path", "visitor", "state", "catalogue", "code", "language", "zone")
REGION_FRAGMENT = "list-region"


def region_vary(*, path: str, visitor_key: str, state: dict[str, Any], catalogue: Any) -> dict[str, str]:
    """The values of the list region's vary-on list, by name."""
    return {
        "path": path,
        "visitor": visitor_key,
        "state": repr(sorted(state.items())),
        "catalogue": repr(catalogue),
        "code": revision(),
        "language": translation.get_language() or "",
        "zone": timezone.get_current_timezone_name(),
    }


def region_key(vary: dict[str, str]) -> str:
    """The key Django's `{% cache %}` tag keeps the region under for these values."""
    return make_template_fragment_key(REGION_FRAGMENT, [vary[name] for name in REGION_VARY])


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
