"""Orders of a procedure's steps: distances between orders, the solvers that answer a step-ordering
question from its options alone (`solvers`), and the option sets that defeat them (`rebuild`).

It imports only `expvid.schema`, so the audit, the build recipes and the sample generator (a suite)
all use one copy without importing each other.
"""
