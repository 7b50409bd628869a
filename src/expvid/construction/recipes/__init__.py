"""Construction recipes other than ExpVid's own (which lives in `expvid.construction` itself).

Each recipe is a package that reuses the build machinery (LLM client with cache, validation, retries
and accounting; build state; clip cutting; speech-to-text) and writes its suite's published layout.
`expvid build --recipe NAME` dispatches to it (`expvid.cli.build`).
"""
