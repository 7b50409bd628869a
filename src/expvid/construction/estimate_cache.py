"""The response cache as `--dry-run` reads it: is this exact request already answered?

A re-run pays only for requests its response cache has not answered: after a transcript edit, the
edited sentence's prompts are new and every other prompt is answered. The dry run builds the
requests it can build before any reply (the curation prompt, Level 1's per-sentence extractions,
Level 2's segmentation windows, Level 3's findings summary, the blind audit) exactly as the build
will send them (`llm.prompt_messages`, `llm.make_request`, the `--redo` / failed-call round of
`retries.RetryBook`) and looks each up in the cache of the backend that would send it.

The backends are opened only to compute cache keys; nothing is sent. A local model (`hf:`,
`vllm:`) is not opened (it would load its weights): its requests count as not answered, and a
note says so; so does a missing cache.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from expvid.construction.config import BuildConfig
from expvid.construction.llm import make_request, phase_of, prompt_messages, request_key
from expvid.construction.retries import CURRENT_EXPERIMENT, RetryBook
from expvid.construction.state import STATE_DIR
from expvid.models.cache import CACHE_FILE_NAME, CACHE_ROUND
from expvid.models.types import GenerateResponse, Message

LOCAL_KINDS = ("hf", "vllm")


class CacheProbe:
    """Cache look-ups for the build's roles ("llm", "vlm", "blind"); see the module doc."""

    def __init__(self, config: BuildConfig, retries: RetryBook) -> None:
        self.config = config
        self.retries = retries
        self.cache_dir: Path = config.out.expanduser() / STATE_DIR / "cache"
        self._backends: dict[str, Any] = {}
        self.notes: list[str] = []
        if not (self.cache_dir / CACHE_FILE_NAME).is_file():
            self.notes.append("no response cache yet: every request is counted")

    def _spec(self, role: str) -> str | None:
        config = self.config
        return {"llm": config.llm, "vlm": config.vlm, "blind": config.blind_llm or config.llm}.get(role)

    def _backend(self, role: str) -> Any:
        if role in self._backends:
            return self._backends[role]
        backend = None
        spec = self._spec(role)
        if spec is not None and (self.cache_dir / CACHE_FILE_NAME).is_file():
            if spec.split(":", 1)[0] in LOCAL_KINDS:
                self.notes.append(
                    f"{role}: a local model's cache is not read by a dry run; its requests are counted"
                )
            else:
                from expvid.models import create_backend

                try:
                    backend = create_backend(
                        spec, **{**self.config.backend_options, "cache_dir": self.cache_dir}
                    )
                except Exception as error:  # a backend that cannot be made here is the real run's problem
                    self.notes.append(f"{role}: response cache not read ({error})")
        self._backends[role] = backend
        return backend

    async def cached(
        self,
        role: str,
        messages: list[Message],
        *,
        prompt_id: str,
        experiment: str | None,
        stage: str | None = None,
        temperature: float | None = None,
        seed: int | None = None,
    ) -> GenerateResponse | None:
        """The cached reply to the request the build would send first for this prompt, or None."""
        backend = self._backend(role)
        lookup = getattr(backend, "cached_response", None)
        if lookup is None:
            return None
        request = make_request(
            messages,
            temperature=self.config.temperature if temperature is None else temperature,
            max_tokens=self.config.max_tokens,
            seed=seed,
            stage=stage or prompt_id,
            prompt_id=prompt_id,
        )
        CURRENT_EXPERIMENT.set(experiment)  # its `--redo STAGE:ID` epoch
        round_ = self.retries.round_for(phase_of(prompt_id), request_key(request))
        if round_:
            request.metadata[CACHE_ROUND] = round_
        response: GenerateResponse | None = await lookup(request)
        return response

    async def answered(
        self, role: str, prompt_id: str, values: dict[str, str], experiment: str | None
    ) -> bool:
        """Whether template `prompt_id` filled with `values` is answered in the cache."""
        messages = prompt_messages(prompt_id, values)
        return await self.cached(role, messages, prompt_id=prompt_id, experiment=experiment) is not None

    async def aclose(self) -> None:
        for backend in self._backends.values():
            if backend is not None:
                await backend.aclose()
