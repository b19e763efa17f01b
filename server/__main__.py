"""`python -m server` is the `groundwire` command."""

from server.cli import main

main()
