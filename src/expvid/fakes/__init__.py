"""Fakes: real HTTP servers speaking providers' protocols on loopback, for tests and benchmarks.

Not mocks: each is a uvicorn + Starlette server on 127.0.0.1 (port 0) that answers exactly as the
real service does (routes, status codes, error bodies, parameter rules), so the product's clients
are exercised as they run in production. Product code imports none of this package.

- `models`: the OpenAI (chat, Responses, Files + Batches), Anthropic (Messages, Message Batches)
  and Gemini (generateContent, batch mode) APIs, with scripted replies (`models.server.LoopbackServer`).
- `hub`: the Hugging Face Hub endpoints `huggingface_hub` calls (`LoopbackHub`).
- `transcription`: an OpenAI-compatible `/v1/audio/transcriptions` endpoint (`TranscriptionServer`).
"""
