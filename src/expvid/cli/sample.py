"""`expvid sample ...` (placeholder, replaced by the sample generator work)."""

import typer

sample_app = typer.Typer(no_args_is_help=True, help="Generate the bundled sample benchmarks.")
