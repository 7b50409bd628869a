"""`expvid frames`: which frames would a model see? (placeholder, replaced by the media work)"""

import typer


def frames_command(video: str = typer.Argument(...)) -> None:
    """Print the frames chosen from VIDEO."""
    raise typer.Exit(code=2)
