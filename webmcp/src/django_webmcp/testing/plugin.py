"""The pytest plugin of django-webmcp (registered under the `pytest11` entry point)."""
