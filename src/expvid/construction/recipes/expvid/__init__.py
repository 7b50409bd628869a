"""ExpVid's own construction as a recipe (`expvid build` without `--recipe`): the machinery is the
rest of `expvid.construction`; this package declares it (`recipe.py`) and runs it (`command.py`)."""
