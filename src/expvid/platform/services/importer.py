"""`expvid platform import DIR`: load a candidate directory (ExpVid release layout + sidecars), batch
after batch.

Everything is validated before anything is written: a bad line is reported as `file:line: problem`
and, by default, nothing is imported until the directory is fixed (`skip_bad=True` imports the good
records and reports the rest).

Items are matched with the platform's by their stable identity (`services/identity.py`), never by
`<task>/<id>`: a second directory (another build, other experiments) adds its items next to the
first one's, and a rebuild of the same campaign finds each item again. What happens to each item is
in the returned `ImportReport` (`services/import_report.py`): added, unchanged, changed (a new
version, sent back to review; earlier decisions kept in its history), restored, removed upstream
(flagged and withdrawn, never deleted) or conflict (not applied; the CLI exits non-zero).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from expvid.platform.db.engine import Database
from expvid.platform.services.content import Content, content_problems
from expvid.platform.services.errors import SYSTEM, Actor
from expvid.platform.services.identity import (
    directory_namespace,
    fallback_key,
    fingerprint,
    is_sha256,
    uid_problem,
)
from expvid.platform.services.import_report import ImportReport
from expvid.platform.services.import_types import (
    ImportRefused,
    ParsedDirectory,
    ParsedItem,
    ParsedSegment,
    inside,
)
from expvid.platform.services.recipe_hooks import hooks_for_task, importer_for
from expvid.platform.services.tasks import TASKS, annotation_file
from expvid.platform.services.text_checks import nul_problems, read_text_file
from expvid.schema import RecordProblem, read_jsonl


def _read_sidecar(path: Path, problems: list[RecordProblem]) -> list[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        return []
    good = []
    for line, value in read_jsonl(path):
        if isinstance(value, RecordProblem):
            problems.append(value)
        elif bad := nul_problems(path, line, value):
            problems.extend(bad)
        else:
            good.append((line, value))
    return good


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _provenance(root: Path, problems: list[RecordProblem]) -> dict[str, tuple[Path, int, dict[str, Any]]]:
    provenance: dict[str, tuple[Path, int, dict[str, Any]]] = {}
    path = root / "provenance.jsonl"
    uids: dict[str, int] = {}
    for line, value in _read_sidecar(path, problems):
        key = value.get("item")
        if not isinstance(key, str) or "/" not in key:
            problems.append(RecordProblem(path, line, "missing 'item' (\"<task>/<id>\")"))
            continue
        if key in provenance:
            problems.append(RecordProblem(path, line, f"item {key} appears twice"))
            continue
        bad = []
        if "uid" in value:
            problem = uid_problem(value["uid"])
            if problem:
                bad.append(problem)
            elif value["uid"] in uids:
                bad.append(f"uid {value['uid']} is also the uid of line {uids[value['uid']]}")
            else:
                uids[value["uid"]] = line
        if "content_sha256" in value and not is_sha256(value["content_sha256"]):
            bad.append("'content_sha256' must be 64 lowercase hexadecimal digits")
        if bad:
            problems.extend(RecordProblem(path, line, message) for message in bad)
            continue
        provenance[key] = (path, line, value)
    return provenance


def _segments(root: Path, problems: list[RecordProblem]) -> dict[str, ParsedSegment]:
    segments: dict[str, ParsedSegment] = {}
    full_lists: dict[str, tuple[list[str], str]] = {}
    seg_path = root / "segments.jsonl"
    for line, value in _read_sidecar(seg_path, problems):
        key, video_id = value.get("segment_id"), _text(value.get("video_id"))
        steps, full = value.get("steps"), value.get("full_step_list")
        bad: list[str] = []
        if not isinstance(key, str) or not key:
            bad.append("missing 'segment_id'")
        if video_id is None:
            bad.append("missing 'video_id'")
        if not isinstance(full, list) or not all(isinstance(s, str) and s.strip() for s in full):
            bad.append("'full_step_list' must be a list of step texts")
            full = []
        if not isinstance(steps, list) or not steps:
            bad.append("'steps' must be a non-empty list")
            steps = []
        for i, step in enumerate(steps, start=1):
            number = step.get("number") if isinstance(step, dict) else None
            if not isinstance(number, int) or not 1 <= number <= len(full):
                bad.append(f"step {i}: 'number' must be a step of full_step_list (1-{len(full)})")
            elif not isinstance(step.get("text"), str) or not step["text"].strip():
                bad.append(f"step {i}: 'text' is missing")
        numbers: list[int] = [
            s["number"] for s in steps if isinstance(s, dict) and isinstance(s.get("number"), int)
        ]
        if any(b <= a for a, b in itertools.pairwise(numbers)):
            bad.append("step numbers must be increasing")
        if isinstance(key, str) and key in segments:
            bad.append(f"segment {key} appears twice")
        if video_id is not None and full:
            known = full_lists.get(video_id)
            if known is not None and known[0] != full:
                bad.append(f"full_step_list differs from the one given for {video_id} at {known[1]}")
            full_lists.setdefault(video_id, (list(full), f"{seg_path.name}:{line}"))
        if bad:
            problems.extend(RecordProblem(seg_path, line, message) for message in bad)
            continue
        assert isinstance(key, str) and video_id is not None
        segments[key] = ParsedSegment(key=key, video_id=video_id, record=value)
    return segments


def _record_problems(root: Path, task: str, value: dict[str, Any]) -> list[str]:
    spec = TASKS[task]
    bad = []
    if _text(value.get("id")) is None:
        bad.append("missing 'id'")
    video_path = value.get("video_path")
    if not isinstance(video_path, str) or inside(root, video_path) is None:
        bad.append(f"'video_path' must be a path inside {root}")
    elif not (root / video_path).is_file():
        bad.append(f"video file not found: {video_path}")
    if not isinstance(value.get("question"), str):
        bad.append("missing 'question'")
    if _text(value.get("video_id")) is None:
        bad.append("missing 'video_id'")
    if not isinstance(value.get("category"), str) or not value["category"].strip():
        bad.append("missing 'category' (the discipline)")
    if "answer" not in value:
        bad.append("missing 'answer'")
    options = value.get("options")
    if options is not None and not (
        isinstance(options, dict) and all(isinstance(v, str | int) for v in options.values())
    ):
        bad.append("'options' must map letters to texts")
    if spec.kind == "mcq" and not isinstance(options, dict):
        bad.append(f"{spec.title} records need 'options'")
    if not bad:
        options_text = {k: str(v) for k, v in options.items()} if isinstance(options, dict) else None
        bad.extend(content_problems(task, Content(value["question"], options_text, value["answer"])))
    return bad


def _covered(
    root: Path, items: list[ParsedItem], experiments: dict[str, Any], warnings: list[str]
) -> set[str]:
    """Experiments the directory speaks for: its items', experiments.jsonl's, and every experiment
    its curation report decided on (an experiment excluded by review is there, with no items)."""
    covered = {item.video_id for item in items} | set(experiments)
    path = root / "curation_report.json"
    if not path.is_file():
        return covered
    try:
        entries = json.loads(path.read_text(encoding="utf-8")).get("entries", [])
    except (ValueError, AttributeError, UnicodeDecodeError):
        warnings.append(f"{path}: not a curation report; only the experiments with items count as covered")
        return covered
    for entry in entries if isinstance(entries, list) else []:
        video_id = _text(entry.get("video_id")) if isinstance(entry, dict) else None
        if video_id is None:
            continue
        if entry.get("needs_video"):  # kept, but not drafted until its video is there: not a removal
            if video_id not in covered:
                warnings.append(
                    f"{path}: experiment {video_id} waits for its video; its items are left as they are"
                )
            continue
        covered.add(video_id)
    return covered


def read_directory(root: Path) -> tuple[ParsedDirectory, ImportReport]:
    """Read and check a candidate directory without touching the database."""
    root = root.resolve()
    report = ImportReport(root=root, namespace=directory_namespace(root))
    problems = report.problems
    if not root.is_dir():
        raise ImportRefused(report, f"{root}: not a directory")
    files = {task: annotation_file(root, task) for task in TASKS}
    present = {task: path for task, path in files.items() if path.is_file()}
    if not present:
        raise ImportRefused(
            report, f"{root}: no annotation files (expected annotations/level1/materials.jsonl etc.)"
        )

    provenance = _provenance(root, problems)
    prov_path = root / "provenance.jsonl"
    segments = _segments(root, problems)
    item_to_segment = {
        item_key: seg.key for seg in segments.values() for item_key in seg.record.get("items", []) or []
    }

    items: list[ParsedItem] = []
    seen: set[str] = set()
    keys: dict[str, str] = {}
    for task, path in present.items():
        spec = TASKS[task]
        hooks = hooks_for_task(task)
        declared = hooks.read_records(root, task) if hooks is not None else None
        for line, raw in read_jsonl(path) if declared is None else declared:
            if isinstance(raw, RecordProblem):
                problems.append(raw)
                continue
            value = raw
            nul = nul_problems(path, line, value)
            if nul:
                problems.extend(nul)
                continue
            bad = _record_problems(root, task, value)
            source_id = _text(value.get("id"))
            release_key = f"{task}/{source_id}"
            if source_id is not None and release_key in seen:
                bad.append(f"id {source_id} appears twice in {path.name}")
            prov = provenance.get(release_key, (prov_path, 0, {}))[2]
            uid = prov.get("uid")
            key = uid if isinstance(uid, str) else fallback_key(report.namespace, release_key)
            if source_id is not None and key in keys and keys[key] != release_key:
                bad.append(f"uid {key} is also the uid of {keys[key]}")
            if bad:
                problems.extend(RecordProblem(path, line, message) for message in bad)
                continue
            seen.add(release_key)
            keys[key] = release_key
            segment_key = prov.get("segment_id") or item_to_segment.get(release_key)
            if spec.level == 2 and segment_key is not None and segment_key not in segments:
                problems.append(
                    RecordProblem(path, line, f"segment {segment_key!r} is not in segments.jsonl")
                )
                continue
            whole = fingerprint(value, prov)
            given = prov.get("content_sha256")
            items.append(
                ParsedItem(
                    key=key,
                    release_key=release_key,
                    task=task,
                    record=value,
                    provenance=prov,
                    segment_key=segment_key if spec.level == 2 else None,
                    content_sha256=given if isinstance(given, str) else whole,
                    fingerprint=whole,
                    has_uid=isinstance(uid, str),
                )
            )
    for key, (path, line, _) in provenance.items():
        if key not in seen:
            report.warnings.append(f"{path}:{line}: provenance for an item that was not imported: {key}")
    with_uid = sum(1 for item in items if item.has_uid)
    report.identity = "uid" if with_uid == len(items) else ("directory" if with_uid == 0 else "mixed")

    experiments: dict[str, Any] = {}
    exp_path = root / "experiments.jsonl"
    for line, value in _read_sidecar(exp_path, problems):
        video_id = _text(value.get("video_id"))
        if video_id is None:
            problems.append(RecordProblem(exp_path, line, "missing 'video_id'"))
            continue
        experiments[video_id] = value
    papers = {}
    for video_id in {item.video_id for item in items} | set(experiments):
        paper = root / "papers" / f"{video_id}.md"
        if "/" not in video_id and paper.is_file():
            text = read_text_file(paper)
            if isinstance(text, RecordProblem):
                problems.append(text)
            else:
                papers[video_id] = text
    parsed = ParsedDirectory(
        root=root,
        namespace=report.namespace,
        items=items,
        segments=segments,
        experiments=experiments,
        covered=_covered(root, items, experiments, report.warnings),
        papers=papers,
    )
    return parsed, report


def parse_directory(
    root: Path,
) -> tuple[list[ParsedItem], dict[str, ParsedSegment], dict[str, Any], ImportReport]:
    """Read and check a candidate directory without touching the database (items, segments,
    experiments, and a report holding the problems)."""
    parsed, report = read_directory(root)
    return parsed.items, parsed.segments, parsed.experiments, report


def import_candidates(
    database: Database, root: Path, *, actor: Actor = SYSTEM, skip_bad: bool = False, assign: bool = True,
    annotators: int | None = None,
) -> ImportReport:  # fmt: skip
    """Import a candidate directory; raises `DataError` listing every bad line unless `skip_bad`.

    One write transaction: either every outcome in the report happened, or none did. New items need
    `annotators` independent judgements (1-5; default: the campaign's setting, the paper's 2 unless
    changed). A directory a recipe imports itself (`ReviewHooks.claims_directory`, e.g. judged
    items with the recipe's own annotator rule) goes to that recipe's importer.
    """
    from expvid.platform.services.upstream import apply_directory

    own = importer_for(Path(root))
    if own is not None:
        report: ImportReport = own.import_directory(
            database, Path(root), actor=actor, skip_bad=skip_bad, assign=assign
        )
        return report
    parsed, report = read_directory(root)
    if report.problems and not skip_bad:
        raise ImportRefused(report)
    with database.write() as db:
        apply_directory(db, parsed, report, actor=actor, assign=assign, annotators=annotators)
    return report
