"""Write use cases (layer 2), one module per subject: `registrations`, `waitlist`, `saves`, `door`,
`organiser`, `staff`, `calendar`, `approval`, `answers`, `reminders`, with the seat ledger (`ledger`)
and what they share (`common`). Each
runs in one transaction and is idempotent; its call's Activity row is written by
`events.actions.perform`, which every interface goes through (the rows name each use case where it
lives, so nothing here repeats them).

Refusals are typed errors (`events.errors`, `core.errors`); `stateVersion` rises exactly once per real
change and never on a no-op.
"""
