"""The build recipes that ship with expvid, each a plug-in found by name through the entry-point group
`expvid.recipes` and written against the public recipe API (`expvid.recipes.api`).

Each recipe is a package here (`expvid/` is ExpVid's own construction, whose machinery is the rest of
`expvid.construction`; `expvid recipes list` names the others). Each reuses the build machinery (LLM
client with cache, validation, retries and accounting; build state; clip cutting; speech-to-text),
writes its suite's published layout, and declares what the review platform needs to show its items.
`speech_settings` and `speech_options` are the speech-to-text inputs and `-R` keys they share.
"""
