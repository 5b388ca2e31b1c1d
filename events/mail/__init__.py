"""The site's e-mail, in one place: the outbox (queued with the change that causes it, sent once,
retried), the messages and their `.ics` attachment, and the tasks that send them."""
