"""Existing paid events get one ticket type at their current price (what each registration of them
took), written to their `ticket_form` as the signal would; free events keep their implicit type."""

from django.db import migrations


def one_type_per_paid_event(apps, schema_editor):
    Event = apps.get_model("events", "Event")
    TicketType = apps.get_model("events", "TicketType")
    Registration = apps.get_model("events", "Registration")
    for event in Event.objects.filter(price="paid", price_amount__isnull=False).iterator():
        if TicketType.objects.filter(event=event).exists():
            continue
        price = int(event.price_amount)
        TicketType.objects.create(
            event=event, position=0, identifier="regular", name_en="Regular", name_zh_hant="一般", price=price
        )
        form = [
            {
                "identifier": "regular",
                "name": {"en": "Regular", "zh-hant": "一般"},
                "price": price,
                "salesStart": None,
                "salesEnd": None,
                "cap": None,
            }
        ]
        Event.objects.filter(pk=event.pk).update(ticket_form=form, currency="TWD")
        Registration.objects.filter(event=event).update(ticket_type="regular")


class Migration(migrations.Migration):
    dependencies = [("events", "0021_paid_registrations")]

    operations = [migrations.RunPython(one_type_per_paid_event, migrations.RunPython.noop)]
