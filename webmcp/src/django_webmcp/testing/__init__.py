"""Test helpers for sites that use django-webmcp (`django_webmcp.testing`)."""
