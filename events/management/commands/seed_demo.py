"""`manage.py seed_demo`: load the demo catalogue and accounts from `events/demo_data.py`.

Idempotent: events are matched on `public_id` and saved only when a field differs, accounts are
created once (passwords are set only then), and a registration is created only when the user has
none for that event. A second run therefore changes nothing. Every row goes through `full_clean()`,
so the seed obeys the same validation as the admin, but for the table's check constraints, which the
database itself enforces at the INSERT (their checks in Python are a query each: half the seed's
time, and the test suite seeds often); a row that breaks one fails the command all the same.

The registrations are written directly rather than through `register_event`: that use case records
an Activity row and raises the visitor's stateVersion on every call, which would make a re-run change
the database, and the demo's history should start empty.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError, transaction

from events import demo_data, tickets
from events.choices import PaymentMethod, PaymentStatus, RegistrationStatus
from events.models import Event, Question, QuestionOption, Registration, TicketType
from events.services.ledger import recount_seats


class Command(BaseCommand):
    help = "Create or update the demo events and accounts (safe to run again)."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            with transaction.atomic():
                events = self.seed_events()
                self.seed_questions()
                self.seed_ticket_types()
                users = self.seed_users()
                registrations = self.seed_registrations()
                registrations += self.seed_pending_payments()
        except (ValidationError, IntegrityError) as error:
            raise CommandError(f"Demo data does not validate: {error}") from error
        created, updated, unchanged = events
        self.stdout.write(
            self.style.SUCCESS(f"{created} events created, {updated} updated, {unchanged} unchanged.")
        )
        self.stdout.write(f"{users} users created, {registrations} registrations created.")

    def seed_events(self) -> tuple[int, int, int]:
        created = updated = unchanged = 0
        for data in demo_data.DEMO_EVENTS:
            fields = {name: value for name, value in data.items() if name != "public_id"}
            event = Event.objects.filter(public_id=data["public_id"]).first()
            if event is None:
                event = Event(public_id=data["public_id"], **fields)
                created += 1
            else:
                changed = [name for name, value in fields.items() if getattr(event, name) != value]
                if not changed:
                    unchanged += 1
                    continue
                for name in changed:
                    setattr(event, name, fields[name])
                updated += 1
            try:
                event.full_clean(validate_constraints=False)
            except ValidationError as error:
                raise CommandError(f"{data['public_id']}: {error}") from error
            event.save()
        return created, updated, unchanged

    def seed_questions(self) -> None:
        """The demo events' registration questions and approval (demo_data.DEMO_QUESTIONS, DEMO_APPROVAL),
        matched on the question's and the option's identifier, so a second run changes nothing."""
        Event.objects.filter(public_id__in=demo_data.DEMO_APPROVAL, requires_approval=False).update(
            requires_approval=True
        )
        for public_id, questions in demo_data.DEMO_QUESTIONS.items():
            event = Event.objects.get(public_id=public_id)
            for position, data in enumerate(questions):
                fields = {k: v for k, v in data.items() if k not in ("identifier", "options", "show_if")}
                question = Question.objects.filter(event=event, identifier=data["identifier"]).first()
                if question is None:
                    question = Question(
                        event=event, identifier=data["identifier"], position=position, **fields
                    )
                    if "show_if" in data:
                        parent, values = data["show_if"]
                        question.show_if = Question.objects.get(event=event, identifier=parent)
                        question.show_if_values = values
                    question.full_clean(validate_constraints=False)
                    question.save()
                for option_position, option in enumerate(data.get("options", [])):
                    if not QuestionOption.objects.filter(
                        question=question, identifier=option["identifier"]
                    ).exists():
                        row = QuestionOption(question=question, position=option_position, **option)
                        row.full_clean(validate_constraints=False)
                        row.save()

    def seed_ticket_types(self) -> None:
        """The paid demo events' payment settings and ticket types (demo_data.DEMO_PAYMENT_EVENTS,
        DEMO_TICKET_TYPES), matched on the type's identifier: a second run changes nothing. Each new
        type reaches its event's ticket form and price summary (events/signals.py)."""
        for public_id, fields in demo_data.DEMO_PAYMENT_EVENTS.items():
            Event.objects.filter(public_id=public_id).update(**fields)
        for public_id, types in demo_data.DEMO_TICKET_TYPES.items():
            event = Event.objects.get(public_id=public_id)
            for position, data in enumerate(types):
                if TicketType.objects.filter(event=event, identifier=data["identifier"]).exists():
                    continue
                row = TicketType(event=event, position=position, **data)
                row.full_clean()
                row.save()

    def seed_pending_payments(self) -> int:
        """Registrations waiting for their transfer (demo_data.DEMO_PENDING_PAYMENTS), each holding its
        seat until its event's last payment time, with its fixed reference."""
        User = get_user_model()
        created = 0
        for username, public_id, ticket_type, reference in demo_data.DEMO_PENDING_PAYMENTS:
            user = User.objects.get(username=username)
            event = Event.objects.get(public_id=public_id)
            if Registration.objects.filter(user=user, event=event).exists():
                continue
            [spec] = [t for t in tickets.types_of(event) if t.identifier == ticket_type]
            registration = Registration(
                user=user,
                event=event,
                status=RegistrationStatus.PENDING_PAYMENT,
                ticket_type=spec.identifier,
                amount=spec.price,
                payment_method=PaymentMethod.BANK_TRANSFER,
                payment_status=PaymentStatus.AWAITING,
                payment_reference=reference,
                payment_due_at=event.last_payment_at(),
            )
            registration.full_clean()
            registration.save()
            recount_seats(Event.objects.filter(pk=event.pk))
            created += 1
        return created

    def seed_users(self) -> int:
        User = get_user_model()
        created = 0
        for data in demo_data.DEMO_USERS:
            if User.objects.filter(username=data["username"]).exists():
                continue
            fields = {name: value for name, value in data.items() if name != "password"}
            user = User(**fields)
            if data["password"] is None:
                user.set_unusable_password()
            else:
                user.set_password(data["password"])
            user.full_clean()
            user.save()
            created += 1
        return created

    def seed_registrations(self) -> int:
        User = get_user_model()
        created = 0
        for username, public_id in demo_data.DEMO_REGISTRATIONS:
            user = User.objects.get(username=username)
            event = Event.objects.get(public_id=public_id)
            if Registration.objects.filter(user=user, event=event).exists():
                continue
            registration = Registration(user=user, event=event)
            registration.full_clean(validate_constraints=False)
            registration.save()
            created += 1
        return created
