"""``kubesched`` command line: ``simulate``, ``replay``, ``compare``, ``sweep``, ``run``, ``sim serve``,
``plugins``, ``config validate|print|migrate-policy``, one module per command."""

from kubesched.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
