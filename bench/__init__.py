"""`make bench`: the performance figures of the project, each a ratio or a count taken in one run.

`run.py` drives everything (databases, servers, load, browser) and prints the table; `tasks.py` is the
Django side it calls in child processes; `settings.py` and `urls.py` exist only for the bench servers.
"""
