"""The bench's bulk load of Activity rows (`bench.tasks.activity_rows`, the dashboard's 1 000 000) writes
rows the site itself could have written: every column the model requires, counted into the day counts
the dashboard reads. It is one hand-written INSERT … SELECT per database, so a column added to the
model without a default fails here rather than in a long bench run."""

import pytest

from bench.tasks import DASHBOARD_TOKEN, activity_rows
from events.models import Activity, ActivityCount

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_the_bulk_load_writes_complete_rows_and_counts_them():
    assert activity_rows(200) == 200
    rows = Activity.objects.filter(visitor_token=DASHBOARD_TOKEN)
    assert rows.count() == 200
    assert set(rows.values_list("client", flat=True)) == {""}
    assert rows.filter(outcome="OK").exists() and rows.exclude(outcome="OK").exists()
    assert sum(ActivityCount.objects.values_list("calls", flat=True)) == 200
