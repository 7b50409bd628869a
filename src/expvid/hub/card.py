"""The dataset card (README.md) of a benchmark published on the Hub: YAML metadata, then what a user needs.

The YAML header is what the Hub and `datasets` read: `configs` (one per task, named like the ExpVid
release's own card, `level1_tools`, with its annotation file as the `test` split), `dataset_info`
(each config's column types, `expvid.hub.features`: without them `datasets` reads completeness
verification's `options` as untyped JSON), `license`, `task_categories`, `size_categories`,
`pretty_name`. The body gives counts per task and discipline,
the agreement between the two expert reviews, the build and verification summary, the fields, and
how to load it (`expvid eval --data hf:...`, `datasets.load_dataset`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import yaml

from expvid.hub.export_summary import ExportSummary
from expvid.schema.dataset import TaskSpec

FIELDS = (
    ("id", "record id, unique within its task file (items are `<task>/<id>`)"),
    (
        "video_path",
        "the clip, relative to the repository root; names are content hashes and reveal no answer",
    ),
    ("question", "the question text, verbatim"),
    (
        "options",
        "letter -> option text (multiple-choice tasks only); in `datasets` a struct of the task's letters, "
        "null where an item has fewer options",
    ),
    (
        "answer",
        "a letter; a step number (step_prediction); step numbers (sequence_generation); one text per blank (Level 3)",
    ),
    ("asr_caption", "the narration of the clip; not shown to models in the main setting (an ablation only)"),
    ("video_id", "the source experiment"),
    ("category", "the discipline"),
)


def config_name(spec: TaskSpec) -> str:
    return f"level{spec.level}_{spec.name}" if spec.level else spec.name


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return label
    return "100K<n<1M"


def render_card(
    *,
    specs: list[TaskSpec],
    features: dict[str, list[dict[str, Any]]] | None = None,
    empty_tasks: list[str] | None = None,
    summary: ExportSummary,
    pretty_name: str,
    license_id: str,
    repo_id: str | None,
    dropped_fields: list[str],
) -> str:
    meta: dict[str, Any] = {
        "pretty_name": pretty_name,
        "license": license_id,
        "language": ["en"],
        "task_categories": ["video-text-to-text"],
        "tags": ["video", "benchmark", "scientific-experiments", "laboratory", "expvid"],
        "size_categories": [_size_category(summary.total)],
        "configs": [
            {"config_name": config_name(spec), "data_files": [{"split": "test", "path": spec.path}]}
            for spec in specs
        ],
    }
    declared = features or {}
    if any(config_name(spec) in declared for spec in specs):
        meta["dataset_info"] = [
            {"config_name": config_name(spec), "features": declared[config_name(spec)]}
            for spec in specs
            if config_name(spec) in declared
        ]
    header = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    where = repo_id or "ORG/NAME"
    parts = [
        f"---\n{header}---\n",
        f"# {pretty_name}\n",
        f"A scientific-experiment video benchmark in the ExpVid release layout: {summary.total} expert-verified "
        f"item(s) over {len(specs)} task(s). Every item was drafted by the `expvid build` pipeline and accepted "
        "by two domain experts (or an adjudicator) on the `expvid` verification platform.\n",
        "## Use\n",
        "```bash\n"
        f"expvid eval --data hf:{where} --model MODEL --out runs/MODEL      # fetches only the tasks you select\n"
        f"expvid data fetch expvid DATA --repo {where} --tasks tools         # or fetch first (pinned, verified)\n"
        "```\n",
        "```python\n"
        "from datasets import load_dataset\n"
        f'tools = load_dataset("{where}", "{config_name(specs[0]) if specs else "level1_tools"}", split="test")\n'
        "```\n",
        "Prompts, frame counts and metrics follow the ExpVid paper (appendix F); `expvid export lmms-eval` "
        "turns this repository into an lmms-eval task package.\n",
        "## Items per task and discipline\n",
        _counts_table(specs, summary),
        *(
            [f"No verified item yet (empty files, no config): {', '.join(empty_tasks)}.\n"]
            if empty_tasks
            else []
        ),
        "## Agreement between the two reviews\n",
        _agreement_table(summary),
        "## How it was built and verified\n",
        _provenance_lines(summary, dropped_fields),
        "## Files and fields\n",
        "`annotations/level{1,2,3}/<task>.jsonl` (one JSON record per line; one config per task) and `videos/`.\n",
        "\n".join(f"- `{name}`: {text}" for name, text in FIELDS) + "\n",
        "## License\n",
        f"`{license_id}`. The clips are cut from the source experiment videos; check their terms before any "
        "use beyond research evaluation.\n",
    ]
    return "\n".join(parts)


def _counts_table(specs: list[TaskSpec], summary: ExportSummary) -> str:
    disciplines = summary.disciplines
    head = "| task | level | " + " | ".join(disciplines) + " | total |"
    rule = "|---|---|" + "---|" * (len(disciplines) + 1)
    rows = [head, rule]
    for spec in specs:
        counts: Counter[str] = summary.counts.get(spec.name, Counter())
        cells = [str(counts.get(d, 0)) for d in disciplines]
        rows.append(
            f"| {spec.name} | {spec.level or ''} | " + " | ".join(cells) + f" | {sum(counts.values())} |"
        )
    totals = [str(sum(summary.counts[t].get(d, 0) for t in summary.counts)) for d in disciplines]
    rows.append("| **all** | | " + " | ".join(totals) + f" | {summary.total} |")
    return "\n".join(rows) + "\n"


def _number(value: Any, digits: int) -> str:
    return "n/a" if not isinstance(value, int | float) else f"{value:.{digits}f}"


def _agreement_table(summary: ExportSummary) -> str:
    if not summary.agreement:
        return "No agreement figures were exported.\n"
    rows = [
        "Over items with both reviews; categories approve / edit / reject.\n",
        "| task | items | % agreement | Cohen's kappa | Gwet's AC1 |",
        "|---|---|---|---|---|",
    ]
    for task, stats in summary.agreement.items():
        rows.append(
            f"| {task} | {stats.get('n', 0)} | {_number(stats.get('percent_agreement'), 1)} | "
            f"{_number(stats.get('cohen_kappa'), 3)} | {_number(stats.get('gwet_ac1'), 3)} |"
        )
    return "\n".join(rows) + "\n"


def _provenance_lines(summary: ExportSummary, dropped_fields: list[str]) -> str:
    lines = []
    if summary.exported_at:
        lines.append(f"- exported from the verification platform at {summary.exported_at}")
    if summary.with_provenance:
        settled = ", ".join(f"{n} by {via}" for via, n in summary.settled_via.most_common())
        lines.append(
            f"- settled: {settled}; {summary.adjudicated} adjudicated; {summary.edited} edited by the reviewers"
        )
        lines.append(
            f"- {summary.judgements} expert judgement(s) by {summary.annotators} reviewer(s)"
            + (
                f", median {summary.median_minutes:.1f} min each"
                if summary.median_minutes is not None
                else ""
            )
        )
        if summary.draft_models:
            models = ", ".join(f"{m} ({n})" for m, n in summary.draft_models.most_common())
            lines.append(f"- drafting model(s), with draft counts: {models}")
        if summary.flags:
            flags = ", ".join(f"{k} ({n})" for k, n in summary.flags.most_common())
            lines.append(f"- audit flags raised during the build (reviewers saw them): {flags}")
    else:
        lines.append("- no provenance records were found with the export")
    if dropped_fields:
        lines.append(
            f"- fields outside the release format were left out of the annotation files: {', '.join(dropped_fields)}"
        )
    lines.append(
        "- names, justifications and source paths stay in the internal provenance, not in this repository"
    )
    return "\n".join(lines) + "\n"
