"""`GET /api/me/export`: everything the site holds about the signed-in person, as one JSON document
(`accounts.privacy.export_personal_data`; the same as their My data page).

Signed in by session, or with a personal access token that may read (`events:read`, checked by
`events.scopes.TokenScope`, the project's default permission); an OAuth token is for `/mcp` only, so it
is refused here like an unknown one. Not an agent tool: neither WebMCP nor MCP offers it.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import AuthRequired
from core.inputs import validated_input
from events.choices import PaymentStatus, RegistrationStatus

from .privacy import export_personal_data

#: The site's error envelope, documented once by the events API (a reference, so it is one component).
ENVELOPE = {"$ref": "#/components/schemas/ErrorEnvelope"}


def _time(**kwargs) -> serializers.DateTimeField:
    return serializers.DateTimeField(allow_null=True, **kwargs)


class _Event(serializers.Serializer):
    event_id = serializers.CharField(help_text="The event's public id, e.g. evt-webmcp-intro.")
    event_title = serializers.CharField()


class ExportAccount(serializers.Serializer):
    username = serializers.CharField()
    first_name = serializers.CharField(allow_blank=True)
    last_name = serializers.CharField(allow_blank=True)
    email = serializers.CharField(allow_blank=True)
    date_joined = _time()
    last_login = _time()
    is_staff = serializers.BooleanField()


class ExportSave(_Event):
    saved_at = _time()


class ExportPayment(serializers.Serializer):
    """A registration's payment (integer TWD), and what the person reported of their transfer."""

    amount = serializers.IntegerField()
    currency = serializers.CharField()
    method = serializers.CharField(allow_blank=True)
    status = serializers.ChoiceField(choices=PaymentStatus.values)
    reference = serializers.CharField(allow_blank=True)
    due_at = _time()
    reported_account_last5 = serializers.CharField(
        allow_blank=True, help_text="The last five digits of the account they reported paying from."
    )
    reported_paid_on = serializers.DateField(allow_null=True)
    reported_at = _time()
    paid_amount = serializers.IntegerField()
    paid_at = _time()
    paid_via = serializers.CharField(allow_blank=True)
    refunded_amount = serializers.IntegerField()
    refunded_at = _time()


class ExportRegistration(_Event):
    status = serializers.ChoiceField(choices=RegistrationStatus.values)
    registered_at = _time()
    updated_at = _time()
    has_ticket = serializers.BooleanField(help_text="Whether a ticket is held (its code is never exported).")
    ticket_issued_at = _time()
    ticket_type = serializers.CharField(allow_blank=True)
    payment = ExportPayment(allow_null=True, help_text="A paid ticket type's payment; null for a free one.")


class ExportWaitlistEntry(_Event):
    status = serializers.CharField()
    joined_at = _time()
    offered_at = _time()
    offer_expires_at = _time()
    ended_at = _time()


class ExportCheckIn(_Event):
    checked_in_at = _time()
    undone_at = _time()


class ExportNotification(_Event):
    kind = serializers.CharField()
    sent_to = serializers.CharField(allow_blank=True, help_text="Cleared some time after sending.")
    status = serializers.CharField()
    created_at = _time()
    sent_at = _time()


class ExportAccessToken(serializers.Serializer):
    name = serializers.CharField()
    prefix = serializers.CharField(help_text="The token's first characters (the token itself is not kept).")
    scopes = serializers.ListField(child=serializers.CharField())
    created_at = _time()
    expires_at = _time()
    last_used_at = _time()
    revoked_at = _time()


class ExportConnectedAgent(serializers.Serializer):
    client = serializers.CharField()
    scopes = serializers.ListField(child=serializers.CharField())
    granted_at = _time()
    last_used_at = _time()


class ExportRole(_Event):
    role = serializers.CharField()
    added_at = _time()


class ExportActivity(serializers.Serializer):
    action = serializers.CharField()
    mode = serializers.CharField()
    outcome = serializers.CharField()
    event_id = serializers.CharField(allow_null=True)
    client = serializers.CharField(allow_blank=True, help_text="The connected agent, if one acted.")
    time = _time()


class ExportSignIn(serializers.Serializer):
    time = _time()
    address = serializers.CharField(allow_null=True)
    browser = serializers.CharField(allow_blank=True)
    signed_out_at = _time()


class ExportFailedSignIn(serializers.Serializer):
    time = _time()
    address = serializers.CharField(allow_null=True)
    browser = serializers.CharField(allow_blank=True)
    paused = serializers.BooleanField()


class ExportFailureCount(serializers.Serializer):
    last_attempt = _time()
    address = serializers.CharField(allow_null=True)
    browser = serializers.CharField(allow_blank=True)
    failures = serializers.IntegerField()


class ExportSignIns(serializers.Serializer):
    successful = ExportSignIn(many=True)
    failed = ExportFailedSignIn(many=True)
    failure_counts = ExportFailureCount(many=True)


class PersonalDataExport(serializers.Serializer):
    """Everything the site holds about the person. No secret: no ticket code, token or digest."""

    exported_at = _time()
    account = ExportAccount()
    saved_events = ExportSave(many=True)
    registrations = ExportRegistration(many=True)
    waiting_lists = ExportWaitlistEntry(many=True)
    check_ins = ExportCheckIn(many=True)
    notifications = ExportNotification(many=True)
    access_tokens = ExportAccessToken(many=True)
    connected_agents = ExportConnectedAgent(many=True)
    event_roles = ExportRole(many=True)
    activity = ExportActivity(many=True)
    sign_ins = ExportSignIns()


ERRORS = {
    400: "INVALID_INPUT (UNKNOWN_PARAMETER: the export takes no parameters)",
    401: "AUTH_REQUIRED (SIGN_IN_REQUIRED, INVALID_TOKEN; an OAuth token is for /mcp only)",
    403: "PERMISSION_DENIED (CSRF_FAILED, INSUFFICIENT_SCOPE: the token may not read)",
    429: "TEMPORARY_FAILURE / RATE_LIMITED with retryAfter (too many bad access tokens)",
    500: "INTERNAL_ERROR",
}


class NoParameters(serializers.Serializer):
    """The export takes no parameters: anything given is an unknown parameter."""


class PersonalDataApi(APIView):
    @extend_schema(
        operation_id="export_personal_data",
        summary="Everything the site holds about the signed-in person (the export of My data)",
        description=(
            "Account, saves, registrations (whether a ticket is held, never its code), waiting lists, "
            "check-ins, e-mails sent, access tokens (never the token), connected agents, event roles, "
            "activity and sign-in records. A session, or a personal access token with events:read."
        ),
        responses={
            200: PersonalDataExport,
            **{code: OpenApiResponse(ENVELOPE, description=text) for code, text in ERRORS.items()},
        },
    )
    def get(self, request: Request) -> Response:
        validated_input(NoParameters, request.query_params)
        if not request.user.is_authenticated:
            raise AuthRequired()
        return Response(PersonalDataExport(export_personal_data(user=request.user)).data)
