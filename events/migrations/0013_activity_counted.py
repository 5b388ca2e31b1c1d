"""`Activity.counted`: a write's row is inserted in the write's own transaction, not yet counted, and
counted soon after (events/activity.py). The rows already there are counted (the column's default, in
the database too, so a bulk load by SQL is a counted row as before: `recount` counts it). On PostgreSQL
adding a column with a constant default rewrites nothing; the partial index holds only the few rows
waiting to be counted."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("events", "0012_keyword_gram_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="activity",
            name="counted",
            field=models.BooleanField(db_default=True, default=True),
        ),
        migrations.AddIndex(
            model_name="activity",
            index=models.Index(
                condition=models.Q(("counted", False)), fields=["id"], name="activity_uncounted"
            ),
        ),
    ]
