"""`{% event_card event saved_ids %}`: an event's card on the list, drawn once per revision of what it shows.

Drawing ten cards was most of a list page's time (bench/README.md, "Pages"), and the same cards are
drawn again for every visitor and every search that lists them. So a drawn card is kept in the
`pages` cache under a key made of everything its HTML depends on: the card's own fields, its seats
(confirmed and held), whether this visitor saved it, the list's query its link carries back, the
language, the time zone and the running code. A change to any of them is a new key, so a kept card
can never be out of date: nothing has to be invalidated, and an old key simply ages out.

A miss draws `events/includes/event_card.html` with the page's context, exactly as `{% include %}`
did, so the HTML is the same with the cache and without it (tests/pages/test_page_cache.py).
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


def card_key(event: Any, *, saved: bool, from_query: str) -> str:
    """The cache key of `event`'s card as drawn now: a digest of everything the card's HTML can read.

    Every value the event was read with is in it (its fields and its seat counts, whatever the
    selector annotates), not a chosen list of fields, so a field added to the card later cannot be
    left out of the key."""
    values = sorted((name, value) for name, value in vars(event).items() if name not in NOT_SHOWN)
    material = (
        revision(),
        translation.get_language(),
        timezone.get_current_timezone_name(),
        values,
        saved,
        from_query,
    )
    return "card:" + hashlib.blake2b(repr(material).encode(), digest_size=16).hexdigest()


@register.simple_tag(takes_context=True)
def event_card(context: template.Context, event: Any, saved_ids: Any) -> SafeString:
    """The card of `event` on this page (`saved_ids`: the events this visitor saved)."""
    saved = event.public_id in saved_ids
    from_query = context.get("from_query")
    key = card_key(event, saved=saved, from_query=from_query.urlencode() if from_query else "")
    cache = caches[settings.PAGE_CACHE]
    html = cache.get(key)
    if html is None:
        card = context.template.engine.get_template(CARD_TEMPLATE)
        with context.push(event=event, saved_ids=saved_ids):
            html = card.render(context)
        cache.set(key, str(html))
    return mark_safe(html)  # the card template's own output, autoescaped as it was drawn
