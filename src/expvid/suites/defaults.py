"""Registry constants that the command line needs before any suite is loaded (help texts)."""

#: The entry-point group suites register under (`[project.entry-points."expvid.suites"]`).
ENTRY_POINT_GROUP = "expvid.suites"
#: The suite a command uses when none is named (the benchmark this toolkit was built for).
DEFAULT_SUITE = "expvid"
