"""Names for the two models that had only their class's: the admin lists them among the permissions.
No change to the tables."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("events", "0015_field_names"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="retiredeventid",
            options={"verbose_name": "retired event id", "verbose_name_plural": "retired event ids"},
        ),
        migrations.AlterModelOptions(
            name="visitorstate",
            options={"verbose_name": "visitor state", "verbose_name_plural": "visitor states"},
        ),
    ]
