"""`python -m server` is the `groundwire` command."""

from server.cli import main

if __name__ == "__main__":  # reader processes (spawned) import this module as __mp_main__
    main()
