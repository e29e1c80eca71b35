"""The `newskg` command line."""
