"""The item list: one compact row per item, one cell per run, ready to filter in the browser.

Rows are short on purpose (one-letter keys): a 10,000-item run with two runs is a few MB of JSON,
filtered and drawn in the page without asking the server again. Each cell carries its outcome
(`expvid.view.outcome`), the answer as extraction read it, and flags; each row a lower-cased text
that the search box matches (id, question, options, gold, answers, the start of each response):
the question comes first in it, on one line, and is what the list shows.
"""

from __future__ import annotations

from typing import Any

from expvid.schema import Item, ItemScore, Prediction
from expvid.view.display import SEARCH_RESPONSE_CHARS, answer_text, gold_text
from expvid.view.outcome import Verdict, classify
from expvid.view.session import RunView, ViewSession, dumps


def verdict_of(
    run: RunView, item_id: str, sample: int = 0
) -> tuple[Verdict, Prediction | None, ItemScore | None]:
    prediction = run.files.predictions.get((item_id, sample))
    score = run.files.item_scores.get((item_id, sample))
    pred = prediction.model if prediction is not None else None
    scored = score.model if score is not None else None
    selected = item_id in run.selected_ids
    return classify(pred, scored, scored_at=run.files.item_scores_mtime, selected=selected), pred, scored


def _answer(
    run: RunView, item: Item | None, verdict: Verdict, pred: Prediction | None, score: ItemScore | None
) -> str:
    if score is not None and verdict.outcome.value not in ("unscored", "failed"):
        return answer_text(score.extracted)
    if pred is not None and pred.ok and item is not None and run.dataset.suite is not None:
        extraction = run.dataset.suite.extract(pred.response, item)  # not scored yet: what it would read
        return answer_text(extraction.value)
    return ""


def _cell(run: RunView, item_id: str, item: Item | None) -> tuple[dict[str, Any], str]:
    verdict, pred, score = verdict_of(run, item_id)
    flags = ""
    if verdict.truncated:
        flags += "T"
    if verdict.refusal:
        flags += "R"
    if pred is not None and pred.cached:
        flags += "C"
    cell: dict[str, Any] = {
        "o": verdict.outcome.value,
        "a": _answer(run, item, verdict, pred, score),
        "w": verdict.why,
    }
    if flags:
        cell["f"] = flags
    if verdict.error_kind:
        cell["k"] = verdict.error_kind
    if score is not None:
        cell["e"], cell["p"] = score.earned, score.possible
    text = ""
    if pred is not None:
        text = (pred.response or pred.error or "")[:SEARCH_RESPONSE_CHARS]
    return cell, text


def build_rows(session: ViewSession) -> dict[str, Any]:
    """The whole list: rows, the runs they have cells for, and the values the filters offer."""
    rows = []
    tasks: dict[str, str] = {}
    disciplines: set[str] = set()
    for item_id in session.item_ids():
        item = session.item(item_id)
        task = item.task if item is not None else item_id.split("/", 1)[0]
        discipline = item.discipline if item is not None else None
        if discipline is None:
            for run in session.runs:
                score = run.files.item_scores.get((item_id, 0))
                if score is not None and score.model.discipline:
                    discipline = score.model.discipline
                    break
        cells, texts = [], []
        for run in session.runs:
            cell, text = _cell(run, item_id, item)
            cells.append(cell)
            texts.append(text)
        # The question on one line first (the list shows its start), then what else search reads;
        # the page adds the id, gold and answers, which the row carries anyway.
        search = [" ".join(item.question.split()) if item is not None else "", *texts]
        if item is not None and item.options:
            search.extend(item.options.values())
        row: dict[str, Any] = {
            "i": item_id,
            "t": task,
            "d": discipline or "",
            "g": gold_text(item),
            "r": cells,
            "s": "\n".join(search),
        }
        if item is not None and item.level is not None:
            row["l"] = item.level
        rows.append(row)
        tasks.setdefault(task, task)
        if discipline:
            disciplines.add(discipline)
    for run in session.runs:
        for name, spec in run.dataset.tasks.items():
            if name in tasks:
                tasks[name] = spec.paper_name
    return {
        "version": session.version,
        "runs": [{"key": run.key, "label": run.label, "spec": run.spec} for run in session.runs],
        "tasks": [{"name": name, "label": label} for name, label in tasks.items()],
        "disciplines": sorted(disciplines),
        "rows": rows,
    }


def rows_json(session: ViewSession) -> str:
    """The list as JSON text, built once per data version (the served page fetches it as is)."""
    return str(session.memo("rows_json", lambda: dumps(session.memo("rows", lambda: build_rows(session)))))
