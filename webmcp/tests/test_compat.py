"""What differs between Django 5.2 and 6.x goes through django_webmcp._compat: CSP nonces, and the views
LoginRequiredMiddleware must let through."""

from __future__ import annotations

import django
import pytest
from django.template import Context, Template
from django.test import RequestFactory, override_settings
from django_webmcp import _compat

RUNTIME = Template("{% load webmcp %}{% webmcp_runtime %}")


def render_runtime(request) -> str:
    return RUNTIME.render(Context({"request": request}))


def test_no_nonce_without_a_policy_that_uses_one():
    html = render_runtime(RequestFactory().get("/"))
    assert html == '<script type="module" src="/static/webmcp/webmcp.js"></script>'


@pytest.mark.skipif(django.VERSION < (6, 0), reason="built-in CSP is Django 6.0's")
def test_the_built_in_nonce_on_django_6():
    from django.middleware.csp import ContentSecurityPolicyMiddleware
    from django.utils.csp import CSP

    request = RequestFactory().get("/")
    ContentSecurityPolicyMiddleware(lambda r: None).process_request(request)
    with override_settings(SECURE_CSP={"script-src": [CSP.SELF, CSP.NONCE]}):
        nonce = _compat.csp_nonce(request)
        assert nonce and f'nonce="{nonce}"' in render_runtime(request)
    assert _compat.csp_nonce(request) is None  # a policy without nonces: no attribute


def test_a_django_csp_style_nonce_is_used_on_any_version():
    request = RequestFactory().get("/")
    request.csp_nonce = "abc123"  # what django-csp's middleware puts on the request (5.2)
    assert 'nonce="abc123"' in render_runtime(request)


def test_login_not_required_is_the_one_of_this_django():
    from django.contrib.auth.decorators import login_not_required

    assert _compat.login_not_required is login_not_required
