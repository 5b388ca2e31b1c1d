"""`Event.seats_taken`: confirmed plus held seats, kept by the seat ledger so that a registration takes
a seat with one conditional UPDATE and a full event refuses without waiting for its row lock. Filled
here for the events that exist (one UPDATE; the same count as `EventQuerySet.with_seats`)."""

from django.db import migrations, models
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce


def count_seats(apps, schema_editor):
    Event = apps.get_model("events", "Event")
    Registration = apps.get_model("events", "Registration")
    WaitlistEntry = apps.get_model("events", "WaitlistEntry")

    def counted(rows):
        per_event = rows.filter(event=OuterRef("pk")).order_by().values("event").annotate(n=Count("pk"))
        return Coalesce(Subquery(per_event.values("n"), output_field=models.IntegerField()), 0)

    Event.objects.update(
        seats_taken=counted(Registration.objects.filter(status="confirmed"))
        + counted(WaitlistEntry.objects.filter(status="offered"))
    )


class Migration(migrations.Migration):
    dependencies = [
        ("events", "0013_activity_counted"),
    ]

    operations = [
        migrations.AddField(
            model_name="event",
            name="seats_taken",
            field=models.PositiveIntegerField(default=0, editable=False, verbose_name="seats taken"),
        ),
        migrations.RunPython(count_seats, migrations.RunPython.noop, elidable=True),
    ]
