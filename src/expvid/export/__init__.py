"""Exports of an expvid benchmark to other evaluation tools (lmms-eval); see `expvid export --help`."""
