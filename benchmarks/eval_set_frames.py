"""Benchmark: `expvid eval-set` decoding frames once for all models, against each cell decoding its own.

A campaign of N models (same frame preset, loopback servers answering at once) over Levels 1-2 of
the bundled sample, run twice in this process, each time into a fresh shared cache:

- warm (what `expvid eval-set` does): every distinct (video, window, sampler) decoded once before any
  cell runs; the cells read the cache;
- cold: the same cells, run `parallel_cells` at a time with the same shared cache but no warm-up:
  whatever a cell needs and no cell has cached yet, it decodes.

Printed: frame sets decoded (warm-up + by the cells), predictions whose frames came from the cache,
wall time, and the ratio cold / warm of decodes and of wall time.

Usage: python benchmarks/eval_set_frames.py [--models 3] [--parallel 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / ".cache" / "eval_set_frames"
TASKS = ["tools", "materials", "quantity", "operation", "sequence_ordering", "sequence_generation",
         "video_verification", "step_prediction"]  # fmt: skip


def _sample() -> Path:
    sample = CACHE / "sample"
    if not (sample / "annotations").is_dir():
        subprocess.run([sys.executable, "-m", "expvid.cli.main", "sample", "make", str(sample)], check=True)
    return sample


def _campaign(root: Path, sample: Path, urls: list[str], parallel: int) -> Path:
    models = "\n".join(
        f"  - {{name: M{i}, model: 'openai:m{i}@{url}', frame_preset: gpt-5}}" for i, url in enumerate(urls)
    )
    path = root / "set.yaml"
    path.write_text(
        f"out: {root / 'out'}\ncache_dir: {root / 'cache'}\nparallel_cells: {parallel}\nn_bootstrap: 0\n"
        f"view_exports: false\nsuites:\n  - {{name: expvid, data: {sample}, tasks: {json.dumps(TASKS)}}}\n"
        f"models:\n{models}\n"
    )
    return path


def _run(config_file: Path, warm: bool) -> dict[str, float]:
    from rich.console import Console

    from expvid.run import eval_set
    from expvid.run.eval_set_config import load_eval_set

    config = load_eval_set(config_file)
    cells = eval_set.prepare_cells(config)
    original = eval_set.warm_frames
    if not warm:
        eval_set.warm_frames = lambda *args, **kwargs: {}  # type: ignore[assignment]
    started = time.perf_counter()
    try:
        asyncio.run(eval_set.run_eval_set(config, cells, console=Console(quiet=True), show_progress=False))
    finally:
        eval_set.warm_frames = original  # type: ignore[assignment]
    wall = time.perf_counter() - started
    state = eval_set.read_state(config.out)
    predictions = [
        json.loads(line)
        for run in (config.out / "runs").glob("*/*/*")
        for line in (run / "predictions.jsonl").read_text().splitlines()
    ]
    by_cells = sum(not p["meta"]["frames_from_cache"] for p in predictions)
    return {
        "wall_s": wall,
        "warm_up_decoded": float(state.frames.get("decoded", 0)),
        "decoded_by_cells": float(by_cells),
        "predictions": float(len(predictions)),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--parallel", type=int, default=2)
    args = parser.parse_args()
    from expvid.fakes.models.server import LoopbackServer

    sample = _sample()
    servers = [LoopbackServer("\\boxed{A}").start() for _ in range(args.models)]
    try:
        results = {}
        for mode in ("warm", "cold"):
            root = CACHE / mode
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            config = _campaign(root, sample, [s.openai_base_url for s in servers], args.parallel)
            results[mode] = _run(config, warm=mode == "warm")
    finally:
        for server in servers:
            server.stop()
    for mode, result in results.items():
        decoded = result["warm_up_decoded"] + result["decoded_by_cells"]
        print(
            f"{mode}: {args.models} models, {int(result['predictions'])} predictions; frame sets decoded "
            f"{int(decoded)} (warm-up {int(result['warm_up_decoded'])}, by cells {int(result['decoded_by_cells'])}); "
            f"wall {result['wall_s']:.1f} s"
        )
    warm, cold = results["warm"], results["cold"]
    warm_decodes = warm["warm_up_decoded"] + warm["decoded_by_cells"]
    cold_decodes = cold["warm_up_decoded"] + cold["decoded_by_cells"]
    print(
        f"cold / warm: decodes x{cold_decodes / max(1.0, warm_decodes):.2f}, wall x{cold['wall_s'] / warm['wall_s']:.2f}"
    )


if __name__ == "__main__":
    main()
