"""What every command shares, `expvid`'s own and those the build recipes ship (`Recipe.command`):
the endpoint options of `expvid eval` and `expvid build` (`endpoints`) and one-line errors
(`errors`). Below `cli`, `construction` and `platform`, so a recipe's command needs nothing from
`expvid.cli`; nothing is imported here, so `expvid eval --help` loads only the modules it uses.
"""
