"""An index on the events' newest change: every API search reads MAX(updated_at) for its ETag
(selectors.search_revision), one probe of this index instead of a pass over the table."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("events", "0016_model_names"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="event",
            index=models.Index(fields=["updated_at"], name="event_updated"),
        ),
    ]
