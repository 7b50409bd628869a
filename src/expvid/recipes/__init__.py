"""Build recipes as plug-ins: the public recipe API (`api`), the registry that finds recipes by name
through the entry-point group `expvid.recipes` (`registry`), and the defaults (`defaults`).

This package imports nothing of `expvid.construction`, `expvid.platform` or `expvid.cli`: the CLI,
the review platform and the recipes themselves all import it, and the registry loads a recipe's
class by its entry point only when asked for it. The recipes that ship with expvid live in
`expvid.construction.recipes` (see docs/write-a-recipe.md).
"""
