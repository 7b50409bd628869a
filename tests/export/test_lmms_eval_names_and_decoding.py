"""What an exported lmms-eval package tells lmms-eval's model wrappers and its task registry: greedy
suites ask for greedy decoding (Hugging Face `generate()` refuses sampling at temperature 0), and
every task and group name is in expvid's namespace (never one of lmms-eval's own, such as `videomme`)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from lmms_harness import load_task_yaml
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.suites.mmvu import MMVUSuite, make_mmvu_sample
from expvid.suites.registry import register_suite
from expvid.suites.scivideobench import make_scivideobench_sample

runner = CliRunner()
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def _export(out: Path, data: Path, suite: str) -> list[Path]:
    result = runner.invoke(app, ["export", "lmms-eval", str(out), "--data", str(data), "--suite", suite])
    assert result.exit_code == 0, result.output
    return [*sorted(out.glob("*.yaml")), out / "_default_template_yaml"]


def _generate(kwargs: dict) -> object:  # type: ignore[type-arg]
    """What an lmms-eval Hugging Face wrapper does with the task's generation_kwargs: `generate(**kwargs)`,
    here on a one-layer random GPT-2 built from its config (no weights are downloaded)."""
    config = transformers.GPT2Config(n_layer=1, n_head=2, n_embd=8, vocab_size=32, n_positions=32)
    model = transformers.GPT2LMHeadModel(config).eval()
    torch.manual_seed(0)
    inputs = torch.tensor([[1, 2, 3]])
    return model.generate(inputs, attention_mask=torch.ones_like(inputs), pad_token_id=0,
                          **{**kwargs, "max_new_tokens": 2})  # fmt: skip


@pytest.mark.parametrize(("suite", "make", "sampling"), [
    ("scivideobench", make_scivideobench_sample, False),  # greedy, 16 tokens (the task file)
    ("mmvu", make_mmvu_sample, True),  # temperature 1.0 (appendix B.1)
])  # fmt: skip
def test_the_decoding_a_package_asks_for_runs_in_hugging_face_generate(
    tmp_path, suite, make, sampling
) -> None:
    make(tmp_path / "data")
    _export(tmp_path / "pkg", tmp_path / "data", suite)
    kwargs = load_task_yaml(tmp_path / "pkg" / "_default_template_yaml")["generation_kwargs"]
    assert kwargs["do_sample"] is sampling and (kwargs["temperature"] > 0) is sampling
    assert _generate(kwargs).shape == (1, 5)  # type: ignore[attr-defined]
    if not sampling:  # what every export wrote before: refused by generate() itself
        with pytest.raises(ValueError, match="strictly positive float"):
            _generate({**kwargs, "do_sample": True})


def test_exported_names_are_namespaced(tmp_path) -> None:
    """An outside Video-MME suite's package must not be named `videomme`, lmms-eval's own group."""

    class VideoMME(MMVUSuite):
        name = "video-mme"

    register_suite("video-mme", VideoMME)
    make_mmvu_sample(tmp_path / "data")
    files = _export(tmp_path / "pkg", tmp_path / "data", "video-mme")
    names = set()
    for path in files:
        config = yaml.load(path.read_text(), Loader=yaml.BaseLoader)  # `!function` tags read as text
        names |= {config[key] for key in ("task", "group") if isinstance(config.get(key), str)}
    assert names == {
        "expvid_video_mme",
        "expvid_video_mme_overall",
        "expvid_video_mme_multiple_choice",
        "expvid_video_mme_open_ended",
    }
    result = runner.invoke(app, ["export", "lmms-eval", str(tmp_path / "p2"), "--data", str(tmp_path / "data"),
                                 "--suite", "mmvu"])  # fmt: skip
    assert "run: lmms-eval --tasks expvid_mmvu " in " ".join(result.output.split())
