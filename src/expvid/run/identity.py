"""Resume identity: everything that can change an answer, with defaults resolved, compared on resume.

A run directory holds one configuration. The rule is generic, so a setting added later is covered
without anyone remembering to list it: every `EvalConfig` field and every backend option is part
of the identity, except the *operational* ones listed below (where a run goes, how fast, with
which endpoint and key, how it is scored afterwards). Settings whose defaults come from elsewhere
are compared by their effect, resolved, so passing a default explicitly is never refused:

- temperature and max tokens: the values sent (the suite's paper defaults filled in);
- frames: the sampler each task uses (`--frames L1=8` and the F.2 default give the same sampler);
- prompts: a hash of every prompt text of each task (a setting that changes nothing for the data
  changes nothing here);
- backend options: validated by the backends' option model, its defaults filled in; the options
  that only say how a request is phrased (`send_temperature`, `max_tokens_param`, `thinking_style`)
  by what the model's parameter rules resolve them to (`param_rules.resolved_phrasing`), so
  `send_temperature=true` for a model that is sent a temperature anyway is the same configuration;
  the temperature itself is compared as sent (None for a model that is sent none);
- per-task entries (samplers, prompt hashes) only for the tasks both sides have: the selection is
  operational, and a run loads only the tasks it runs;
- suite settings: the suite's settings model, resolved, without the ones marked scoring-only (what
  the judge reads, which BERTScore model): those are recomputed on every scoring pass and recorded
  with the scores.

The judge is not part of the identity either: judgments are keyed by judge and answer, and every
scoring pass judges with the current judge, so a run's scores never mix two judges.

A setting added after a run directory was made is accepted at its default there (`identity_defaults`).
Run directories made before this identity (no `version`) are compared by re-resolving their
recorded settings with the same rules; their backend options were not recorded, so those are
not compared (the caller says so).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

from expvid.models.options import BackendOptions, parse_options
from expvid.models.param_rules import PHRASING_OPTIONS, resolved_phrasing
from expvid.run.config import EvalConfig
from expvid.schema import RunManifest
from expvid.schema.dataset import Dataset
from expvid.suites.protocol import EvalSuite
from expvid.suites.registry import get_suite, settings_model

#: 4: phrasing options compared resolved, the temperature as sent; 3: suite settings (`-S`) compared
#: as such; 2: suite options compared by their effects only. Older identities are upgraded.
IDENTITY_VERSION = 4

#: EvalConfig fields that never change an answer (where data and results live, which part of the
#: dataset, how fast, how it is scored); every other field is compared.
OPERATIONAL_SETTINGS = frozenset(
    {
        "data",  # the dataset is compared by its fingerprint, not by where it lies
        "out",
        "tasks",
        "limit",
        "concurrency",
        "judge",
        "judge_concurrency",
        "judge_base_url",
        "judge_api_key_env",
        "cache_dir",
        "cache_responses",
        "strict",
        "retry_failed",
        "n_bootstrap",
        "decode_workers",
        "stop_after_errors",  # when to give up on a run that cannot succeed
        "prices",  # what answers cost, not what they are
        "max_cost",
        "max_tokens_total",
        "batch",  # the same request through the batch API gets the same answer (at half the price)
    }
)

#: Backend options that never change an answer: endpoints, credentials, retries, pacing, process
#: and device placement, batching. Every other backend option is compared.
OPERATIONAL_BACKEND_OPTIONS = frozenset(
    {
        "base_url",
        "base_urls",
        "api_key_env",
        "timeout_s",
        "max_retries",
        "concurrency",
        "cache_dir",
        "backoff_base_s",
        "backoff_max_s",
        "max_retry_after_s",
        "grow_after",
        "endpoint_concurrency",
        "endpoint_failures_to_cooldown",
        "endpoint_cooldown_s",
        "tensor_parallel_size",
        "port",
        "host",
        "vllm_executable",
        "served_model_name",
        "startup_timeout_s",
        "shutdown_grace_s",
        "log_dir",
        "device",
        "device_map",
        "batch_size",
        "max_batch_images",
        "batch_wait_s",
    }
)

#: Fields compared by their resolved effect rather than as given (see `resolved_identity`).
_RESOLVED = ("temperature", "max_tokens", "frames", "suite_settings", "backend_options")


def model_name(spec: str) -> str:
    """The model spec without the server URL of `openai:MODEL@URL` (the endpoint is operational).
    A `socratic:CAPTIONER+ANSWERER` pipeline keeps both models, each without its server: two
    pipelines that share a captioner but not an answerer are different configurations."""
    if spec.startswith("socratic:"):
        from expvid.models.socratic import split_socratic
        from expvid.models.types import BackendConfigError

        try:
            captioner, answerer = split_socratic(spec.removeprefix("socratic:"))
        except BackendConfigError:
            pass
        else:
            return f"socratic:{model_name(captioner)}+{model_name(answerer)}"
    for marker in ("@http://", "@https://"):
        index = spec.find(marker)
        if index > 0:
            return spec[:index]
    return spec


def backend_identity(
    options: Mapping[str, Any], *, spec: str | None = None, thinking_enabled: bool | None = None
) -> dict[str, Any]:
    """The backend options that can change an answer, with the option model's defaults filled in;
    with the model `spec`, the phrasing options resolved by its parameter rules (as `phrasing`)."""
    parsed = parse_options(dict(options))
    resolved = parsed.model_dump(mode="json")
    identity = {
        key: value for key, value in sorted(resolved.items()) if key not in OPERATIONAL_BACKEND_OPTIONS
    }
    if spec is not None:
        for key in PHRASING_OPTIONS:
            identity.pop(key, None)
        identity["phrasing"] = resolved_phrasing(spec, parsed, thinking_enabled)
    return identity


def _thinking_enabled(thinking: Any) -> bool | None:
    """The thinking switch as a resolved on/off (None: not set), from a ThinkingConfig or its dict."""
    if thinking is None:
        return None
    if isinstance(thinking, Mapping):
        return bool(thinking.get("enabled")) and thinking.get("budget_tokens") != 0
    return bool(thinking.enabled and thinking.budget_tokens != 0)


def prompt_hashes(suite: EvalSuite, dataset: Dataset) -> dict[str, str]:
    """Per task, sha256 over the prompt text of each of its items (in file order)."""
    digests: dict[str, Any] = {}
    for task, items in dataset.by_task().items():
        digest = digests.setdefault(task, hashlib.sha256())
        for item in items:
            digest.update(suite.prompt_text(item).encode("utf-8") + b"\0")
    return {task: digest.hexdigest() for task, digest in digests.items()}


def samplers_by_task(suite: EvalSuite, dataset: Dataset, config: EvalConfig) -> dict[str, Any]:
    """Per task, the sampler settings of its first item (None for items without video)."""
    samplers: dict[str, Any] = {}
    for task, items in dataset.by_task().items():
        settings = suite.sampler(items[0], config.frames)
        samplers[task] = None if settings is None else settings.model_dump(mode="json")
    return samplers


def resolved_identity(
    config: EvalConfig,
    *,
    suite: EvalSuite,
    dataset: Dataset,
    temperature: float,
    max_tokens: int,
    backend_options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything in `config` that can change an answer, resolved (see the module docstring)."""
    generic = config.model_dump(mode="json", exclude=set(OPERATIONAL_SETTINGS) | set(_RESOLVED))
    identity: dict[str, Any] = {"version": IDENTITY_VERSION, **generic}
    identity["model"] = model_name(config.model)
    identity["temperature"] = temperature
    identity["max_tokens"] = max_tokens
    identity["frames"] = samplers_by_task(suite, dataset, config)
    identity["prompt"] = prompt_hashes(suite, dataset)
    identity["suite_settings"] = suite_settings_identity(suite)
    if backend_options is not None:
        identity["backend"] = backend_identity(
            backend_options, spec=config.model, thinking_enabled=_thinking_enabled(config.thinking)
        )
        _resolve_api(identity["backend"], config.model)
        if identity["backend"]["phrasing"].get("temperature_sent") is False:
            identity["temperature"] = None  # never sent: any value asked for is the same run
    return dict(sorted(identity.items()))


