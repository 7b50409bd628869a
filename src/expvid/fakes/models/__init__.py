"""The model providers' APIs on loopback: `server.LoopbackServer` and the modules it is built from.

`request_shapes` (parse and check each protocol's request), `rules` (providers' parameter rules with
their 400 bodies), `replies` (scripted answers), `render` (each API's JSON), `usage` (prompt tokens
as each provider counts them), `batch_plan` + `batch` + `gemini_batch` (the batch endpoints).
"""
