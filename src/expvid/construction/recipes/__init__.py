"""Build recipes: plug-ins found by name through the entry-point group `expvid.recipes` (`registry`),
written against the public recipe API (`api`).

The three that ship with expvid: `expvid/` (ExpVid's own construction, whose machinery is the rest
of `expvid.construction`), `scivideobench/` and `promqa/`. Each reuses the build machinery (LLM
client with cache, validation, retries and accounting; build state; clip cutting; speech-to-text),
writes its suite's published layout, and declares what the review platform needs to show its items.
"""
