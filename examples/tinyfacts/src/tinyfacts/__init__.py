"""TinyFacts: a build recipe that turns lab videos with a list of facts into multiple-choice
questions, and the suite that evaluates them (the worked example of expvid's docs/write-a-recipe.md)."""
