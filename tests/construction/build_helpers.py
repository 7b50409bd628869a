"""Helpers shared by the build tests: run a build against the scripted loopback lab, make source subsets."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from expvid.construction import BuildConfig, CurationSettings, Price, build_candidates
from expvid.fakes.models.server import LoopbackServer

#: The sample's experiments are 126-153 s long; the interquartile range of 8 would drop half of them.
SAMPLE_BOUNDS = CurationSettings(min_duration=60, max_duration=900)
PRICE = Price(input_per_m=0.55, output_per_m=2.19)


def build_config(sources: Path, out: Path, server: LoopbackServer, **overrides: Any) -> BuildConfig:
    settings: dict[str, Any] = {
        "sources": sources,
        "out": out,
        "llm": f"openai:deepseek-r1@{server.openai_base_url}",
        "curation": SAMPLE_BOUNDS,
        "trim_slides": True,
        "preset": "ultrafast",
        "asr_audit": True,
        "domain_audit": False,  # loads MiniLM; on where a test is about it
        "backend_options": {"max_retries": 0},
        "prices": {"llm": PRICE, "blind": PRICE},
        "jobs": 1,  # worker processes only where a test is about them (each pool costs a start-up)
    }
    settings.update(overrides)
    return BuildConfig(**settings)


def run_build(sources: Path, out: Path, server: LoopbackServer, **overrides: Any) -> dict[str, Any]:
    return asyncio.run(build_candidates(build_config(sources, out, server, **overrides)))


def subset(sample_sources: Path, target: Path, video_ids: list[str]) -> Path:
    """A sources folder holding only the given experiments (symlinks to the sample's folders)."""
    target.mkdir(parents=True, exist_ok=True)
    for video_id in video_ids:
        (target / video_id).symlink_to(sample_sources / video_id, target_is_directory=True)
    return target


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def bodies(server: LoopbackServer) -> list[str]:
    """Every request the server received, as canonical JSON of its messages and sampling settings."""
    keys = ("messages", "temperature", "seed", "max_tokens")
    return [json.dumps({k: r.body.get(k) for k in keys}, sort_keys=True) for r in server.requests]
