"""What a restore says of the restored database's migrations (ops/backups.py `_migration_state`).

The events app's first twenty-two migrations are squashed into one (events/migrations/
0001_squashed_0022_…): a database made before the squash has the replaced ones recorded, and they are
still this code's, while a migration recorded by newer code is not.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder

from ops.backups import _migration_state

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_a_database_migrated_before_or_after_the_squash_is_up_to_date_and_fully_known():
    recorded = MigrationRecorder(connection).applied_migrations()
    assert ("events", "0001_squashed_0022_paid_events_ticket_types") in recorded
    assert ("events", "0021_paid_registrations") in recorded  # a squash records what it replaces
    assert _migration_state(connection) == (0, 0)

    MigrationRecorder.Migration.objects.filter(app="events", name__startswith="0001_squashed").delete()
    assert _migration_state(connection) == (0, 0)


def test_a_migration_of_newer_code_is_counted_as_unknown():
    MigrationRecorder.Migration.objects.create(app="events", name="0099_from_a_newer_revision")
    assert _migration_state(connection) == (0, 1)
