"""`expvid platform export --format hf`: turn a verified export into a Hub-ready dataset repository.

Runs after the platform's exporter, on its output directory, and changes only what the Hub needs:
- each task's `annotations/level{N}/<task>.jsonl` is rewritten with the release fields only and one
  type per column (the release mixes `2` and `"2"` in step_prediction answers; `datasets` then falls
  back to an untyped column), order and texts unchanged;
- `README.md`: the dataset card (`expvid.hub.card`) with one `configs` entry per task and its column
  types (`expvid.hub.features`), so `datasets` types every column instead of falling back to JSON;
- `.gitattributes`: videos through LFS, as the Hub expects;
- internal files the exporter leaves in the folder (provenance with reviewer names, platform
  manifests with local paths) are written to `.gitignore` (for `git add`) and returned in
  `upload_ignore`, which the CLI turns into the `--exclude` flags of the `hf upload` command it prints
  (`upload_folder` does not read `.gitignore`).
The result still loads with `expvid eval --data DIR` (it is the release layout) and with
`datasets.load_dataset(DIR, "level1_tools")` or `load_dataset("json", data_files=...)`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.hub.card import config_name, render_card
from expvid.hub.export_summary import ExportSummary, summarize
from expvid.hub.features import task_features
from expvid.schema import AnswerType, DataError, RecordProblem, read_jsonl
from expvid.suites.expvid_suite import EXPVID_TASKS, RECORD_FIELDS, load_expvid

GITATTRIBUTES = """*.mp4 filter=lfs diff=lfs merge=lfs -text
*.mkv filter=lfs diff=lfs merge=lfs -text
*.webm filter=lfs diff=lfs merge=lfs -text
"""
#: Exporter outputs that are not for publication (names, justifications, local paths, database URL).
INTERNAL = ("provenance.jsonl", "verification.json", "internal/", ".internal/")


@dataclass
class HubRepoReport:
    root: Path
    configs: list[str] = field(default_factory=list)
    #: Tasks whose file holds no verified item (kept, without a config).
    empty_tasks: list[str] = field(default_factory=list)
    items: int = 0
    dropped_fields: list[str] = field(default_factory=list)
    summary: ExportSummary | None = None
    upload_ignore: list[str] = field(default_factory=list)


def make_hub_repo(
    root: Path,
    *,
    pretty_name: str | None = None,
    license_id: str = "cc-by-nc-4.0",
    repo_id: str | None = None,
    internal: Path | None = None,
) -> HubRepoReport:
    """Make the ExpVid-layout benchmark at `root` a Hub dataset repository (in place)."""
    root = root.resolve()
    dataset = load_expvid(root, check_media=True)
    if dataset.problems:
        raise DataError(dataset.problems)
    missing = dataset.missing_media()
    if missing:  # a release without its videos would publish items every model fails
        listing = "\n  ".join(str(media.path) for media in missing)
        raise DataError(f"{root}: {len(missing)} video file(s) not found:\n  {listing}")
    report = HubRepoReport(root=root)
    dropped: set[str] = set()
    features: dict[str, list[dict[str, Any]]] = {}
    for spec in dataset.tasks:
        task_dropped, records = _normalise(root / spec.path, spec.answer_type)
        dropped |= task_dropped
        features[config_name(spec)] = task_features(records, spec.answer_type)
    reloaded = load_expvid(root, check_media=True, strict=True)
    if [i.id for i in reloaded] != [i.id for i in dataset] or [i.answer for i in reloaded] != [
        i.answer for i in dataset
    ]:
        raise DataError(f"{root}: rewriting the annotation files changed the items (please report this)")
    report.items = len(reloaded)
    report.dropped_fields = sorted(dropped)
    report.summary = summarize(root, reloaded, internal)
    # A task file with no verified item stays (expvid reads it as "task present, nothing verified") but
    # gets no config: `datasets` cannot build a split from an empty file, and the Hub viewer would fail.
    counts = reloaded.by_task()
    specs = [spec for spec in EXPVID_TASKS if spec in reloaded.tasks and counts.get(spec.name)]
    report.empty_tasks = [spec.name for spec in reloaded.tasks if not counts.get(spec.name)]
    report.configs = [config_name(spec) for spec in specs]
    card = render_card(
        specs=specs,
        features=features,
        empty_tasks=report.empty_tasks,
        summary=report.summary,
        pretty_name=pretty_name or root.name,
        license_id=license_id,
        repo_id=repo_id,
        dropped_fields=report.dropped_fields,
    )
    (root / "README.md").write_text(card, encoding="utf-8")
    (root / ".gitattributes").write_text(GITATTRIBUTES, encoding="utf-8")
    report.upload_ignore = [name for name in INTERNAL if (root / name.rstrip("/")).exists()]
    if report.upload_ignore:
        (root / ".gitignore").write_text(
            "".join(f"/{name}\n" for name in report.upload_ignore), encoding="utf-8"
        )
    return report


def _normalise(path: Path, answer_type: AnswerType) -> tuple[set[str], list[dict[str, Any]]]:
    """Rewrite one task file with the release fields and one type per column; returns the dropped
    field names and the records as written."""
    records: list[dict[str, Any]] = []
    for _line, record in read_jsonl(path):
        if isinstance(record, RecordProblem):
            raise DataError([record])
        records.append(record)
    ids_are_ints = all(isinstance(r["id"], int) and not isinstance(r["id"], bool) for r in records)
    dropped: set[str] = set()
    out = []
    for record in records:
        dropped |= set(record) - set(RECORD_FIELDS)
        clean: dict[str, Any] = {
            "id": record["id"] if ids_are_ints else str(record["id"]),
            "video_path": record["video_path"],
            "question": record["question"],
        }
        if answer_type is AnswerType.CHOICE:
            clean["options"] = {letter: str(text) for letter, text in record["options"].items()}
        answer = record["answer"]
        if answer_type is AnswerType.STEP_NUMBER:
            answer = int(answer)
        elif answer_type is AnswerType.STEP_SEQUENCE:
            answer = [str(int(step)) for step in answer]
        clean["answer"] = answer
        clean["asr_caption"] = record.get("asr_caption") or ""
        clean["video_id"] = str(record["video_id"])
        clean["category"] = record["category"]
        out.append(clean)
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out), encoding="utf-8")
    tmp.replace(path)
    return dropped, out


def describe(report: HubRepoReport, repo_id: str | None) -> list[str]:
    """What the CLI prints after `--format hf`: the configs, then the upload command that leaves internals out."""
    excludes = " ".join(
        f"--exclude '{name}*'" if name.endswith("/") else f"--exclude {name}" for name in report.upload_ignore
    )
    target = repo_id or "ORG/NAME"
    lines = [
        f"Hub dataset repository: {len(report.configs)} config(s) ({', '.join(report.configs)}), {report.items} item(s)",
        f"dataset card: {report.root / 'README.md'}",
        f"upload: hf upload {target} {report.root} . --repo-type dataset {excludes}".rstrip(),
    ]
    if report.dropped_fields:
        lines.append(f"fields outside the release format left out: {', '.join(report.dropped_fields)}")
    return lines
