"""A whole ProMQA-style campaign, end to end, with real parts on loopback.

sample sources (coded recordings, CaptainCook4D annotations) -> `expvid build --recipe promqa` with two
scripted generators and two prompt templates -> `expvid platform import` -> two annotators and an
adjudicator through the web app's own forms -> `expvid platform export --format promqa` ->
`expvid eval --suite promqa` with a Socratic model -> `expvid report`; and the construction tables
of the campaign (approval per template and generator, answer sources, agreement, cost).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from promqa_lab import BAD_QUESTIONS, PromqaLab
from promqa_reviewers import Reviewer, adjudication_form, correct, judge_form
from sqlalchemy import select
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.construction.recipes.promqa.verification import settle
from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply
from expvid.platform import PlatformSettings, create_app, open_database
from expvid.platform.config import PasswordPolicy
from expvid.platform.db.models import Assignment, Item, User
from expvid.platform.security.passwords import Passwords
from expvid.platform.services.errors import SYSTEM
from expvid.platform.services.users import add_user
from expvid.platform.testing import LiveServer
from expvid.suites.promqa import load_promqa

FAST = PasswordPolicy(time_cost=1, memory_kib=8, parallelism=1)
USERS = {"ann1": "annotator", "ann2": "annotator", "adj": "adjudicator"}


@dataclass
class Campaign:
    candidates: Path
    release: Path
    internal: Path
    db_url: str
    build: dict[str, Any]
    records: dict[str, dict[str, Any]]
    served: dict[str, int]


def _build(sources: Path, out: Path, server: LoopbackServer) -> dict[str, Any]:
    result = CliRunner().invoke(
        app,
        ["build", str(sources), "--recipe", "promqa", "--out", str(out),
         # The drafting model's server as --base-url and retries as --backend-option (eval's endpoint options).
         "--llm", "openai:gen-a", "--base-url", server.openai_base_url,
         "-R", f"generator=openai:gen-b@{server.openai_base_url}",
         "-R", "template=step-target,step-dot", "-R", "next=4", "-R", "missing=4", "-R", "others=2",
         "--price", "llm=2.5,10", "--backend-option", "max_retries=0", "--preset", "ultrafast", "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads((out / "build_report.json").read_text())
    return report


@pytest.fixture(scope="module")
def campaign(sample_sources: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Campaign]:
    root = tmp_path_factory.mktemp("promqa_campaign")
    lab = PromqaLab(bad_pairs={"gen-b": 1}, template_penalty={"step-dot": 1})
    with LoopbackServer(lab) as server:
        report = _build(sources=sample_sources, out=root / "cand", server=server)
    db_url = f"sqlite:///{root / 'platform.db'}"
    database = open_database(db_url)
    with database.write() as db:
        for name, role in USERS.items():
            add_user(
                db, Passwords(FAST), username=name, password=f"pw-{name}-secret", role=role, actor=SYSTEM
            )
    imported = CliRunner().invoke(app, ["platform", "import", str(root / "cand"), "--db", db_url])
    assert imported.exit_code == 0, imported.output
    records = {r["question_id"]: r for r in json.loads((root / "cand" / "examples.json").read_text())}
    served: dict[str, int] = {}
    settings = PlatformSettings(database_url=db_url, passwords=FAST)
    with LiveServer(create_app(settings, database=database)) as live:
        with database.read() as db:
            ids = {u.username: u.id for u in db.scalars(select(User))}
            keys = {i.id: i.key for i in db.scalars(select(Item))}
            mine = {
                name: sorted(db.scalars(select(Assignment.item_id).where(Assignment.user_id == ids[name])))
                for name in ("ann1", "ann2")
            }
        for name, careful in (("ann1", True), ("ann2", False)):
            reviewer = Reviewer(live.url, name, f"pw-{name}-secret")
            for item_id in mine[name]:
                page = reviewer.page(f"/items/{item_id}")
                record = records[keys[item_id].split("/", 1)[1]]
                response = reviewer.post(
                    f"/items/{item_id}/decision", judge_form(record, page, careful=careful)
                )
                assert response.status_code == 303 and "notice=saved" in response.headers["location"], (
                    response.text[-400:]
                )
                served[name] = served.get(name, 0) + 1
            reviewer.close()
        with database.read() as db:
            conflicts = sorted(db.scalars(select(Item.id).where(Item.state == "conflict")))
        adjudicator = Reviewer(live.url, "adj", "pw-adj-secret")
        for item_id in conflicts:
            page = adjudicator.page(f"/adjudicate/{item_id}")
            assert 'data-testid="recipe-graph"' in page and "Previous steps" in page
            record = records[keys[item_id].split("/", 1)[1]]
            response = adjudicator.post(f"/adjudicate/{item_id}", adjudication_form(record, page))
            assert response.status_code == 303 and "resolved" in response.headers["location"], response.text[
                -600:
            ]
        served["adj"] = len(conflicts)
        adjudicator.close()
    database.dispose()
    exported = CliRunner().invoke(
        app, ["platform", "export", str(root / "release"), "--db", db_url, "--format", "promqa"]
    )
    assert exported.exit_code == 0, exported.output
    yield Campaign(root / "cand", root / "release", root / "release-INTERNAL-do-not-publish", db_url, report,
                   records, served)  # fmt: skip


def test_every_item_was_reviewed_twice_and_settled(campaign: Campaign) -> None:
    assert campaign.served["ann1"] == campaign.served["ann2"] == len(campaign.records)
    assert campaign.served["adj"] > 0
    database = open_database(campaign.db_url)
    with database.read() as db:
        states = [i.state for i in db.scalars(select(Item))]
    database.dispose()
    assert set(states) <= {"verified", "rejected"} and "verified" in states and "rejected" in states


def test_the_export_is_a_promqa_release_with_its_trail(campaign: Campaign) -> None:
    release = json.loads((campaign.release / "examples.json").read_text())
    dataset = load_promqa(campaign.release)
    assert not dataset.problems and len(dataset.items) == len(release) > 0
    assert dataset.missing_media() == [] if hasattr(dataset, "missing_media") else True
    for record in release:
        assert list(record)[-8:] == ["generation", "adjudication", "verification", "question",
                                     "question_approved_by", "answers", "answer_tags", "answer_approved_by"]  # fmt: skip
        assert record["question"] not in BAD_QUESTIONS
        assert settle(record["adjudication"]).fields == {k: record[k] for k in
            ("question", "question_approved_by", "answers", "answer_tags", "answer_approved_by")}  # fmt: skip
        judges = record["verification"]["judges"]
        assert (
            len(judges) == 2
            and record["verification"]["answers"] == campaign.records[record["question_id"]]["answers"]
        )
        # Every kept answer is right; written answers are kept with their source.
        candidate = campaign.records[record["question_id"]]
        assert all(correct(candidate, a) for a in record["answers"])
        for answer, tag in zip(record["answers"], record["answer_tags"], strict=True):
            assert (
                tag == ("machine" if answer in candidate["answers"] else "annotator") or tag == "adjudicator"
            )
    tags = {t for r in release for t in r["answer_tags"]}
    assert {"machine", "annotator"} <= tags
    assert any("judge" in r["adjudication"] for r in release) and any(
        "judge" not in r["adjudication"] for r in release
    )


def test_construction_tables_from_the_campaign(campaign: Campaign) -> None:
    tables = json.loads((campaign.internal / "construction_tables.json").read_text())
    assert (
        (campaign.internal / "construction_tables.md").read_text().startswith("# ProMQA construction tables")
    )
    assert tables["items"]["generated"] == len(campaign.records) and tables["items"]["open"] == 0
    by_generator = tables["table7_by_generator"]
    # gen-b writes one non-procedural pair in three (1/3 of its picks), gen-a none.
    assert by_generator["gen-a"]["question_valid"]["rate"] > by_generator["gen-b"]["question_valid"]["rate"]
    by_template = tables["table6_by_template"]
    assert by_template["step-target"]["recording"] == "step" and by_template["step-dot"]["recipe"] == "DOT"
    assert (
        by_template["step-target"]["question_valid"]["rate"]
        > by_template["step-dot"]["question_valid"]["rate"]
    )
    sources = tables["figure3_answer_source"]
    assert (
        sum(sources.values()) == tables["items"]["approved"]
        and sources["human"] > 0
        and sources["machine"] > 0
    )
    assert (
        tables["agreement"]["mean_question"] is not None and 0.5 < tables["agreement"]["mean_question"] < 1.0
    )
    cost = tables["table5_cost"]
    assert cost["ours"]["usd"] == pytest.approx(campaign.build["cost"]["including_cached"])
    assert cost["human_estimate"]["hours"] == pytest.approx(len(campaign.records) * 4.8 / 60, abs=0.01)
    assert cost["verification_measured"]["judgements"] == 2 * len(campaign.records)
    assert cost["verification_measured"]["adjudications"] == campaign.served["adj"]
    labels = (campaign.internal / "answer_types.csv").read_text().splitlines()
    assert labels[0] == "question_id,answer_index,answer,source,type" and len(labels) > 1


class EvalLab:
    """Captioner and answerer of a Socratic model, on one loopback server."""

    def __init__(self) -> None:
        self.captions = 0
        self.answers = 0
        self.socratic: list[int] = []
        #: What the Socratic answerer read, request by request.
        self.socratic_texts: list[str] = []
        self.judged = 0

    def __call__(self, request: RecordedRequest) -> Reply | str:
        text = "\n".join(request.texts)
        if "This is an evaluation task." in text:  # ProMQA's ternary judge prompt
            self.judged += 1
            return (
                "[Rationale] The prediction names a next step but not the one in the gold answers.\n[Judge] 1"
            )
        if "Describe this video frame" in text:
            self.captions += 1
            return f"A person works at a kitchen bench ({len(request.images)} image)."
        self.answers += 1
        if "Captions of the video frames" in text:
            self.socratic.append(request.n_images)
            self.socratic_texts.append(text)
        return "You should continue with the next step of the recipe."


def test_eval_report_and_self_preference_on_the_release(campaign: Campaign, tmp_path: Path) -> None:
    lab = EvalLab()
    runner = CliRunner()
    with LoopbackServer(lab) as server:
        url = server.openai_base_url
        spec = f"socratic:openai:llava-1.5@{url}+openai:llama-3.1@{url}"
        result = runner.invoke(
            app,
            ["eval", "--suite", "promqa", "--data", str(campaign.release), "--model", spec, "--out",
             str(tmp_path / "socratic"), "--max-frames", "4", "--cache-dir", str(tmp_path / "cache"), "--quiet",
             "--judge", f"openai:gpt-4o-2024-08-06@{url}"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        other = runner.invoke(
            app,
            ["eval", "--suite", "promqa", "--data", str(campaign.release), "--model", f"blind:openai:gen-a@{url}",
             "--out", str(tmp_path / "blind"), "--max-frames", "4", "--cache-dir", str(tmp_path / "cache"), "--quiet",
             "--judge", f"openai:gpt-4o-2024-08-06@{url}"],
        )  # fmt: skip
        assert other.exit_code == 0, other.output
    n = len(json.loads((campaign.release / "examples.json").read_text()))
    # Both predictors answer alike, so the second run's judge requests come from the response cache.
    assert lab.answers >= 2 * n and lab.captions > 0 and 0 < lab.judged <= n
    # The answerer of the Socratic model got captions instead of frames.
    assert len(lab.socratic) == n and set(lab.socratic) == {0}
    # ... and is never told that it sees images (the official prompt's sentence is rewritten).
    assert not any("The images are the sampled frames" in t for t in lab.socratic_texts)
    assert all("The captions after the question describe the sampled frames" in t for t in lab.socratic_texts)
    predictions = [
        json.loads(line) for line in (tmp_path / "socratic" / "predictions.jsonl").read_text().splitlines()
    ]
    assert len(predictions) == n and all(len(p["sent"]["captions"]) >= 1 for p in predictions)
    manifest = json.loads((tmp_path / "socratic" / "manifest.json").read_text())
    assert "socratic" in manifest["model"]
    report = runner.invoke(app, ["report", str(tmp_path / "socratic")])
    assert report.exit_code == 0 and "| machine | human | both |" in report.output, report.output
    table12 = runner.invoke(
        app, ["report", str(tmp_path / "socratic"), str(tmp_path / "blind"), "--self-preference"]
    )
    assert table12.exit_code == 0, table12.output
    assert "Generator-predictor" in table12.output and "gen-a" in table12.output and "gen-b" in table12.output
    # Every item was judged 1 of 2: 50 in every cell.
    assert "| 50.0 |" in table12.output


def test_labelled_answer_types_reach_the_release_and_the_suite_breakdown(
    campaign: Campaign, tmp_path: Path
) -> None:
    import csv

    from expvid.suites.registry import get_suite

    rows = list(csv.DictReader((campaign.internal / "answer_types.csv").open(encoding="utf-8")))
    for row in rows:  # a person's labels: machine answers direct, written ones suggestions
        row["type"] = "direct" if row["source"] == "machine" else "suggestion"
    labelled = tmp_path / "labelled.csv"
    with labelled.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    result = CliRunner().invoke(
        app,
        ["platform", "export", str(tmp_path / "release"), "--db", campaign.db_url, "--format", "promqa",
         "--answer-types", str(labelled)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    tables = json.loads(
        (tmp_path / "release-INTERNAL-do-not-publish" / "construction_tables.json").read_text()
    )
    figure4 = tables["figure4_answer_types"]
    assert figure4["unlabelled"] == 0 and figure4["direct"] == tables["figure3_answer_source"]["machine"]
    suite = get_suite("promqa")
    dataset = load_promqa(tmp_path / "release")
    groups = {suite.groups(item).get("answer_type") for item in dataset.items}
    assert "direct" in groups and groups <= {"direct", "suggestion", "direct & suggestion"}
