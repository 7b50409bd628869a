"""A video run on a managed vLLM server: the same frames, sent as one `video_url` frame sequence.

The stand-in `vllm` serves the real loopback API, which decodes every frame of the sequence; its
echo says how many videos and frames arrived, so a frame lost on the way fails the test.
"""

from __future__ import annotations

import asyncio
import json

from expvid.run.config import EvalConfig
from expvid.run.evaluate import evaluate
from expvid.suites.protocol import FrameOptions


def test_video_input_mode_reaches_vllm_as_one_frame_sequence(
    fake_vllm, model_dir, sample_dir, tmp_path, record
):
    (model_dir / "generation_config.json").write_text(
        json.dumps(
            {"do_sample": True, "temperature": 0.1, "top_k": 1, "top_p": 0.001, "repetition_penalty": 1.05}
        )
    )
    out = tmp_path / "run"
    config = EvalConfig(
        data=sample_dir,
        model=f"vllm:{model_dir}",
        out=out,
        tasks=["tools"],
        limit=2,
        frames=FrameOptions(counts={"L1": 6}),
        cache_dir=None,
        n_bootstrap=10,
        input_mode="video",
        backend_options={"vllm_executable": fake_vllm},
    )
    result = asyncio.run(evaluate(config, command=["test"], show_progress=False))

    assert result.generated == 2 and result.failed == 0
    argv = record()["argv"]
    assert json.loads(argv[argv.index("--limit-mm-per-prompt") + 1]) == {"video": 1}
    assert json.loads(argv[argv.index("--media-io-kwargs") + 1]) == {"video": {"num_frames": -1}}
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    for prediction in predictions:
        assert prediction["response"] == "model=Qwen2.5-VL-7B-Instruct images=0 texts=1 videos=1 frames=6"
        assert prediction["sent"]["input_mode"] == "video"
        assert prediction["sent"]["video"]["num_frames"] == 6
        times = [frame["time"] for frame in prediction["frames"]]
        assert prediction["sent"]["video"]["fps"] == round(5 / (times[-1] - times[0]), 6)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["generation"]["input_mode"] == "video"
    assert manifest["config"]["identity"]["input_mode"] == "video"
    applied = manifest["config"]["backend"]["generation_config"]
    assert (applied["top_k"], applied["top_p"], applied["repetition_penalty"]) == (1, 0.001, 1.05)
