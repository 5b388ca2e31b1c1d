"""A page's message (Django's messages) is kept for the person's next page, whatever the API and
/health were asked in between: those paths set up no message storage (core.middleware), and the
pages keep theirs."""

from __future__ import annotations

import pytest

from tests.factories import EventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.mark.parametrize("signed_in", [False, True], ids=["anonymous", "signed in"])
def test_a_pages_message_waits_through_api_calls_for_the_next_page(signed_in, en_client, signed_in_en_client):
    client = signed_in_en_client if signed_in else en_client
    event = EventFactory(public_id="evt-message-kept")
    saved = client.post(f"/events/{event.public_id}/save/")
    assert saved.status_code == 302
    for path in ("/api/events", f"/api/events/{event.public_id}", "/api/me/saved", "/health"):
        answer = client.get(path)
        assert answer.status_code == 200, path
        assert b"Saved. You can find it" not in answer.content
    page = client.get(saved["Location"]).content.decode()
    assert "Saved. You can find it under My events." in page
    assert "Saved. You can find it" not in client.get(saved["Location"]).content.decode()  # shown once
