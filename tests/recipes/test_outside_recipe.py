"""An outside build recipe (examples/tinyfacts, the package docs/write-a-recipe.md walks through),
pip-installed into a fresh virtual environment, runs end to end with no change to expvid:
`recipes list/show` -> `sample make --recipe` -> `build --recipe` (its writer model on loopback) ->
`platform import` -> a review through the platform's HTTP API (a real server on loopback, a bearer
token) -> `platform export` -> `data check --suite` on the export, all as subprocesses."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from dev_venv import purelib_of, venv_with
from expvid.fakes.models.server import LoopbackServer, Reply
from expvid.platform.testing import free_port

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tinyfacts"
QUESTION = "Which tool or value does the video show?"


@pytest.fixture(scope="module")
def python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with examples/tinyfacts pip-installed (`dev_venv.venv_with`)."""
    python = venv_with(tmp_path_factory.mktemp("recipe_package"), [EXAMPLE])
    assert (purelib_of(python) / "tinyfacts").is_dir()  # installed there, not in the developer's environment
    return python


def expvid(python: Path, *args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-m", "expvid.cli.main", *args],
        capture_output=True, text=True, cwd=cwd, timeout=300, check=False, input=stdin,
        env={**os.environ, "COLUMNS": "40"},
    )  # fmt: skip


def test_the_outside_recipe_is_listed_and_shows_what_it_declares(python: Path, tmp_path: Path) -> None:
    listed = expvid(python, "recipes", "list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    names = [line.split()[0] for line in listed.stdout.splitlines() if line.strip()]
    assert names == ["expvid", "promqa", "scivideobench", "tinyfacts"]
    shown = expvid(python, "recipes", "show", "tinyfacts", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    for line in ("per_video = 5  (int)", "<id>/facts.json: its discipline and facts", "review page: levels",
                 "sample inputs: expvid sample make DIR --recipe tinyfacts", "stages: questions"):  # fmt: skip
        assert line in shown.stdout, line
    unknown = expvid(python, "recipes", "show", "nosuch", cwd=tmp_path)
    assert unknown.returncode == 2 and "unknown recipe 'nosuch'" in unknown.stderr


def test_from_sample_make_through_build_review_and_export(python: Path, tmp_path: Path) -> None:
    made = expvid(python, "sample", "make", "work", "--recipe", "tinyfacts", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in (tmp_path / "work" / "sources").iterdir()) == ["heat", "stir"]

    with LoopbackServer(lambda request: Reply.ok(QUESTION)) as writer:
        build = ["build", "work/sources", "--recipe", "tinyfacts", "--out", "cand", "--quiet",
                 "--llm", f"openai:writer@{writer.openai_base_url}"]  # fmt: skip
        bad = expvid(python, *build, "-R", "per_video=many", cwd=tmp_path)
        assert bad.returncode == 2 and "-R per_video=many: expected an integer" in " ".join(
            bad.stderr.split()
        )
        foreign = expvid(python, *build, "--levels", "2", cwd=tmp_path)
        assert foreign.returncode == 2 and "--levels is not used by the tinyfacts recipe" in foreign.stderr
        assert not writer.requests and not (tmp_path / "cand").exists()  # refused before any work
        built = expvid(python, *build, cwd=tmp_path)
        assert built.returncode == 0, built.stdout + built.stderr
        assert "audit gate: passed" in built.stdout + built.stderr
        asked = [json.dumps(request.body) for request in writer.requests]
    assert len(asked) == 2 and all("This prompt is TinyFacts' own" in text for text in asked)
    records = [json.loads(line) for line in (tmp_path / "cand" / "facts.jsonl").read_text().splitlines()]
    assert {r["question"] for r in records} == {QUESTION} and (tmp_path / "cand" / "audit.md").is_file()

    db = f"sqlite:///{tmp_path / 'review.db'}"
    assert expvid(python, "platform", "migrate", "--db", db, cwd=tmp_path).returncode == 0
    user = expvid(python, "platform", "user", "add", "ana", "--role", "annotator", "--password-stdin",
                  "--db", db, cwd=tmp_path, stdin="correct horse battery\n")  # fmt: skip
    assert user.returncode == 0, user.stdout + user.stderr
    imported = expvid(python, "platform", "import", "cand", "--annotators", "1", "--db", db, cwd=tmp_path)
    assert imported.returncode == 0 and "2 new item(s)" in imported.stdout, imported.stdout + imported.stderr
    token = expvid(python, "platform", "token", "create", "ana", "--name", "review", "--db", db, cwd=tmp_path)
    assert token.returncode == 0, token.stderr
    bearer = {"Authorization": f"Bearer {token.stdout.strip().splitlines()[-1]}"}

    port = free_port()
    server = subprocess.Popen(
        [str(python), "-m", "expvid.cli.main", "platform", "serve", "--db", db, "--port", str(port)],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, headers=bearer, timeout=10) as client:
            for _ in range(300):
                try:
                    if client.get("/api/me").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.05)
            queue = client.get("/api/items").json()["items"]
            assert sorted(row["task"] for row in queue) == ["fact", "fact"]
            shown = client.get(f"/api/items/{queue[0]['id']}").json()
            assert shown["question"] == QUESTION and len(shown["options"]) == 4, shown
            for row, verdict in zip(queue, ("approve", "reject"), strict=True):
                saved = client.post(
                    f"/api/items/{row['id']}/decision",
                    json={"verdict": verdict, "justification": "checked against the video frames",
                          "item_version": row["version"]},
                )  # fmt: skip
                assert saved.status_code == 200, saved.text
            states = sorted(client.get(f"/api/items/{row['id']}").json()["state"] for row in queue)
            assert states == ["rejected", "verified"]
    finally:
        server.terminate()
        server.wait(timeout=30)

    exported = expvid(python, "platform", "export", "release", "--db", db, cwd=tmp_path)
    assert exported.returncode == 0, exported.stdout + exported.stderr
    (released,) = [
        json.loads(line) for line in (tmp_path / "release" / "facts.jsonl").read_text().splitlines()
    ]
    assert released["question"] == QUESTION and (tmp_path / "release" / released["video_path"]).is_file()
    checked = expvid(python, "data", "check", "release", "--suite", "tinyfacts", cwd=tmp_path)
    assert checked.returncode == 0 and "no problems" in checked.stdout, checked.stdout + checked.stderr
    run = expvid(python, "eval", "--suite", "tinyfacts", "--data", "release", "--model", "random", "--out", "runs/random",
                 "--quiet", cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    scores = json.loads((tmp_path / "runs" / "random" / "scores.json").read_text())
    assert scores["tasks"]["fact"]["n"] == 1, scores


def test_the_page_shows_the_example_package_as_it_is() -> None:
    """docs/write-a-recipe.md's file blocks are examples/tinyfacts' files, byte for byte."""
    page = (EXAMPLE.parents[1] / "docs" / "write-a-recipe.md").read_text(encoding="utf-8")
    blocks = dict(re.findall(r"^```\w+ file=(\S+)\n(.*?)^```$", page, re.DOTALL | re.MULTILINE))
    assert set(blocks) == {"pyproject.toml", "src/tinyfacts/recipe.py", "src/tinyfacts/suite.py",
                           "src/tinyfacts/prompts/question.txt", "src/tinyfacts/prompts/answer.txt"}  # fmt: skip
    for name, text in blocks.items():
        assert (EXAMPLE / name).read_text(encoding="utf-8") == text, name
