"""Everything a user can get wrong about a checkpoint fails at `create_backend`, naming the folder."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from expvid.models import BackendConfigError, create_backend

torch = pytest.importorskip("torch", reason="the transformers backend needs torch")


def copy_of(tiny_checkpoints: dict[str, Path], name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(tiny_checkpoints[name], target)
    return target


def edit_config(folder: Path, **changes: object) -> None:
    config = json.loads((folder / "config.json").read_text())
    config.update(changes)
    (folder / "config.json").write_text(json.dumps(config))


def test_a_missing_folder_is_named(tmp_path):
    with pytest.raises(BackendConfigError, match="no such checkpoint folder"):
        create_backend(f"hf:{tmp_path / 'nope'}")


def test_a_hub_id_that_was_never_downloaded_says_how_to_get_it():
    with pytest.raises(BackendConfigError, match=r"not in the local Hugging Face cache.*hf download"):
        create_backend("hf:expvid-tests/never-downloaded-model")


def test_a_folder_without_config_is_not_a_checkpoint(tmp_path):
    (tmp_path / "weights").mkdir()
    with pytest.raises(BackendConfigError, match=r"no config\.json"):
        create_backend(f"hf:{tmp_path / 'weights'}")


def test_an_unsupported_architecture_lists_what_is_supported(tiny_checkpoints, tmp_path):
    folder = copy_of(tiny_checkpoints, "qwen2_vl", tmp_path)
    edit_config(folder, model_type="bert", architectures=["BertModel"])
    with pytest.raises(BackendConfigError) as raised:
        create_backend(f"hf:{folder}")
    message = str(raised.value)
    assert "unsupported architecture model_type='bert'" in message and "BertModel" in message
    for supported in ("qwen2_vl", "qwen2_5_vl", "internvl", "llava_onevision"):
        assert supported in message


def test_remote_code_internvl_points_to_the_native_conversion(tiny_checkpoints, tmp_path):
    folder = copy_of(tiny_checkpoints, "internvl", tmp_path)
    edit_config(folder, model_type="internvl_chat", architectures=["InternVLChatModel"])
    with pytest.raises(BackendConfigError, match=r"remote-code format.*InternVL3-8B-hf.*vllm:PATH"):
        create_backend(f"hf:{folder}")


def test_missing_weight_files_are_reported_with_what_is_there(tiny_checkpoints, tmp_path):
    folder = copy_of(tiny_checkpoints, "llava_onevision", tmp_path)
    (folder / "model.safetensors").unlink()
    with pytest.raises(BackendConfigError, match=r"weights are missing.*config\.json"):
        create_backend(f"hf:{folder}")


def test_weight_files_that_lack_tensors_are_refused_not_filled_with_noise(tiny_checkpoints, tmp_path):
    from safetensors.torch import load_file, save_file

    folder = copy_of(tiny_checkpoints, "qwen2_vl", tmp_path)
    tensors = load_file(folder / "model.safetensors")
    dropped = sorted(name for name in tensors if "visual" in name)[:2]
    save_file(
        {k: v for k, v in tensors.items() if k not in dropped},
        folder / "model.safetensors",
        metadata={"format": "pt"},
    )
    with pytest.raises(BackendConfigError, match=r"do not match Qwen2VLForConditionalGeneration: 2 missing"):
        create_backend(f"hf:{folder}")


def test_a_missing_tokenizer_is_reported(tiny_checkpoints, tmp_path):
    folder = copy_of(tiny_checkpoints, "internvl", tmp_path)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (folder / name).unlink()
    with pytest.raises(BackendConfigError, match="no tokenizer files"):
        create_backend(f"hf:{folder}")


def test_a_missing_chat_template_is_reported(tiny_checkpoints, tmp_path):
    folder = copy_of(tiny_checkpoints, "qwen2_5_vl", tmp_path)
    (folder / "chat_template.jinja").unlink()
    with pytest.raises(BackendConfigError, match="no chat template"):
        create_backend(f"hf:{folder}")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_asking_for_a_gpu_that_is_not_there_fails_before_loading(tiny_checkpoints):
    with pytest.raises(BackendConfigError, match="no CUDA GPU is visible"):
        create_backend(f"hf:{tiny_checkpoints['qwen2_vl']}", device="cuda")


def test_a_device_that_is_not_a_device_is_named(tiny_checkpoints):
    with pytest.raises(BackendConfigError, match="'gpu0' is not a torch device"):
        create_backend(f"hf:{tiny_checkpoints['qwen2_vl']}", device="gpu0")


def test_unknown_dtype_is_an_option_error(tiny_checkpoints):
    with pytest.raises(BackendConfigError, match="dtype"):
        create_backend(f"hf:{tiny_checkpoints['qwen2_vl']}", dtype="int3")


def test_the_spec_needs_a_path():
    with pytest.raises(BackendConfigError, match=r"checkpoint path is missing \(hf:PATH\)"):
        create_backend("hf:")


def test_a_missing_transformers_stack_says_what_to_install(tmp_path, monkeypatch):
    folder = tmp_path / "Qwen2-VL-2B-Instruct"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "qwen2_vl"}))
    (folder / "model.safetensors").write_bytes(b"")
    (folder / "tokenizer.json").write_text("{}")
    monkeypatch.setitem(sys.modules, "transformers", None)  # as if it were not installed
    with pytest.raises(BackendConfigError, match=r"needs torch and transformers.*pip install 'expvid\[hf\]'"):
        create_backend(f"hf:{folder}")
