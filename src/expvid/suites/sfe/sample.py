"""A small SFE set in the published shapes: English and Chinese records plus their images.

Nine questions per language (`20250515-en/sfe.jsonl`, `20250515-zh/sfe.jsonl`) over images drawn
with PIL in `images/`: multiple choice with lettered options, exact match, open questions, and
two box-grounding tasks (E011 with two boxes, E012 with one) whose gold boxes are drawn as
bright rectangles on a dark "SAR" image. One record carries its own `cognitive_level`; one item
uses two images. Both languages share the images, as the release does.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from expvid.suites.release_io import claim_sample_dir

SUITE = "sfe"
OWNED = ("20250515-en", "20250515-zh", "images")
SIZE = (160, 120)

BOXES_E011 = [[0.10, 0.20, 0.30, 0.40], [0.55, 0.60, 0.80, 0.90]]
BOXES_E012 = [[0.40, 0.40, 0.60, 0.70]]


def _box_text(boxes: list[list[float]]) -> str:
    return "[" + ";".join(",".join(f"{v:.2f}" for v in box) for box in boxes) + "]"


#: (id, field, question_type, question en, question zh, options en, options zh, answer en, answer zh, images, extra)
QUESTIONS: list[tuple[Any, ...]] = [
    (
        "A001/0001",
        "Astronomy",
        "mcq",
        "What is the morphology of the galaxy in the image?",
        "图中星系的形态是什么？",
        ["A: spiral", "B: elliptical", "C: merging", "D: edge-on"],
        ["A: 旋涡星系", "B: 椭圆星系", "C: 并合星系", "D: 侧向星系"],
        "A",
        "A",
        ["galaxy.png"],
        {},
    ),
    (
        "A010/0002",
        "Astronomy",
        "exact_match",
        "Estimate the radial velocity of the star in km/s from the spectrum.",
        "根据光谱估计该恒星的视向速度（km/s）。",
        [],
        [],
        "-35",
        "-35",
        ["spectrum.png"],
        {"cognitive_level": "L2"},
    ),
    (
        "C001/0003",
        "Chemistry",
        "exact_match",
        "How many carbon atoms does the molecule contain?",
        "该分子含有多少个碳原子？",
        [],
        [],
        "6",
        "6",
        ["molecule.png"],
        {},
    ),
    (
        "C004/0004",
        "Chemistry",
        "open_ended",
        "Describe the molecule shown in the image.",
        "描述图中所示的分子。",
        [],
        [],
        "Benzene: a planar ring of six carbon atoms with alternating double bonds.",
        "苯：由六个碳原子组成的平面环，含有交替的双键。",
        ["molecule.png"],
        {},
    ),
    (
        "E011/0005",
        "Earth",
        "exact_match",
        "Count the ships in the SAR image and give a bounding box for each.",
        "统计SAR图像中的船只数量，并给出每艘船的边界框。",
        [],
        [],
        _box_text(BOXES_E011),
        _box_text(BOXES_E011),
        ["sar_e011.png"],
        {},
    ),
    (
        "E012/0006",
        "Earth",
        "exact_match",
        "Locate the aircraft in the infrared image with a bounding box.",
        "用边界框定位红外图像中的飞机。",
        [],
        [],
        _box_text(BOXES_E012),
        _box_text(BOXES_E012),
        ["sar_e012.png"],
        {},
    ),
    (
        "L001/0007",
        "Life",
        "exact_match",
        "How many fragment ion peaks above 20% intensity are in the two spectra?",
        "两张谱图中强度高于20%的碎片离子峰共有多少个？",
        [],
        [],
        "12",
        "12",
        ["spectrum.png", "peaks.png"],
        {},
    ),
    (
        "M001/0008",
        "Material",
        "mcq",
        "Which description matches the lattice in the image?",
        "哪一项描述与图中的晶格相符？",
        ["A: simple cubic", "B: body-centred cubic", "C: face-centred cubic", "D: hexagonal"],
        ["A: 简单立方", "B: 体心立方", "C: 面心立方", "D: 六方"],
        "C",
        "C",
        ["lattice.png"],
        {},
    ),
    (
        "M010/0009",
        "Material",
        "open_ended",
        "Is the material a metal or a semiconductor? Estimate its band gap.",
        "该材料是金属还是半导体？估计其带隙。",
        [],
        [],
        "A semiconductor with a band gap of about 1.1 eV.",
        "半导体，带隙约为1.1 eV。",
        ["bands.png"],
        {},
    ),
]


def _draw_images(folder: Path) -> None:
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
    for name, boxes in (("sar_e011.png", BOXES_E011), ("sar_e012.png", BOXES_E012)):
        sar = Image.new("L", SIZE, 30)
        draw = ImageDraw.Draw(sar)
        for x1, y1, x2, y2 in boxes:
            draw.rectangle([x1 * width, y1 * height, x2 * width, y2 * height], fill=230)
        sar.save(folder / name)


def _record(entry: tuple[Any, ...], language: str) -> dict[str, Any]:
    raw_id, field, kind, q_en, q_zh, o_en, o_zh, a_en, a_zh, images, extra = entry
    english = language == "en"
    return {
        "id": raw_id,
        "field": field,
        "question_type": kind,
        "question": q_en if english else q_zh,
        "options": o_en if english else o_zh,
        "answer": a_en if english else a_zh,
        "images": [f"images/{name}" for name in images],
        **extra,
    }


@dataclass(frozen=True)
class SFESample:
    root: Path
    seed: int
    questions: dict[str, int]
    images: int
    seconds: float


def make_sfe_sample(directory: Path | str, seed: int = 0, *, force: bool = False) -> SFESample:
    """Write the sample into `directory` (empty, or a previous sample with `force`)."""
    started = time.perf_counter()
    root = Path(directory).expanduser()
    claim_sample_dir(root, SUITE, seed, force=force, owned=OWNED)
    _draw_images(root / "images")
    counts = {}
    for language in ("en", "zh"):
        folder = root / f"20250515-{language}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps(_record(entry, language), ensure_ascii=False) for entry in QUESTIONS]
        (folder / "sfe.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        counts[language] = len(lines)
    return SFESample(
        root=root,
        seed=seed,
        questions=counts,
        images=len(list((root / "images").iterdir())),
        seconds=time.perf_counter() - started,
    )
