"""Benchmark: the item list of `expvid view` on a 10,000-item run, measured in Chromium.

Builds a synthetic ExpVid-layout dataset (annotations only; the list needs no video) and one or
more run directories with 10,000 predictions (some long reasoning replies, failures, truncations)
and item scores, serves them with the viewer, and measures in headless Chromium (Debian's,
through Playwright):

  page-to-list      navigation start -> the item list drawn (HTML, JS, the rows' JSON, first render)
  rows JSON         fetching and parsing /api/items in the page
  virtual render    drawing the visible window of the list (what every scroll and filter costs)
  filter+render     typing a search term: filtering 10,000 rows and redrawing
  scroll+render     jumping to the middle of the list
  naive render      the alternative: every row in the DOM (same row builder), until laid out

and on the server: building the rows and their JSON. The target is the list on screen in under a
second; the ratio to the naive render is printed.

Usage: python benchmarks/view_list.py [--items 10000] [--runs 1] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

TASKS = ("tools", "materials", "quantity", "operation")
DISCIPLINES = ("Biology", "Chemistry", "Medicine", "Neuroscience", "Engineering")
WORDS = [
    "pipette",
    "beaker",
    "centrifuge",
    "vortex",
    "flask",
    "scalpel",
    "tweezers",
    "incubator",
    "microscope",
    "spatula",
]


def make_dataset(root: Path, n_items: int, rng: random.Random) -> list[dict[str, Any]]:
    """ExpVid release layout, annotations only (the viewer loads with check_media=False)."""
    per_task = n_items // len(TASKS)
    items = []
    for task in TASKS:
        directory = root / "annotations" / "level1"
        directory.mkdir(parents=True, exist_ok=True)
        lines = []
        for i in range(per_task):
            options = {letter: f"{rng.choice(WORDS)} {rng.randint(1, 999)}" for letter in "ABCD"}
            record = {
                "id": i,
                "video_path": f"videos/level_1/{i % 500}/clip_{i}.mp4",
                "question": f"Which {task} appears in step {i} of this {rng.choice(WORDS)} protocol?",
                "options": options,
                "answer": rng.choice("ABCD"),
                "asr_caption": " ".join(rng.choice(WORDS) for _ in range(30)),
                "video_id": str(i % 500),
                "category": rng.choice(DISCIPLINES),
            }
            lines.append(json.dumps(record))
            items.append({"id": f"{task}/{i}", "task": task, **record})
        (directory / f"{task}.jsonl").write_text("\n".join(lines) + "\n")
    return items


def make_run(run: Path, data: Path, items: list[dict[str, Any]], model: str, rng: random.Random) -> None:
    run.mkdir(parents=True)
    manifest = {
        "suite": "expvid",
        "model": model,
        "dataset_root": str(data),
        "config": {"settings": {"data": str(data)}},
    }
    (run / "manifest.json").write_text(json.dumps(manifest))
    predictions, scores = [], []
    for item in items:
        roll = rng.random()
        frames = [{"index": 10 * k + 5, "time": k + 0.5} for k in range(8)]
        base = {"item_id": item["id"], "task": item["task"], "model": model, "frames": frames, "n_images": 8,
                "latency_s": round(rng.uniform(0.5, 9), 3), "meta": {"prompt": item["question"]}}  # fmt: skip
        if roll < 0.03:
            predictions.append({**base, "error": "HTTP 503 after 5 retries", "error_kind": "request"})
            scores.append({"item_id": item["id"], "task": item["task"], "status": "failed", "earned": 0.0})
            continue
        letter = rng.choice("ABCD")
        thinking = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 400)))
        response = (
            f"<think>{thinking}</think>The answer is \\boxed{{{letter}}}"
            if roll < 0.5
            else f"\\boxed{{{letter}}}"
        )
        finish = "length" if roll > 0.98 else "stop"
        predictions.append({**base, "response": response, "finish_reason": finish})
        status = "unparseable" if roll > 0.95 else "ok"
        earned = 1.0 if status == "ok" and letter == item["answer"] else 0.0
        scores.append({"item_id": item["id"], "task": item["task"], "status": status,
                       "extracted": letter if status == "ok" else None, "earned": earned,
                       "discipline": item["category"], "video_id": item["video_id"]})  # fmt: skip
    (run / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in predictions))
    (run / "item_scores.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scores))


class Server:
    def __init__(self, app: Any) -> None:
        import uvicorn

        from expvid.view.serve import bind

        self.socket = bind("127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}/"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


NAIVE = """() => {
  const v = window.expvidView, data = v.state.data;
  const box = document.createElement('div');
  box.style.cssText = 'position:absolute;left:0;top:0;width:100%';
  const t0 = performance.now();
  const fragment = document.createDocumentFragment();
  for (let i = 0; i < data.rows.length; i++) fragment.append(v.rowElement(data, i, i, false, {}));
  box.append(fragment);
  document.body.append(box);
  void box.offsetHeight;  // force style and layout of every row
  const t1 = performance.now();
  box.remove();
  return t1 - t0;
}"""

VIRTUAL = """() => {
  const v = window.expvidView;
  const list = document.querySelector('#list');
  list.scrollTop = 0;
  const t0 = performance.now();
  v.renderList(true);
  void list.offsetHeight;
  return performance.now() - t0;
}"""

SCROLL = """() => {
  const v = window.expvidView;
  const list = document.querySelector('#list');
  const t0 = performance.now();
  list.scrollTop = list.scrollHeight / 2;
  v.renderList(true);
  void list.offsetHeight;
  return performance.now() - t0;
}"""

FILTER = """(term) => {
  const input = document.querySelector('#f-q');
  const t0 = performance.now();
  input.value = term;
  input.dispatchEvent(new Event('input', {bubbles: true}));
  void document.querySelector('#list').offsetHeight;
  const t1 = performance.now();
  input.value = '';
  input.dispatchEvent(new Event('input', {bubbles: true}));
  return t1 - t0;
}"""


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--verbose", action="store_true", help="print the page's resource timings")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    from expvid.view import ViewSession, create_app
    from expvid.view.rows import rows_json
    from expvid.view.serve import warm

    rng = random.Random(0)
    with tempfile.TemporaryDirectory(prefix="view-bench-") as tmp:
        base = Path(tmp)
        items = make_dataset(base / "data", args.items, rng)
        runs = [base / f"run{k}" for k in range(args.runs)]
        for k, run in enumerate(runs):
            make_run(run, base / "data", items, f"model-{k}", rng)

        started = time.perf_counter()
        session = ViewSession(runs)
        open_s = time.perf_counter() - started
        started = time.perf_counter()
        warm(session)  # what `expvid view` does before printing its URL: the list and the overview
        rows_s = time.perf_counter() - started
        payload = rows_json(session)
        print(f"{args.items} items x {args.runs} run(s); rows JSON {len(payload) / 1e6:.1f} MB")
        print(
            f"server: open runs + dataset {open_s:.1f} s, rows + JSON + overview {rows_s * 1000:.0f} ms "
            "(again after each change of the run files)"
        )

        results: dict[str, list[float]] = {}
        with Server(create_app(session)) as server, sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox", "--disable-gpu"]
            )
            for _ in range(args.repeat):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto(server.url + "#/items")
                page.wait_for_selector("[data-testid=row]")
                page.wait_for_function("() => document.body.dataset.listRenderedMs")
                timings = page.evaluate("() => window.expvidView.timings")
                results.setdefault("page-to-list", []).append(timings["listRendered"])
                results.setdefault("rows JSON", []).append(timings["itemsLoaded"])
                results.setdefault("  script start", []).append(timings["scriptStart"])
                results.setdefault("  data ready", []).append(timings["dataReady"])
                navigation = page.evaluate("() => performance.getEntriesByType('navigation')[0].toJSON()")
                if args.verbose:
                    print(
                        page.evaluate(
                            "() => performance.getEntriesByType('resource').map(r => [r.name.split('/').pop(), Math.round(r.startTime), Math.round(r.responseEnd)])"
                        )
                    )
                results.setdefault("  page HTML", []).append(navigation["responseEnd"])
                results.setdefault("  DOM ready", []).append(navigation["domContentLoadedEventEnd"])
                results.setdefault("virtual render", []).append(page.evaluate(VIRTUAL))
                results.setdefault("filter+render", []).append(page.evaluate(FILTER, "pipette 12"))
                results.setdefault("scroll+render", []).append(page.evaluate(SCROLL))
                n_dom = page.evaluate("() => document.querySelectorAll('[data-testid=row]').length")
                results.setdefault("naive render", []).append(page.evaluate(NAIVE))
                page.close()
            browser.close()

    print(f"\nChromium, median of {args.repeat} (rows in the DOM with the virtual list: {n_dom}):")
    medians = {name: statistics.median(values) for name, values in results.items()}
    for name, value in medians.items():
        print(f"  {name:<16} {value:8.1f} ms")
    print(f"\nnaive / virtual render: {medians['naive render'] / medians['virtual render']:.0f}x")
    print(f"page-to-list {medians['page-to-list'] / 1000:.2f} s vs target 1 s: "
          f"{'OK' if medians['page-to-list'] < 1000 else 'OVER'}")  # fmt: skip
    return 0 if medians["page-to-list"] < 1000 else 1


if __name__ == "__main__":
    sys.exit(main())
