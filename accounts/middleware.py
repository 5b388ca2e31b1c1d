"""`AuthenticationMiddleware` whose `request.user` is read with the session (accounts/backends.py)."""

from __future__ import annotations

from django.contrib import auth
from django.contrib.auth.middleware import AuthenticationMiddleware as DjangoAuthenticationMiddleware
from django.utils.functional import SimpleLazyObject

from .backends import reading_person_of


def get_user(request):
    if not hasattr(request, "_cached_user"):
        with reading_person_of(request.session):
            request._cached_user = auth.get_user(request)
    return request._cached_user


class AuthenticationMiddleware(DjangoAuthenticationMiddleware):
    def process_request(self, request) -> None:
        super().process_request(request)  # its checks, and `request.auser` (async views) as Django has it
        request.user = SimpleLazyObject(lambda: get_user(request))
