"""Agents sign in: the site as the OAuth 2.1 authorization server of its own MCP endpoint.

django-oauth-toolkit does the protocol (metadata, authorization code with PKCE, refresh rotation,
dynamic registration, client ID metadata documents); this package holds what is ours: the scopes (the
site's own, `events.scopes`), the audience rule (every token is for `settings.MCP_RESOURCE`, exactly),
the metadata fetcher's public-client rule, the registration endpoint's limits, the consent page, and
the person's "Connected agents" (`grants`).
"""
