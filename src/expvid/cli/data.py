"""`expvid data ...` (placeholder, replaced by the loader work)."""

import typer

data_app = typer.Typer(no_args_is_help=True, help="Inspect and validate benchmark data.")
