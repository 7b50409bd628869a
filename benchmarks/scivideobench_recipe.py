"""Calls, tokens and cost per released item of `expvid build --recipe scivideobench`, by role.

Runs the recipe on the narrated sample inputs (`expvid sample make --recipe scivideobench`, espeak-ng)
against the scripted lab of the tests (loopback OpenAI server for the roles, loopback transcription
server for speech-to-text), then again from the cache, and prints per role: calls, tokens, and the
cost at the given prices, per released item; the ratio of a resumed build's calls to a fresh one's;
and how `--dry-run` forecasts compare with the calls then sent (a fresh build: upper bounds; a
finished one: the response cache replayed; `--redo evaluator`: the redone calls). Then the same fresh
build with the generator on text only (`-R generator=text`), for the cost of showing it the video.

The build settings are the recipe's defaults, which the documented command uses: 16 frames of at most
448 pixels, per_type conceptual:2,hypothetical:2,quantitative:2, 3 blind samples. The lab counts
tokens as a server would, roughly (4 characters a token, 500 a frame), and its replies are short, so
the prompt side is real-sized and the reply side smaller than a real model's: read the prompt side,
and re-run against a real endpoint for replies.

    .venv/bin/python benchmarks/scivideobench_recipe.py --experiments 2 --price 1.25,10 --stt-price 0.006
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "tests" / "construction_scivideobench"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=2)
    parser.add_argument("--price", default="1.25,10", help="USD per 1M input,output tokens")
    parser.add_argument("--stt-price", type=float, default=0.006, help="USD per minute of audio")
    parser.add_argument("--blind-samples", type=int, default=3)
    parser.add_argument(
        "--frames", type=int, default=None, help="frames per call (default: the recipe's, 16)"
    )
    args = parser.parse_args()

    from svb_lab import SvbLab

    from expvid.construction import parse_price
    from expvid.construction.recipes.scivideobench import (
        SvbBuildConfig,
        build_scivideobench,
        estimate_scivideobench,
    )
    from expvid.construction.speech import parse_stt_spec
    from expvid.fakes.models.server import LoopbackServer
    from expvid.fakes.transcription import TranscriptionScript, TranscriptionServer
    from expvid.suites.sample.speech_sources import make_speech_sources

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        made = make_speech_sources(root / "inputs", experiments=args.experiments)
        print(
            f"inputs: {len(made.experiments)} narrated videos, {made.audio_seconds / 60:.1f} min, {made.seconds:.1f} s"
        )
        _roles, price = parse_price(args.price)
        with LoopbackServer(SvbLab()) as llm, TranscriptionServer(TranscriptionScript()) as stt:
            config = SvbBuildConfig(
                sources=root / "inputs" / "sources",
                out=root / "out",
                llm=f"openai:lab@{llm.openai_base_url}",
                stt=parse_stt_spec(
                    f"openai:whisper-1@{stt.openai_base_url}", price_per_minute=args.stt_price
                ),
                prices={"llm": price},
                blind_samples=args.blind_samples,
                **({"frames": args.frames} if args.frames else {}),
            )
            runs = []
            forecasts = []
            for label, redo in (("fresh", ()), ("resumed", ()), ("--redo evaluator", ("evaluator",))):
                scenario = config.model_copy(update={"redo": redo})
                forecast = asyncio.run(estimate_scivideobench(scenario))
                started = time.perf_counter()
                report = asyncio.run(build_scivideobench(scenario))
                runs.append((label, time.perf_counter() - started, report))
                forecasts.append((label, forecast, report))
            text = config.model_copy(update={"generator": "text", "out": root / "text"})
            text_forecast = asyncio.run(estimate_scivideobench(text))
            text_report = asyncio.run(build_scivideobench(text))
    (_, fresh_seconds, fresh), (_, resumed_seconds, resumed) = runs[:2]
    items = fresh["total_items"]
    print(
        f"settings: {config.frames} frames of at most {config.frame_max_side} px, per_type "
        f"{','.join(f'{t}:{n}' for t, n in config.per_type.items())}, {config.blind_samples} blind samples, "
        f"generator={config.generator}; prices {args.price} USD per 1M tokens, {args.stt_price} USD per audio minute"
    )
    kinds = ", ".join(f"{task} {entry['kept']}" for task, entry in fresh["items"].items())
    print(f"released items: {items} ({kinds})")
    print(f"{'role:stage':40} {'calls/item':>10} {'in tok/item':>12} {'out tok/item':>13} {'USD/item':>10}")
    for stage, counts in fresh["calls"]["by_stage"].items():
        calls = counts["requests"] + counts["cache_hits"]
        prompt, completion = counts["prompt_tokens"], counts["completion_tokens"]
        cost = price.cost(prompt, completion)
        print(
            f"{stage:40} {calls / items:10.2f} {prompt / items:12.0f} {completion / items:13.0f} {cost / items:10.5f}"
        )
    speech = fresh["speech"]
    print(
        f"{'speech-to-text (per item)':40} {speech['requests'] / items:10.2f} {'':>12} {'':>13} {speech['cost_this_run'] / items:10.5f}"
    )
    per = fresh["per_item"]
    print(f"total per released item: {per['calls']} calls, {per['tokens']} tokens, ${per['cost_this_run']}")
    print(
        f"fresh build {fresh_seconds:.1f} s, {fresh['calls']['sent']} calls sent; resumed {resumed_seconds:.1f} s, "
        f"{resumed['calls']['sent']} sent ({resumed['calls']['sent'] / max(1, fresh['calls']['sent']):.2f}x), "
        f"{resumed['speech']['transcribed']} transcribed"
    )
    print(
        f"{'dry run, then the build':24} {'forecast':>8} {'built exactly':>13} {'found cached':>12} {'sent':>5}"
        "  forecast/sent"
    )
    for label, forecast, report in forecasts:
        predicted = sum(row["calls"] for row in forecast["stages"].values())
        exact = predicted - sum(row["upper_bound"] for row in forecast["stages"].values())
        sent = report["calls"]["sent"]
        ratio = f"{predicted / sent:.2f}x" if sent else ("exact" if predicted == 0 else "-")
        print(f"{label:24} {predicted:8} {exact:13} {forecast['cached_replies']:12} {sent:5}  {ratio}")
    fresh_view = forecasts[0][1]["generator_view"]
    print(
        f"dry run of the fresh build: ${forecasts[0][1]['total_cost']:.4f} with the generator seeing "
        f"{fresh_view['mode']}; ${fresh_view['other_total_cost']:.4f} with -R generator=text "
        f"(the text build's own dry run: ${text_forecast['total_cost']:.4f})"
    )
    text_per = text_report["per_item"]
    print(
        f"generator=text build: {text_report['total_items']} items, per item {text_per['calls']} calls, "
        f"{text_per['tokens']} tokens, ${text_per['cost_this_run']} "
        f"(generator=frames: {per['tokens']} tokens, ${per['cost_this_run']}; "
        f"{per['cost_this_run'] / text_per['cost_this_run']:.2f}x)"
    )


if __name__ == "__main__":
    main()
