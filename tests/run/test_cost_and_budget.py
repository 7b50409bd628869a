"""`--dry-run`, `--max-cost` / `--max-tokens-total`, and the cost a run records, reports and compares."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer, Reply
from expvid.models.pricing import Price
from expvid.run.bounds import Bound
from expvid.run.budget import BudgetExhausted, BudgetGate, BudgetStop, Ledger
from expvid.run.compare import compare_runs, format_comparison
from expvid.run.config import EvalConfig
from expvid.run.cost import RunCost
from expvid.run.estimate import estimate_run
from expvid.run.evaluate import EvalResult, evaluate
from expvid.run.report import build_table, load_runs, to_csv, to_markdown
from expvid.run.rescore import JudgeChoice, rescore_run
from expvid.suites.protocol import FrameOptions
from expvid.suites.registry import get_suite

runner = CliRunner()


def test_dry_run_counts_and_prices_and_sends_and_writes_nothing(sample_dir, tmp_path):
    with LoopbackServer("\\boxed{A}") as server:
        out, cache = tmp_path / "run", tmp_path / "cache"
        result = runner.invoke(
            app,
            [
                "eval", "--data", str(sample_dir), "--model", f"openai:gpt-4o@{server.openai_base_url}",
                "--out", str(out), "--tasks", "tools,sequence_generation", "--limit", "2",
                "--cache-dir", str(cache), "--price", "2.5,10", "--dry-run",
            ],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert server.requests == [] and not out.exists() and not cache.exists()
    lines = {line.split("|")[1].strip(): line for line in result.output.splitlines() if line.startswith("| ")}
    # tools: 2 items x 8 frames at 224x224, 255 tokens each (gpt-4o tiles); sequence generation 32 frames
    assert "| 2 | 2 | 16 | 4080 |" in lines["tools"]
    assert "| 2 | 2 | 64 | 16320 |" in lines["sequence_generation"]
    assert "85 + 170 x 1 tile(s): 255 tokens per 224x224 frame" in result.output
    assert "2.5/10 USD per 1M tokens" in result.output and "**total** | 4 | 4 | 80 | 20400" in result.output


def test_dry_run_without_a_key_or_a_server_and_with_the_batch_discount(sample_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    config = EvalConfig(
        data=sample_dir,
        model="anthropic:claude-sonnet-4-20250514",
        out=tmp_path / "run",
        tasks=["tools"],
        limit=3,
    )
    online = estimate_run(config)
    assert online.price is not None and online.total.images == 24
    assert online.total.image_tokens == 24 * 64  # 224 x 224: 8 x 8 patches of 28 px (Claude's vision guide)
    from expvid.run.batch_settings import BatchSettings

    batched = estimate_run(config.model_copy(update={"batch": BatchSettings()}))
    assert batched.total.usd == pytest.approx(online.total.usd / 2)  # type: ignore[operator]
    # fps sampling and an aspect-kept size need the videos' length and size: read, never decoded
    by_fps = estimate_run(
        config.model_copy(update={"frames": FrameOptions(fps=0.5, max_side=128), "limit": 1})
    )
    from expvid.media.sampler import probe

    video = get_suite("expvid").load(sample_dir, tasks=["tools"]).items[0].media
    info = probe(video.path)  # type: ignore[union-attr]
    assert info.width > info.height  # a landscape clip: 128 px wide after the resize
    assert by_fps.total.images == math.floor((info.duration - 0.001) * 0.5) + 1  # a frame every 2 s
    assert by_fps.total.frame_sizes == {f"128x{round(info.height * 128 / info.width)}": by_fps.total.images}
    unknown = estimate_run(config.model_copy(update={"model": "openai:my-vlm@http://gpu:8000/v1"}))
    assert unknown.price is None and unknown.total.usd is None and unknown.total.image_tokens is None
    assert any("--price" in note for note in unknown.notes)


#: $1 per 1,000 tokens: a tools request (8 frames of 224 px, 2,040 image tokens on gpt-4o) costs ~$2.12.
DEAR = {"": Price(input_per_m=1000.0, output_per_m=1000.0, source="--price 1000,1000")}


def _run(sample_dir: Path, server: LoopbackServer, out: Path, cache: Path, **fields: Any) -> EvalResult:
    config = EvalConfig(
        data=sample_dir,
        out=out,
        tasks=fields.pop("tasks", ["tools", "materials"]),
        limit=2,
        concurrency=fields.pop("concurrency", 1),
        cache_dir=cache,
        n_bootstrap=20,
        **{
            "model": f"openai:gpt-4o@{server.openai_base_url}",
            "prices": DEAR,
            "max_tokens": 50,
            **fields,
        },
    )
    return asyncio.run(evaluate(config, command=["test"], show_progress=False))


def _spent(out: Path) -> list[float]:
    """What each request of a run directory cost, from the usage its answers reported."""
    price = DEAR[""]
    costs = []
    for line in (out / "predictions.jsonl").read_text().splitlines():
        usage = json.loads(line)["usage"]
        costs.append(price.cost(usage["prompt_tokens"], usage["completion_tokens"]))
    return costs


def test_budget_stops_cleanly_reports_it_and_a_larger_budget_continues(sample_dir, tmp_path, frame_cache_dir):
    # The loopback bills what the provider would: 2,040 image tokens and the prompt's text per request.
    with LoopbackServer(Reply.counted("\\boxed{A}", completion_tokens=5)) as server:
        out = tmp_path / "run"
        stopped = _run(sample_dir, server, out, frame_cache_dir, max_cost=5)
        assert len(server.requests) == 2 and stopped.not_sent == 2
        assert stopped.stopped is not None and "--max-cost $5" in stopped.stopped
        spent = sum(_spent(out))
        assert 4 < spent <= 5  # two requests of ~$2.12; a third one's bound (~$2.4) does not fit
        scores = json.loads((out / "scores.json").read_text())
        assert scores["run"]["budget_stop"].startswith(
            f"stopped at the budget --max-cost $5 (spent ${spent:.4f}"
        )
        assert "the next request could cost up to $2." in scores["run"]["budget_stop"]
        assert scores["run"]["cost"]["usd"] == pytest.approx(spent) and scores["run"]["n_missing"] == 2
        table = to_markdown(build_table(get_suite("expvid"), load_runs([out]), references=[]))
        assert "incomplete, stopped at budget)" in table and "2 request(s) not sent" in table
        assert "2 item(s) not asked are missing from the scores" in table
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["config"]["budget_stop"]["limit"] == "max_cost"
        assert manifest["config"]["price"]["source"] == "--price 1000,1000"

        again = _run(sample_dir, server, out, frame_cache_dir, max_cost=5)  # same budget: nothing more
        assert again.not_sent == 2 and len(server.requests) == 2

        done = _run(sample_dir, server, out, frame_cache_dir, max_cost=100)
        assert done.stopped is None and len(server.requests) == 4
    costs = _spent(out)
    scores = json.loads((out / "scores.json").read_text())
    assert scores["run"]["complete"] and scores["run"]["budget_stop"] is None
    assert (
        scores["run"]["cost"]["usd"] == pytest.approx(sum(costs)) and scores["run"]["cost"]["requests"] == 4
    )
    runs = load_runs([out])
    assert f"cost ${sum(costs):.4f} for 4 request(s)" in to_markdown(
        build_table(get_suite("expvid"), runs, references=[])
    )
    csv_row = to_csv(build_table(get_suite("expvid"), runs, references=[])).splitlines()[1]
    assert f",{sum(costs):.6f}," in csv_row
    rescored = asyncio.run(rescore_run(out, judge=JudgeChoice(), show_progress=False))  # `expvid score RUN`
    assert rescored.run.cost is not None and rescored.run.cost.usd == pytest.approx(sum(costs))
    compared = format_comparison(compare_runs(out, out, n_boot=10))
    assert f"| A | {sum(costs):.4f} | 4 |" in compared


def test_the_cap_holds_at_concurrency_32_on_requests_of_8_and_32_frames(
    sample_dir, tmp_path, frame_cache_dir
):
    """Admission by each request's own bound: 32-frame requests are never priced like the 8-frame
    answers before them, however many are in flight, and the run stops short of the cap by less
    than the bound of the request it did not send."""
    with LoopbackServer(Reply.counted("\\boxed{A}", completion_tokens=5, delay_s=0.05)) as server:
        out = tmp_path / "run"
        result = _run(
            sample_dir,
            server,
            out,
            frame_cache_dir,
            tasks=["tools", "materials", "sequence_generation", "step_prediction"],
            concurrency=32,
            max_cost=20,
        )
        in_flight = server.max_in_flight
    costs = _spent(out)
    assert sum(costs) <= 20 and result.not_sent >= 1 and in_flight >= 2
    stop = json.loads((out / "manifest.json").read_text())["config"]["budget_stop"]
    assert 20 - sum(costs) < stop["next_bound"]  # it stopped early by less than one request's bound
    assert max(costs) > 8  # 32-frame requests (~$8.4 each) were among those sent


def test_a_request_that_does_not_fit_waits_for_those_in_flight_to_give_room_back():
    async def scenario() -> tuple[list[str], BudgetStop | None]:
        gate = BudgetGate(ledgers=[Ledger(max_cost=10.0, max_tokens=None)], price=None)
        order: list[str] = []
        first = await gate.reserve(Bound(6.0, 1))  # in flight, bounded at $6

        async def admit(name: str, bound: Bound) -> Bound:
            held = await gate.reserve(bound)
            order.append(name)
            return held

        second = asyncio.create_task(admit("second", Bound(6.0, 1)))  # 6 + 6 > 10: waits
        await asyncio.sleep(0.01)
        order.append("first settles at $1")
        await gate.settle(first, 1.0, 1)  # gives $5 back: 1 + 6 <= 10
        held = await second
        probe = asyncio.create_task(admit("probe", Bound(0.5, 1, known=False)))  # no rule: goes alone
        await asyncio.sleep(0.01)
        order.append("second settles at $1")
        await gate.settle(held, 1.0, 1)
        await gate.settle(await probe, 0.5, 1)
        with pytest.raises(BudgetExhausted):  # 2.5 spent + 9 > 10 with nothing in flight: stop
            await gate.reserve(Bound(9.0, 1))
        return order, gate.stop

    order, stop = asyncio.run(scenario())
    assert order == ["first settles at $1", "second", "second settles at $1", "probe"]
    assert stop is not None and stop.next_bound == 9.0 and stop.spent == 2.5


def test_budget_gate_on_tokens_and_a_price_it_needs():
    async def scenario() -> tuple[int, str]:
        gate = BudgetGate(ledgers=[Ledger(max_cost=None, max_tokens=1000, spent_tokens=600)], price=None)
        first = await gate.reserve(Bound(None, 300))
        await gate.settle(first, None, 350)
        with pytest.raises(BudgetExhausted):
            await gate.reserve(Bound(None, 100))  # 950 + a bound of 100 > 1000, nothing in flight
        assert gate.stop is not None
        return gate.refused, gate.stop.describe()

    refused, text = asyncio.run(scenario())
    assert (
        refused == 1
        and "--max-tokens-total 1000 (used 950 tokens; the next request could use up to 100)" in text
    )
    with pytest.raises(ValueError, match="--price"):
        BudgetGate.for_run(max_cost=5, max_tokens=None, price=None, spent=RunCost())


def test_a_run_stopped_at_its_budget_exits_4_and_every_rendering_says_why(
    sample_dir, tmp_path, frame_cache_dir
):
    """A script must not mistake a budget stop for a finished run: exit 4, and the report, the CSV,
    the HTML page, the viewer and `compare` all call it partial with the reason."""
    with LoopbackServer(Reply.counted("\\boxed{A}", completion_tokens=5)) as server:
        out = tmp_path / "run"
        base = ["eval", "--data", str(sample_dir), "--model", f"openai:gpt-4o@{server.openai_base_url}"]
        base += ["--out", str(out), "--tasks", "tools,materials", "--limit", "2", "--concurrency", "1"]
        base += ["--cache-dir", str(frame_cache_dir), "--price", "1000,1000", "--max-tokens", "50"]
        base += ["--quiet", "--allow-failures"]
        stopped = runner.invoke(app, [*base, "--max-cost", "5"])
        assert stopped.exit_code == 4, stopped.output
        assert "stopped at the budget; exit status 4" in stopped.output
        again = runner.invoke(app, [*base, "--max-cost", "5"])  # the same budget: stops at once
        assert again.exit_code == 4 and len(server.requests) == 2
        runs = load_runs([out])
        table = build_table(get_suite("expvid"), runs, references=[])
        [row] = table.rows
        assert row.label.endswith("(partial, incomplete, stopped at budget)")
        assert row.partial is not None and "stopped at the budget --max-cost $5" in row.partial
        assert "stopped at the budget --max-cost $5" in to_csv(table).splitlines()[1]
        from expvid.run.report.html import to_html

        assert "partial run, not finished</b>: stopped at the budget --max-cost $5" in to_html(
            table, runs, title="t"
        )
        from expvid.view import ViewSession
        from expvid.view.overview import build_overview
        from expvid.view.rows import build_rows

        session = ViewSession([out])
        notes = build_overview(session, build_rows(session))["table_notes"]
        assert any("stopped at the budget --max-cost $5" in note for note in notes)
        notes = compare_runs(out, out, n_boot=10).notes
        assert any(n.startswith("run A is partial, not finished: stopped at the budget") for n in notes)
        done = runner.invoke(app, [*base, "--max-cost", "100"])
        assert done.exit_code == 0, done.output
    row = build_table(get_suite("expvid"), load_runs([out]), references=[]).rows[0]
    assert "stopped at budget" not in row.label and "not finished" not in to_csv(
        build_table(get_suite("expvid"), load_runs([out]), references=[])
    )


def test_prompt_cache_reads_are_billed_at_the_cached_price(sample_dir, tmp_path, frame_cache_dir):
    """OpenAI reports cached prompt tokens inside prompt_tokens; they cost the cached-input rate."""
    reply = Reply.ok("\\boxed{A}", prompt_tokens=10_000, completion_tokens=100, cache_read_tokens=8_000)
    with LoopbackServer(reply) as server:
        out = tmp_path / "run"
        _run(
            sample_dir,
            server,
            out,
            frame_cache_dir,
            prices={"": Price(input_per_m=1.25, output_per_m=10, cached_input_per_m=0.125, source="test")},
        )
        requests = len(server.requests)
    cost = json.loads((out / "scores.json").read_text())["run"]["cost"]
    assert cost["requests"] == requests and cost["cache_read_tokens"] == 8_000 * requests
    per_request = (2_000 * 1.25 + 8_000 * 0.125 + 100 * 10) / 1e6
    assert cost["usd"] == pytest.approx(per_request * requests)
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert {p["usage"]["cache_read_tokens"] for p in predictions} == {8_000}
    summary = to_markdown(build_table(get_suite("expvid"), load_runs([out]), references=[]))
    assert "of the input from the provider's prompt cache" in summary


def test_an_unpriced_run_says_cost_unknown_once_in_every_rendering(sample_dir, tmp_path, frame_cache_dir):
    """A model the price table does not know, run without --price: every rendering says "cost unknown"
    and how to give a price, never "cost cost unknown"."""
    from expvid.run.report.html import to_html
    from expvid.view import ViewSession
    from expvid.view.render import render_overview

    with LoopbackServer(Reply.ok("\\boxed{A}", prompt_tokens=100, completion_tokens=5)) as server:
        out, unpriced = (
            tmp_path / "run",
            {"model": f"openai:my-lab-vlm@{server.openai_base_url}", "prices": {}},
        )
        _run(sample_dir, server, out, frame_cache_dir, **unpriced)
    assert json.loads((out / "scores.json").read_text())["run"]["cost"]["usd"] is None
    runs = load_runs([out])
    table = build_table(get_suite("expvid"), runs, references=[])
    report = runner.invoke(app, ["report", str(out)])
    assert report.exit_code == 0, report.output
    renderings = {
        "markdown": to_markdown(table),
        "html": to_html(table, runs, title="t"),
        "report command": report.output,
        "viewer": render_overview(ViewSession([out])),
    }
    for name, text in renderings.items():
        flat = " ".join(text.split())
        assert "cost cost" not in flat, name
        assert (
            "my-lab-vlm (partial): cost unknown (no price: give --price MODEL=IN,OUT) for 4 request(s)"
            in flat
        ), name
    [row] = csv.DictReader(io.StringIO(to_csv(table)))
    assert row["cost_usd"] == "" and row["model"] == "my-lab-vlm (partial)"  # unknown: empty, not 0
    assert row["model spec"].startswith("openai:my-lab-vlm@http://127.0.0.1:")


def test_openai_image_detail_is_an_explicit_setting_and_its_forecast_is_exact(
    sample_dir, tmp_path, frame_cache_dir
):
    with LoopbackServer(Reply.counted("\\boxed{A}", completion_tokens=5)) as server:
        model = f"openai:gpt-4o@{server.openai_base_url}"
        base = ["eval", "--data", str(sample_dir), "--model", model, "--tasks", "tools", "--limit", "2"]
        base += ["--cache-dir", str(frame_cache_dir), "--price", "2.5,10"]
        auto = runner.invoke(app, [*base, "--out", str(tmp_path / "a"), "--dry-run"])
        assert "image detail 'auto' (none sent)" in " ".join(auto.output.split())
        low = runner.invoke(
            app, [*base, "--out", str(tmp_path / "low"), "--image-detail", "low", "--dry-run"]
        )
        assert "85 + 170 x 0 tile(s): 85 tokens per 224x224 frame" in low.output
        assert "| 2 | 2 | 16 | 1360 |" in low.output  # 16 frames at 85 tokens, the base alone
        assert "image detail 'auto'" not in low.output
        run = runner.invoke(app, [*base, "--out", str(tmp_path / "low"), "--image-detail", "low", "--quiet"])
        assert run.exit_code == 0, run.output
        details = {detail for request in server.requests for detail in request.image_details}
        bad = runner.invoke(app, [*base, "--out", str(tmp_path / "x"), "--image-detail", "medium"])
    assert details == {"low"}  # sent with every frame
    text_tokens = [
        json.loads(line)["usage"]["prompt_tokens"] - 8 * 85
        for line in (tmp_path / "low" / "predictions.jsonl").read_text().splitlines()
    ]
    assert all(0 < tokens < 200 for tokens in text_tokens)  # what is left is the prompt's text alone
    assert bad.exit_code == 2 and "--image-detail" in bad.output


def test_request_bounds_by_rule_and_for_a_model_without_one():
    """The bound of a built request: frames by the provider's rule, text by its bytes, all of
    max_tokens; a model without an image rule is unknown until an answer has measured it."""
    import io as _io

    from PIL import Image as _Image

    from expvid.models.pricing import model_ref
    from expvid.models.types import GenerateRequest, ImagePart, Message, TextPart
    from expvid.run.bounds import MESSAGE_OVERHEAD, REQUEST_OVERHEAD, RequestBounds
    from expvid.schema import Usage

    buffer = _io.BytesIO()
    _Image.new("RGB", (224, 224)).save(buffer, "JPEG")
    frames = [ImagePart(data=buffer.getvalue()) for _ in range(4)]
    question = "Which tool is used? Réponse : A–D"  # non-ASCII: more bytes than characters
    request = GenerateRequest(
        messages=[Message(role="user", content=[*frames, TextPart(text=question)])], max_tokens=100
    )
    text = len(question.encode("utf-8")) + MESSAGE_OVERHEAD + REQUEST_OVERHEAD
    price = Price(input_per_m=2.0, output_per_m=8.0)
    gpt4o = RequestBounds(model_ref("openai:gpt-4o"), price).bound(request)
    assert gpt4o.prompt_tokens == 4 * 255 + text and gpt4o.tokens == gpt4o.prompt_tokens + 100
    assert gpt4o.usd == pytest.approx(((4 * 255 + text) * 2 + 100 * 8) / 1e6) and gpt4o.known
    low = RequestBounds(model_ref("openai:gpt-4o"), price, detail="low").bound(request)
    assert low.prompt_tokens == 4 * 85 + text
    blind = RequestBounds(model_ref("openai:gpt-4o"), price, blind=True).bound(request)
    assert blind.prompt_tokens == text
    unknown = RequestBounds(model_ref("openai:my-vlm@http://gpu:8000/v1"), price)
    assert not unknown.bound(request).known  # sent alone until an answer says what images cost
    unknown.observe(request, Usage(prompt_tokens=1000, completion_tokens=5))
    measured = unknown.bound(request)
    assert measured.known and not measured.ruled and measured.prompt_tokens == 4 * 250 + text
