"""The judge a run asks (`--judge`, `--judge-base-url`, `--judge-api-key-env`), for `expvid eval`
and `expvid score` alike: one place that names its backend and says how its replies are cached."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from expvid.run.config import EvalConfig
from expvid.schema import DataError, Item
from expvid.suites.protocol import EvalSuite, RunJudge, judge_needed


def judge_spec(suite: EvalSuite, spec: str | None, base_url: str | None) -> str | None:
    """The judge backend spec: as given; or, with only a judge URL, the paper's judge model served
    there (ExpVid: Phi-3-mini); or None for the suite's offline judge."""
    if spec is not None or base_url is None:
        return spec
    model = getattr(suite, "default_judge_model", None)
    if model is None:
        raise DataError(f"--judge-base-url needs --judge MODEL for the {suite.name} suite")
    return f"openai:{model}"


@dataclass(frozen=True)
class JudgeChoice:
    spec: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    concurrency: int = 4
    #: Ask the judge again instead of answering from the response cache (`expvid score --no-cache`).
    no_cache: bool = False

    @classmethod
    def of(cls, config: EvalConfig) -> JudgeChoice:
        """The judge a run's configuration names."""
        return cls(config.judge, config.judge_base_url, config.judge_api_key_env, config.judge_concurrency)

    def options(self, cache_dir: Path | None) -> dict[str, Any]:
        # A judge's cached replies are keyed by its server too (`cache_scope`, see `models.cache`):
        # another or a repaired judge server judges again instead of replaying what the old one said.
        options: dict[str, Any] = {
            "concurrency": self.concurrency,
            "cache_dir": None if self.no_cache else cache_dir,
            "cache_scope": "server",
        }
        if self.base_url:
            options["base_url"] = self.base_url
        if self.api_key_env:
            options["api_key_env"] = self.api_key_env
        return options

    def build(self, suite: EvalSuite, items: Sequence[Item], cache_dir: Path | None) -> RunJudge | None:
        """The suite's judge for these items (None when none of them needs one); a judge URL without
        a model the suite can name is refused either way."""
        spec = judge_spec(suite, self.spec, self.base_url)
        if not judge_needed(suite, items):
            return None
        return suite.build_judge(spec, self.options(cache_dir))
