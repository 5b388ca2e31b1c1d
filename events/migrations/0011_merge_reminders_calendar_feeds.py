# Reminders (0010_reminders) and calendar feeds (0010_calendar_feeds) were made side by side on 0009.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('events', '0010_calendar_feeds'),
        ('events', '0010_reminders'),
    ]

    operations = []
