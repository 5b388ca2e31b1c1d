"""A draft is not there for anyone but the admin: a conditional request for its id answers as for an
id that does not exist (404), on the page and on the API, whatever validator it sends."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.factories import EventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.mark.parametrize("path", ["/events/{id}/", "/api/events/{id}"])
@pytest.mark.parametrize("validator", ["*", '"anything"'])
def test_if_none_match_on_a_draft_is_the_404_of_a_missing_id(path, validator):
    EventFactory(public_id="evt-draft-one", draft=True)
    client = Client(headers={"Accept-Language": "en", "If-None-Match": validator})
    draft = client.get(path.format(id="evt-draft-one"))
    missing = client.get(path.format(id="evt-no-such-one"))
    assert (draft.status_code, missing.status_code) == (404, 404)
    assert "ETag" not in draft


@pytest.mark.parametrize("path", ["/events/{id}/", "/api/events/{id}"])
def test_if_none_match_star_on_a_published_event_is_still_304(path):
    EventFactory(public_id="evt-open-one")
    client = Client(headers={"Accept-Language": "en", "If-None-Match": "*"})
    assert client.get(path.format(id="evt-open-one")).status_code == 304
