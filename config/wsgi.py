"""WSGI entry point for gunicorn.

The URLconf, and with it the views, is imported here, when a worker boots, not by its first request: a
new worker (a restart, or the one gunicorn starts in place of a killed one) made that request wait for
the imports, 2–7 s on a busy 2-CPU machine (`make faults`, worker-kill). It opens no database
connection, so a worker still boots while the database is away.
"""

import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
get_resolver().url_patterns  # noqa: B018 (the import is the point)
