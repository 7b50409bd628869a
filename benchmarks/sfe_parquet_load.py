"""Benchmark: loading SFE from the Hugging Face parquet release (images embedded) vs JSONL + files.

Methods, each in a fresh subprocess (peak resident memory sampled per method):
  jsonl            JSONL records + image files on disk (the exported layout)
  parquet-cold     parquet with embedded images, empty image cache: every image written once
  parquet-warm     the same again: images found in the cache, nothing written
  read-table       the naive alternative: pyarrow.parquet.read_table(...).to_pylist() (whole file
                   in memory at once), no item building at all

The synthetic release has N questions, each with one PNG of noise (incompressible, so the parquet
file is as big as real scientific images make it), shared by the two languages as SFE's are.

Usage: python benchmarks/sfe_parquet_load.py [--items 400] [--side 512]
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

METHODS = ("jsonl", "parquet-cold", "parquet-warm", "read-table")


def make_release(root: Path, items: int, side: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    (root / "images").mkdir(parents=True)
    image = pa.struct([pa.field("bytes", pa.binary()), pa.field("path", pa.string())])
    for language in ("en", "zh"):
        records, rows = [], []
        for i in range(items):
            name = f"img_{i:05d}.png"
            path = root / "images" / name
            if not path.exists():
                buffer = io.BytesIO()
                Image.fromarray(rng.integers(0, 255, (side, side, 3), dtype=np.uint8)).save(buffer, "PNG")
                path.write_bytes(buffer.getvalue())
            record = {
                "id": f"A001/{i:05d}",
                "field": "Astronomy",
                "question_type": "open_ended",
                "question": f"Describe image {i}.",
                "options": [],
                "answer": f"answer {i}",
            }
            records.append({**record, "images": [f"images/{name}"]})
            rows.append({**record, "images": [{"bytes": path.read_bytes(), "path": name}]})
        folder = root / "jsonl" / f"v-{language}"
        folder.mkdir(parents=True)
        (folder / "sfe.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        target = root / "parquet" / f"v-{language}" / "test.parquet"
        target.parent.mkdir(parents=True)
        columns = {key: [row[key] for row in rows] for key in rows[0]}
        schema = pa.schema(
            [(k, pa.string()) for k in ("id", "field", "question_type", "question")]
            + [("options", pa.list_(pa.string())), ("answer", pa.string()), ("images", pa.list_(image))]
        )
        pq.write_table(pa.table(columns, schema=schema), target, row_group_size=64)
    (root / "jsonl" / "images").symlink_to(root / "images")


def child(method: str, root: Path, cache: Path) -> dict[str, float]:
    started = time.perf_counter()
    if method == "read-table":
        import pyarrow.parquet as pq

        n = sum(len(pq.read_table(p).to_pylist()) for p in sorted((root / "parquet").rglob("*.parquet")))
    else:
        from expvid.suites.sfe import load_sfe

        data = root / ("jsonl" if method == "jsonl" else "parquet")
        n = len(load_sfe(data, languages=("en", "zh"), strict=True, image_cache=cache).items)
    return {"seconds": time.perf_counter() - started, "items": n}


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run_child(command: list[str]) -> dict[str, float]:
    """Run one method; its peak memory is sampled from outside every 10 ms (ru_maxrss carries the
    parent's peak over fork, so it cannot tell the methods apart)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    peak = 0.0
    while process.poll() is None:
        peak = max(peak, rss_mb(process.pid))
        time.sleep(0.01)
    output, _ = process.communicate()
    if process.returncode:
        raise SystemExit(f"{command} failed")
    return {**json.loads(output), "peak_mb": peak}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--side", type=int, default=512)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        method, root, cache = args.child
        print(json.dumps(child(method, Path(root), Path(cache))))
        return
    work = Path(tempfile.mkdtemp(prefix="sfe-bench-"))
    try:
        make_release(work, args.items, args.side)
        size = sum(p.stat().st_size for p in (work / "parquet").rglob("*.parquet")) / 2**20
        print(
            f"{2 * args.items} questions, {args.items} distinct {args.side}x{args.side} PNGs, parquet {size:.0f} MB"
        )
        results = {}
        cache = work / "cache"
        for method in METHODS:
            command = [sys.executable, __file__, "--child", method, str(work), str(cache)]
            results[method] = run_child(command)
        base = results["jsonl"]["seconds"]
        for method, result in results.items():
            print(
                f"{method:13s} {result['seconds']:7.2f} s  x{result['seconds'] / base:5.2f} vs jsonl  "
                f"peak {result['peak_mb']:6.0f} MB  ({result['items']} items)"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
