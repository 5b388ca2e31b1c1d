"""Running the site, not what it serves: backups that restore (`manage.py backup`, `manage.py restore`;
`make backup`, `make restore FILE=…`). Imports nothing of the other apps."""
