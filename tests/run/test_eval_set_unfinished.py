"""`expvid eval-set`: a cell stopped at its budget or waiting for batches is not finished, and says so.

Kept apart from test_eval_set.py, whose module-scoped browser holds an event loop in this thread.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import BatchPlan, LoopbackServer, Reply

runner = CliRunner()


def _state(out: Path) -> dict[str, Any]:
    return json.loads((out / "eval-set.json").read_text())["cells"]


def test_unfinished_cells_have_their_own_status_and_exit_code(tmp_path, sample_dir, frame_cache_dir):
    """A cell stopped at its budget is "stopped" (exit 4), one whose requests wait in a provider's
    batches is "waiting" (exit 5, which wins: running again later makes progress by itself)."""
    costly = Reply.counted("\\boxed{A}", completion_tokens=5)  # ~$2.12 a request at $1 per 1k tokens
    with LoopbackServer(costly) as paid, LoopbackServer("\\boxed{A}") as batched:
        batched.batches.plan = BatchPlan(polls_per_status=50)
        config = tmp_path / "set.yaml"
        config.write_text(
            f"""
out: {tmp_path / "campaign"}
cache_dir: {frame_cache_dir}
references: none
retries: 0
n_bootstrap: 10
suites:
  - {{name: expvid, data: {sample_dir}, tasks: [tools], limit: 2}}
models:
  - {{name: Budgeted, model: "openai:gpt-4o@{paid.openai_base_url}", price: [1000, 1000], max_tokens: 50, max_cost: 3, concurrency: 1}}
  - name: Batched
    model: openai:gpt-4o@{batched.openai_base_url}
    price: [1, 1]
    batch: {{wait: false, poll_interval_s: 0.01}}
"""
        )
        both = runner.invoke(app, ["eval-set", str(config), "--quiet"])
        only_budget = runner.invoke(app, ["eval-set", str(config), "--quiet", "--only", "Budgeted"])
    assert both.exit_code == 5, both.output
    states = _state(tmp_path / "campaign")
    assert states["expvid/default/Budgeted"]["status"] == "stopped"
    assert states["expvid/default/Batched"]["status"] == "waiting"
    assert "exit status 5" in both.output
    assert only_budget.exit_code == 4, only_budget.output
    assert len(paid.requests) == 1  # the same budget sends nothing more
    report = (tmp_path / "campaign" / "report.md").read_text()
    assert "**Budgeted (partial, incomplete, stopped at budget)**" in report
    assert "stopped at the budget --max-cost $3" in report


@pytest.mark.parametrize(
    ("statuses", "code"),
    [
        (["done", "done"], 0),
        (["done", "partial"], 3),
        (["failed", "stopped", "done"], 4),
        (["partial", "stopped", "waiting"], 5),
    ],
)
def test_campaign_exit_status_precedence(statuses: list[str], code: int):
    from expvid.cli.eval_set import set_exit_status

    assert set_exit_status(statuses) == code


def test_one_max_cost_for_the_whole_set_is_shared_by_its_cells(tmp_path, sample_dir, frame_cache_dir):
    """`max_cost` at the top of the file: every cell draws on it, running side by side, and the set
    as a whole never spends past it (each cell prices its requests at its own model's price)."""
    with LoopbackServer(Reply.counted("\\boxed{A}", completion_tokens=5)) as server:
        config = tmp_path / "set.yaml"
        config.write_text(
            f"""
out: {tmp_path / "campaign"}
cache_dir: {frame_cache_dir}
references: none
retries: 0
n_bootstrap: 10
parallel_cells: 2
max_cost: 7
suites:
  - {{name: expvid, data: {sample_dir}, tasks: [tools], limit: 2}}
models:
  - {{name: A, model: "openai:gpt-4o@{server.openai_base_url}", price: [1000, 1000], max_tokens: 50}}
  - {{name: B, model: "openai:gpt-4o-2024-08-06@{server.openai_base_url}", price: [1000, 1000], max_tokens: 50}}
"""
        )
        first = runner.invoke(app, ["eval-set", str(config), "--quiet"])
        again = runner.invoke(app, ["eval-set", str(config), "--quiet"])
        sent = len(server.requests)
    assert first.exit_code == 4, first.output
    states = _state(tmp_path / "campaign")
    assert sorted(cell["status"] for cell in states.values()).count("stopped") >= 1
    spent = sum(cell["cost_usd"] or 0.0 for cell in states.values())
    assert 4 < spent <= 7 and sent == 3  # ~$2.12 a request: a fourth bound (~$2.45) passes $7
    stopped = [cell for cell in states.values() if cell["status"] == "stopped"]
    assert all("the eval-set's max_cost $7" in cell["stopped"] for cell in stopped)
    assert again.exit_code == 4  # the same set budget: nothing more is sent
