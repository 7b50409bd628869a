"""Running the ProMQA recipe against the scripted loopback lab (shared by the recipe's tests)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from expvid.construction.accounting import Price
from expvid.construction.recipes.promqa.config import PromqaBuildConfig, build_config
from expvid.construction.recipes.promqa.pipeline import build_promqa
from expvid.fakes.models.server import LoopbackServer

PRICE = Price(input_per_m=2.5, output_per_m=10.0)  # gpt-4o-2024-08-06, as the official code priced it
#: Small targets for the six sample recordings.
SMALL = {"next": 8, "missing": 8, "others": 2}


def config(
    sources: Path, out: Path, server: LoopbackServer, model: str = "gen-a", **options: Any
) -> PromqaBuildConfig:
    return build_config(
        sources=sources,
        out=out,
        llm=f"openai:{model}@{server.openai_base_url}",
        options={**SMALL, **options},
        backend_options={"max_retries": 0},
        prices={"llm": PRICE},
        preset="ultrafast",
    )


def run(
    sources: Path, out: Path, server: LoopbackServer, model: str = "gen-a", **options: Any
) -> dict[str, Any]:
    return asyncio.run(build_promqa(config(sources, out, server, model, **options)))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
