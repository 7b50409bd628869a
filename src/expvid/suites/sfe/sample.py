"""A small SFE set in the published shapes: English and Chinese records plus their images.

Nine questions per language (`20250515-en/sfe.jsonl`, `20250515-zh/sfe.jsonl`) over images drawn
with PIL in `images/`: multiple choice with lettered options, exact match, open questions, and
two box-grounding tasks (E011 with two boxes, E012 with one) whose gold boxes are drawn as
bright rectangles on a dark "SAR" image. One record carries its own `cognitive_level`; one item
uses two images. Both languages share the images, as the release does. The questions are data, in
`sample_questions.json`.
"""

from __future__ import annotations

import json
import time
from importlib import resources
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from expvid.suites.release_io import claim_sample_dir
from expvid.suites.sample_report import SampleReport

SUITE = "sfe"
OWNED = ("20250515-en", "20250515-zh", "images")
SIZE = (160, 120)

#: The questions, in both languages (data, so they read and edit as text): per question its id, field,
#: question type, images, gold `boxes` for a grounding task (the answer, and what its image shows),
#: fields the release records carry besides (`extra_fields`), and per language its question,
#: options and answer.
QUESTIONS_FILE = "sample_questions.json"
QUESTIONS: list[dict[str, Any]] = json.loads(
    resources.files(__package__).joinpath(QUESTIONS_FILE).read_text(encoding="utf-8")
)
#: The two ships' boxes of the E011 grounding question (what a correct answer states).
BOXES_E011: list[list[float]] = next(q["boxes"] for q in QUESTIONS if q["id"] == "E011/0005")


def _box_text(boxes: list[list[float]]) -> str:
    return "[" + ";".join(",".join(f"{v:.2f}" for v in box) for box in boxes) + "]"


def _draw_images(folder: Path, questions: list[dict[str, Any]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    width, height = SIZE
    galaxy = Image.new("RGB", SIZE, (5, 5, 20))
    draw = ImageDraw.Draw(galaxy)
    for r in range(40, 4, -6):
        draw.ellipse([80 - r, 60 - r // 2, 80 + r, 60 + r // 2], outline=(200, 200, 255 - r))
    galaxy.save(folder / "galaxy.png")
    for name, peaks in (("spectrum.png", (30, 70, 110)), ("peaks.png", (20, 50, 60, 90, 130))):
        image = Image.new("RGB", SIZE, "white")
        draw = ImageDraw.Draw(image)
        draw.line([(0, height - 10), (width, height - 10)], fill="black")
        for x in peaks:
            draw.line([(x, height - 10), (x, 20 + x % 40)], fill="navy", width=2)
        image.save(folder / name)
    molecule = Image.new("RGB", SIZE, "white")
    draw = ImageDraw.Draw(molecule)
    hexagon = [(80, 25), (110, 42), (110, 78), (80, 95), (50, 78), (50, 42)]
    draw.polygon(hexagon, outline="black")
    molecule.save(folder / "molecule.png")
    lattice = Image.new("RGB", SIZE, "white")
    draw = ImageDraw.Draw(lattice)
    for x in range(30, 140, 25):
        for y in range(20, 110, 25):
            draw.ellipse([x - 3, y - 3, x + 3, y + 3], fill="darkred")
    lattice.save(folder / "lattice.png")
    bands = Image.new("RGB", SIZE, "white")
    draw = ImageDraw.Draw(bands)
    draw.arc([10, 10, 150, 60], 0, 180, fill="blue")
    draw.arc([10, 70, 150, 120], 180, 360, fill="red")
    bands.save(folder / "bands.png")
    for question in questions:
        if "boxes" not in question:
            continue
        sar = Image.new("L", SIZE, 30)
        draw = ImageDraw.Draw(sar)
        for x1, y1, x2, y2 in question["boxes"]:
            draw.rectangle([x1 * width, y1 * height, x2 * width, y2 * height], fill=230)
        sar.save(folder / question["images"][0])


def _record(question: dict[str, Any], language: str) -> dict[str, Any]:
    """The question as the release's file for `language` holds it."""
    text = question[language]
    boxes = question.get("boxes")
    return {
        "id": question["id"],
        "field": question["field"],
        "question_type": question["question_type"],
        "question": text["question"],
        "options": text.get("options", []),
        "answer": _box_text(boxes) if boxes else text["answer"],
        "images": [f"images/{name}" for name in question["images"]],
        **question.get("extra_fields", {}),
    }


def make_sfe_sample(directory: Path | str, seed: int = 0, *, force: bool = False) -> SampleReport:
    """Write the sample into `directory` (empty, or a previous sample with `force`)."""
    started = time.perf_counter()
    root = Path(directory).expanduser()
    claim_sample_dir(root, SUITE, seed, force=force, owned=OWNED)
    _draw_images(root / "images", QUESTIONS)
    counts = {}
    for language in ("en", "zh"):
        folder = root / f"20250515-{language}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps(_record(question, language), ensure_ascii=False) for question in QUESTIONS]
        (folder / "sfe.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        counts[language] = len(lines)
    what = ", ".join(f"{n} {language} questions" for language, n in counts.items())
    images = len(list((root / "images").iterdir()))
    return SampleReport(root=root, seconds=time.perf_counter() - started, what=f"{what}, {images} images")
