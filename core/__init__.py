"""What the whole site shares and no app owns: base errors, the envelope, input validation, error
handlers and pages, scopes, `Visitor`, the write rate, the renderer, periodic tasks, the revision.

It imports nothing of the apps (`events`, `accounts`, `readiness`) or of `config` (an import contract
checks it); what only an app knows reaches it through a setting (`STATE_VERSION_READER`).
"""