def _resolve_api(backend: dict[str, Any], spec: str) -> None:
    """The OpenAI API option by its effect: the model's own default (chat, or responses for the
    models served only there) is the same as not choosing; for other backends it means nothing."""
    from expvid.models.responses_backend import default_api

    api = backend.get("api")
    inner = spec.removeprefix("blind:")
    if api is None:
        return
    if not inner.startswith("openai:") or api == default_api(model_name(inner).removeprefix("openai:")):
        backend["api"] = None


def suite_settings_identity(suite: EvalSuite) -> dict[str, Any]:
    """The suite's settings that can change an answer, resolved (none for a suite without settings)."""
    identity = getattr(getattr(suite, "settings", None), "identity", None)
    return identity() if callable(identity) else {}


def _older_settings_identity(suite_name: str, recorded: dict[str, Any]) -> dict[str, Any]:
    """What an older run's recorded settings come to as today's suite settings (its model's `upgrade`
    says what settings added since meant for runs made before them)."""
    model = settings_model(suite_name)
    settings = model.parse(model.upgrade(dict(recorded)), suite=suite_name)
    return dict(settings.identity())


def stored_identity(
    manifest: RunManifest,
    *,
    dataset: Dataset,
    resolve: Callable[[EvalSuite, EvalConfig], tuple[float, int]],
) -> dict[str, Any] | None:
    """The identity a run directory was made with: as recorded, or re-resolved for older runs
    (None when not even their settings were recorded)."""
    identity = manifest.config.get("identity")
    if isinstance(identity, dict) and identity.get("version") == IDENTITY_VERSION:
        return identity
    if isinstance(identity, dict) and identity.get("version") == 3:  # phrasing as given then
        return _resolved_phrasing(identity, manifest)
    settings = manifest.config.get("settings")
    if not isinstance(settings, dict):
        return None
    config = EvalConfig.model_validate(settings)
    old_settings = _older_settings_identity(manifest.suite, config.suite_settings)
    if isinstance(identity, dict) and identity.get("version") == 2:  # suite settings were not in it
        return _resolved_phrasing({**identity, "suite_settings": old_settings}, manifest)
    suite = get_suite(manifest.suite, settings_model(manifest.suite).upgrade(dict(config.suite_settings)))
    temperature, max_tokens = resolve(suite, config)
    generation = manifest.config.get("generation")
    if isinstance(generation, dict):  # what the old run actually sent
        temperature = generation.get("temperature", temperature)
        max_tokens = generation.get("max_tokens", max_tokens)
    return resolved_identity(
        config, suite=suite, dataset=dataset, temperature=temperature, max_tokens=max_tokens
    )


