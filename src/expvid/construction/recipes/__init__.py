"""Build recipes: plug-ins found by name through the entry-point group `expvid.recipes` (`registry`),
written against the public recipe API (`api`).

Each recipe that ships with expvid is a package here (`expvid/` is ExpVid's own construction, whose
machinery is the rest of `expvid.construction`; `expvid recipes list` names the others). Each reuses
the build machinery (LLM client with cache, validation, retries and accounting; build state; clip
cutting; speech-to-text), writes its suite's published layout, and declares what the review platform
needs to show its items.
"""
