"""`make bench` and `make soak`: the performance figures of the project and its soak, never run as tests.

`run.py` (bench) and `soak.py` (soak) are two measurements in one skeleton, `session.py` (lock, time
limit, databases, gunicorn servers, result file, README table). The bench's figures are in `figures/`,
one module per group; the soak's traffic is `traffic.py` and its memory samples `memory.py`. `tasks.py`
is the Django side they call in child processes; `settings.py` and `urls.py` exist only for the bench
servers; `infra.py` and `load.py` are the databases, servers and load generators they stand on.
Chromium, the server process and /health come from `harness/`, as in the tests and the evals.
"""
