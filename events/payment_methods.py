"""How a paid registration is paid: one small provider per method (layer 1: no queries, no network).

Shaped like django-payments' `BasicProvider` so that a real processor can take a method's place later
without the use cases changing: a provider says how a payment starts (`start`: the registration's
status, its payment's status and deadline), what the person is told (`instructions`), what a
confirmation makes of it (`confirm`), whether it expires (`expires`) and what a refund records
(`refund`). The use cases (events/services/payments.py) apply what a provider says, under the
registration's row lock; providers never touch the database and never call out.

- `bank_transfer`: the seat is held until the deadline; the organisers confirm the money (by hand or
  from the bank statement); the bank details come from the settings (PAYMENT_BANK_*).
- `at_door`: confirmed at once, the amount due at the door; the check-in records the payment.
- `dummy`: confirms at once without a gateway, for tests only (PAYMENT_METHODS must name it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar

from django.conf import settings

from .choices import PaidVia, PaymentMethod, PaymentStatus, RegistrationStatus
from .errors import PaymentClosed, PaymentMethodUnavailable


@dataclass(frozen=True)
class Start:
    """How a payment begins: the registration's status, its payment's, and the deadline (if any)."""

    status: str
    payment_status: str
    due_at: datetime | None = None
    #: The provider took the money already (a processor): paid from the start.
    paid_via: str = ""

    @property
    def confirmed(self) -> bool:
        return self.status == RegistrationStatus.CONFIRMED


class Provider:
    """One payment method. Subclasses say how their payments start and what the person reads."""

    method: ClassVar[str]

    def start(self, *, amount: int, last_payment_at: datetime, now: datetime) -> Start:
        raise NotImplementedError

    def instructions(self) -> dict[str, Any]:
        """What the person needs to pay (no personal data: the same for everyone of the event)."""
        return {}

    @property
    def expires(self) -> bool:
        """Whether an unpaid payment of this method ends at its deadline (the sweep)."""
        return False

    def confirm(self) -> str:
        """The payment status a confirmation gives."""
        return PaymentStatus.PAID

    def refund(self) -> str:
        """The payment status a recorded refund gives (the money moves outside the site)."""
        return PaymentStatus.REFUNDED


class BankTransfer(Provider):
    method = PaymentMethod.BANK_TRANSFER

    def start(self, *, amount: int, last_payment_at: datetime, now: datetime) -> Start:
        """Held until PAYMENT_DEADLINE_HOURS from now, never past the event's last payment time;
        refused once that time has passed (no transfer could arrive in time)."""
        if now >= last_payment_at:
            raise PaymentClosed()
        due = min(now + timedelta(hours=settings.PAYMENT_DEADLINE_HOURS), last_payment_at)
        return Start(RegistrationStatus.PENDING_PAYMENT, PaymentStatus.AWAITING, due)

    def instructions(self) -> dict[str, Any]:
        return {
            "kind": "bank_transfer",
            "bank": settings.PAYMENT_BANK_NAME,
            "branch": settings.PAYMENT_BANK_BRANCH,
            "accountName": settings.PAYMENT_ACCOUNT_NAME,
            "accountNumber": settings.PAYMENT_ACCOUNT_NUMBER,
        }

    @property
    def expires(self) -> bool:
        return True


class AtDoor(Provider):
    method = PaymentMethod.AT_DOOR

    def start(self, *, amount: int, last_payment_at: datetime, now: datetime) -> Start:
        return Start(RegistrationStatus.CONFIRMED, PaymentStatus.AT_DOOR)

    def instructions(self) -> dict[str, Any]:
        return {"kind": "at_door"}


class Dummy(Provider):
    """Confirms at once, as a processor that took the money would (tests only)."""

    method = PaymentMethod.DUMMY

    def start(self, *, amount: int, last_payment_at: datetime, now: datetime) -> Start:
        return Start(RegistrationStatus.CONFIRMED, PaymentStatus.PAID, paid_via=PaidVia.PROCESSOR)

    def instructions(self) -> dict[str, Any]:
        return {"kind": "dummy"}


PROVIDERS: dict[str, Provider] = {p.method: p for p in (BankTransfer(), AtDoor(), Dummy())}


def enabled() -> tuple[str, ...]:
    """The methods this site offers at all (PAYMENT_METHODS)."""
    return tuple(method for method in settings.PAYMENT_METHODS if method in PROVIDERS)


def offered(*, at_door: bool) -> tuple[str, ...]:
    """The methods an event offers: a transfer, the door if it says so, and any other enabled one."""
    return tuple(m for m in enabled() if m != PaymentMethod.AT_DOOR or at_door)


def provider(method: str) -> Provider:
    return PROVIDERS[method]


def choose(method: str | None, *, at_door: bool) -> Provider:
    """The provider of `method` (a transfer when none is named), if the event offers it."""
    chosen = method or PaymentMethod.BANK_TRANSFER
    if chosen not in offered(at_door=at_door):
        raise PaymentMethodUnavailable(extra={"paymentMethods": list(offered(at_door=at_door))})
    return PROVIDERS[chosen]