def _resolved_phrasing(identity: dict[str, Any], manifest: RunManifest) -> dict[str, Any]:
    """An identity that recorded the phrasing options as given and the temperature as asked, resolved
    the way this version compares them, from what it recorded: its backend options, the server the
    run used, its model and thinking switch."""
    upgraded = dict(identity, version=IDENTITY_VERSION)
    backend = identity.get("backend")
    if isinstance(backend, dict):
        described = manifest.config.get("backend")
        base_url = described.get("base_url") if isinstance(described, dict) else None
        options = {key: value for key, value in backend.items() if key in BackendOptions.model_fields}
        if isinstance(base_url, str) and base_url.startswith(("http://", "https://")):
            options["base_url"] = base_url.split(",")[0]
        upgraded["backend"] = backend_identity(
            options,
            spec=str(identity.get("model")),
            thinking_enabled=_thinking_enabled(identity.get("thinking")),
        )
        _resolve_api(upgraded["backend"], str(identity.get("model")))
        if upgraded["backend"]["phrasing"].get("temperature_sent") is False:
            upgraded["temperature"] = None
    return upgraded


#: Identity entries holding one value per task.
PER_TASK = ("frames", "prompt")


def same_tasks(before: Mapping[str, Any], now: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both identities with their per-task entries (samplers, prompt hashes) cut to the tasks both
    have: the task selection is operational (a resume may add tasks), and a run loads only the tasks
    it runs, so a task on one side only is no difference."""
    before, now = dict(before), dict(now)
    for key in PER_TASK:
        first, second = before.get(key), now.get(key)
        if isinstance(first, Mapping) and isinstance(second, Mapping):
            common = set(first) & set(second)
            before[key] = {task: value for task, value in first.items() if task in common}
            now[key] = {task: value for task, value in second.items() if task in common}
    return before, now


def identity_defaults(config: EvalConfig) -> dict[str, Any]:
    """The identity's generic entries, backend options and suite settings at their defaults: what a
    run made before a setting existed ran with (a new setting's default keeps the old behaviour)."""
    plain = EvalConfig(suite=config.suite, data=config.data, model=config.model, out=config.out)
    generic = plain.model_dump(mode="json", exclude=set(OPERATIONAL_SETTINGS) | set(_RESOLVED))
    suite_defaults = dict(settings_model(config.suite).parse({}, suite=config.suite).identity())
    return {
        **generic,
        "model": model_name(config.model),
        "backend": backend_identity(
            {}, spec=config.model, thinking_enabled=_thinking_enabled(config.thinking)
        ),
        "suite_settings": suite_defaults,
    }


def identity_diff(
    before: Mapping[str, Any], now: Mapping[str, Any], defaults: Mapping[str, Any] | None = None
) -> list[str]:
    """Readable differences, one per leaf setting: `frames.tools.num_frames: run has 8, now 16`.

    A setting the run did not record (it did not exist then) is a difference only when it is now
    set to something other than its default (`defaults`)."""
    lines: list[str] = []
    _diff(before, now, "", lines, defaults or {})
    return lines


_UNSET = object()


def _diff(before: Any, now: Any, path: str, lines: list[str], defaults: Any) -> None:
    if isinstance(before, Mapping) and isinstance(now, Mapping):
        for key in sorted(set(before) | set(now), key=str):
            if key == "version":
                continue
            where = f"{path}.{key}" if path else str(key)
            default = defaults.get(key, _UNSET) if isinstance(defaults, Mapping) else _UNSET
            if key not in before:
                if default is _UNSET or now[key] != default:
                    lines.append(f"{where}: not in the run, now {_show(now[key])}")
            elif key not in now:
                lines.append(f"{where}: run has {_show(before[key])}, now not set")
            else:
                _diff(before[key], now[key], where, lines, default if default is not _UNSET else {})
        return
    if before != now:
        if path.startswith("prompt."):
            lines.append(f"{path}: the prompt texts differ (run {str(before)[:12]}…, now {str(now)[:12]}…)")
        else:
            lines.append(f"{path}: run has {_show(before)}, now {_show(now)}")


def _show(value: Any) -> str:
    return repr(value)
