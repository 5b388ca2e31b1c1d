"""Sessions move to Django's own table (`django.contrib.sessions`, read through the cache by the
`cached_db` engine): each live session is copied with its key, so nobody is signed out, and the
account's own session table goes.

A session signed in through the backend the site used before names it in its data; that name is
rewritten to Django's `ModelBackend`, which is what it was. A row whose data cannot be read (signed
with another key) is not copied: it was already no session.
"""

from django.db import migrations
from django.utils import timezone

OLD_BACKEND = "accounts.backends.SessionUserBackend"
BACKEND = "django.contrib.auth.backends.ModelBackend"


def copy_live_sessions(apps, schema_editor):
    from django.contrib.auth import BACKEND_SESSION_KEY  # noqa: PLC0415 (used by this step only)
    from django.contrib.sessions.backends.db import SessionStore  # noqa: PLC0415 (used by this step only)

    old = apps.get_model("accounts", "Session")
    new = apps.get_model("sessions", "Session")
    codec = SessionStore()
    batch = []
    for row in old.objects.filter(expire_date__gt=timezone.now()).iterator(chunk_size=1000):
        data = codec.decode(row.session_data)
        if not data:
            continue
        if data.get(BACKEND_SESSION_KEY) == OLD_BACKEND:
            data[BACKEND_SESSION_KEY] = BACKEND
        batch.append(
            new(session_key=row.session_key, session_data=codec.encode(data), expire_date=row.expire_date)
        )
        if len(batch) >= 1000:
            new.objects.bulk_create(batch, ignore_conflicts=True)
            batch = []
    new.objects.bulk_create(batch, ignore_conflicts=True)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0005_access_token_user_name"),
        ("sessions", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(copy_live_sessions, migrations.RunPython.noop),
        migrations.DeleteModel(name="Session"),
    ]
