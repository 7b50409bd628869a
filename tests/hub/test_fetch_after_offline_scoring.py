"""A Hub download still works after SFE's BERTScore (and the offline MiniLM judge) ran in the process.

The scorers load their models with `local_files_only`; they must not switch the process to offline
mode: huggingface_hub reads HF_HUB_OFFLINE once, when it is first imported, so a scorer that set
it before importing transformers made every later download fail. A fresh interpreter is the
real condition (the model libraries are first imported by the scorer, as in `expvid eval-set`
running SFE cells before a cell whose data comes from the Hub).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import json, os, sys
from pathlib import Path
from expvid.suites.registry import get_suite
from expvid.scoring.judges.embeddings import MiniLMEmbedder
from expvid.hub.fetch import FetchRequest, fetch_release

suite = get_suite("sfe")
[value] = suite.scorer.score_pairs([("a ring of six carbon atoms", "Benzene is a ring of six carbon atoms.")])
MiniLMEmbedder().encode(["the offline judge's embeddings load the same way"])
env_after_scoring = {name: os.environ.get(name) for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
outcome = fetch_release(
    FetchRequest(suite="expvid", out=Path(sys.argv[2]), endpoint=sys.argv[1], tasks=["tools"], progress=False)
)
print(json.dumps({
    "f1": value.f1,
    "which": suite.scorer.describe()["which"],
    "env": env_after_scoring,
    "complete": outcome.complete,
}))
"""


def test_sfe_bertscore_then_a_hub_fetch_in_one_process(hub, expvid_repo, tmp_path: Path) -> None:
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE", "HF_ENDPOINT")
    }
    env.update(HF_HOME=str(tmp_path / "hf_home"), PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, hub.url, str(tmp_path / "data")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert 0.5 < result["f1"] <= 1.0 and result["which"] in ("minilm", "official")
    assert result["env"] == {"HF_HUB_OFFLINE": None, "TRANSFORMERS_OFFLINE": None}
    assert result["complete"] and (tmp_path / "data" / "annotations" / "level1" / "tools.jsonl").is_file()
