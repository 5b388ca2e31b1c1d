"""The scenario bank (webmcp-evals format) and its runner: evidence level E4 (docs/evidence.md).

`python -m evals smoke` proves every case's expected path works on the live pages without a model;
`python -m evals model` lets an OpenAI-compatible model drive the same pages; `python -m evals grade`
grades a saved trace again. Reports carry the site's /health revision and tool catalogue fingerprint.
"""
