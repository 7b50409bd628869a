"""The optional VLM captioner (the paper's "Qwen caption") sees the frames of each Level-1 clip."""

from __future__ import annotations

from build_helpers import read_jsonl, run_build, subset
from build_responder import ScriptedLab

from expvid.fakes.models.server import LoopbackServer
from expvid.suites.sample import read_truth

VIDEO = "65321"


def test_captions_describe_the_clips_own_frames_and_feed_the_g1_prompts(sample_sources, sample_dir, tmp_path):
    sources = subset(sample_sources, tmp_path / "sources", [VIDEO])
    lab = ScriptedLab(caption_video=VIDEO)
    with LoopbackServer(lab) as server:
        report = run_build(
            sources, tmp_path / "out", server, vlm=f"openai:qwen2.5-vl@{server.openai_base_url}",
            levels=(1,), blind_samples=0, vlm_frames=6,
        )  # fmt: skip
        caption_requests = [r for r in server.requests if any("sampled in time order" in t for t in r.texts)]
        g1_texts = ["\n".join(r.texts) for r in server.requests if any("Qwen caption" in t for t in r.texts)]
    assert caption_requests and all(r.n_images == 6 for r in caption_requests)
    assert all(mime == "image/jpeg" for r in caption_requests for mime in r.image_mimes)
    assert report["calls"]["by_stage"]["vlm:visual_caption"]["requests"] == len(caption_requests)
    assert all("(not available)" not in text for text in g1_texts)

    truth = read_truth(sample_dir)
    steps = truth["experiments"][VIDEO]["steps"]
    fps = truth["fps"]
    checked = 0
    for line in read_jsonl(tmp_path / "out" / "provenance.jsonl"):
        caption = next(d["raw_response"] for d in line["drafts"] if d["prompt_id"] == "visual_caption")
        middle = (line["source"]["start"] + line["source"]["end"]) / 2 * fps
        step = next(s for s in steps if s["frames"][0] <= middle < s["frames"][1])
        tool = next(t for t in _tools(step["text"], lab) if t)
        assert f"a {tool} over" in caption  # the scripted VLM read the frame numbers of this clip
        checked += 1
    assert checked == report["total_items"] > 0
    # With a caption that matches, G.1.6 scores the alignment high and operation MCQs are drafted.
    assert report["items"]["operation"]["kept"] > 0


def _tools(step_text: str, lab: ScriptedLab) -> list[str]:
    script = lab.scripts[VIDEO]
    return [s.tool for s in script.steps if s.text == step_text]
