"""Each option is declared once: its flag and its key reach the same typed setting, layered the same way."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle

import pytest
from helpers import REPO

from etrace_lint.cli.docs import options_markdown
from etrace_lint.cli.main import build_parser, main, settings_from_args
from etrace_lint.config.options import ENGINE_OPTIONS, OPTIONS, flag_is_on, option_for_flag
from etrace_lint.config.settings import EngineScope, EngineSettings, Settings, declared_fields, option_values
from etrace_lint.core.exit_codes import EXIT_ERROR
from etrace_lint.core.findings import Level
from etrace_lint.writers import FORMATS, OUTPUT_FORMATS, get_writer

WITH_FLAG = [o for o in OPTIONS if o.flags and not o.positional]
WITH_KEY = [o for o in OPTIONS if o.key]

# a value for one flag and what the settings hold after it, by kind (or by option where a kind does not say)
FLAG_SAMPLES = {
    "int": ("3", 3), "float": ("0.75", 0.75), "str": ("x.out", "x.out"), "level": ("error", Level.ERROR),
    "list": ("ETL005,ETL2", ["ETL005", "ETL2"]), "environ": ("dt=0.1ms", {"dt": "0.1ms"}),
    "shard": ("2/3", "2/3"), "color": ("never", False), "memory": ("512MiB", 512 * 1024 ** 2),
}
# a value in [tool.etrace-lint] (as TOML) and what the settings hold, given the file's folder
KEY_SAMPLES = {
    "flag": ("true", lambda base: True), "int": ("3", lambda base: 3), "float": ("0.75", lambda base: 0.75),
    "str": ('"x"', lambda base: "x"), "level": ('"error"', lambda base: Level.ERROR),
    "list": ('["ETL005"]', lambda base: ["ETL005"]),
    "folder": ('"d"', lambda base: os.path.join(base, "d")),
    "paths": ('["m"]', lambda base: [os.path.join(base, "m")]),
    "per-file-ignores": ('{ "a/*" = ["ETL201"] }', lambda base: {"a/*": ["ETL201"]}),
    "levels": ('{ etl005 = "error" }', lambda base: {"ETL005": Level.ERROR}),
    "compile-options": ("{ sparse-n = 2 }", lambda base: {"sparse_n": 2}),
    "environ": ('{ dt = "0.1 ms" }', lambda base: {"dt": "0.1 ms"}),
    "memory": ('"2GiB"', lambda base: 2 * 1024 ** 3),
}


def _flag_sample(option, tmp_path):
    if option.kind == "flag":
        return [option.flag], option.const
    if option.kind == "folder":
        return [option.flag, "d"], str(tmp_path / "d")
    if option.name == "output_format":
        return [option.flag, "json"], "json"
    if option.name == "config":
        (tmp_path / "other.toml").write_text("[tool.etrace-lint]\n")
        return [option.flag, "other.toml"], "other.toml"
    if option.name == "baseline":
        (tmp_path / "b.json").write_text(json.dumps({"format": 1, "fingerprints": []}))
        return [option.flag, "b.json"], "b.json"
    text, value = FLAG_SAMPLES[option.kind]
    return [option.flag, text], value


def _toml(option, text: str) -> str:
    section, _, name = option.key.rpartition(".")
    table = "tool.etrace-lint" + (f".{section}" if section else "")
    return f"[{table}]\n{name} = {text}\n"


def _settings(tmp_path, monkeypatch, *argv, toml=None):
    if toml is not None:
        (tmp_path / "pyproject.toml").write_text(toml, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return settings_from_args(build_parser().parse_args(list(argv)))


def test_the_settings_classes_declare_every_option_as_the_table_does():
    """The typed fields a type checker reads are the table's: same names, annotations and order."""
    settings_lines = [f"{f.name}: {f.type}" for f in dataclasses.fields(Settings)][:len(OPTIONS)]
    engine_lines = [f"{f.name}: {f.type}" for f in dataclasses.fields(EngineSettings)][:len(ENGINE_OPTIONS)]
    assert settings_lines + engine_lines == declared_fields()


def test_settings_are_frozen_so_a_stage_hands_on_a_changed_copy():
    settings = Settings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.quiet = True  # type: ignore[misc]
    changed = settings.with_values({"quiet": True}, "a test")
    assert changed.quiet and not settings.quiet and changed.origins == {"quiet": "a test"}


def test_every_option_is_a_field_of_the_settings_with_its_default():
    settings = Settings()
    fields = [f.name for f in dataclasses.fields(Settings)]
    assert fields[:len(OPTIONS)] == [o.name for o in OPTIONS]
    for option in OPTIONS:
        expected = option.factory() if option.factory else option.default
        assert getattr(settings, option.name) == expected, option.name
    # a list default is the settings' own: changing one never changes the next
    settings.extend_select.append("ETL205")
    assert Settings().extend_select == []


@pytest.mark.parametrize("option", WITH_FLAG, ids=lambda o: o.flag)
def test_every_flag_reaches_its_setting(tmp_path, monkeypatch, option):
    argv, expected = _flag_sample(option, tmp_path)
    settings = _settings(tmp_path, monkeypatch, *argv)
    assert getattr(settings, option.name) == expected
    untouched = _settings(tmp_path, monkeypatch)
    assert getattr(untouched, option.name) == getattr(Settings(root=str(tmp_path)), option.name)


@pytest.mark.parametrize("option", WITH_KEY, ids=lambda o: o.key)
def test_every_key_reaches_its_setting_and_a_flag_wins(tmp_path, monkeypatch, option):
    text, expected = KEY_SAMPLES[option.kind]
    settings = _settings(tmp_path, monkeypatch, toml=_toml(option, text))
    assert getattr(settings, option.name) == expected(str(tmp_path))
    if not option.flags or option.positional:
        return
    argv, from_flag = _flag_sample(option, tmp_path)
    layered = getattr(_settings(tmp_path, monkeypatch, *argv, toml=_toml(option, text)), option.name)
    if option.combine == "extend":
        assert layered == expected(str(tmp_path)) + from_flag
    elif option.combine == "update":
        assert layered == {**expected(str(tmp_path)), **from_flag}
    else:
        assert layered == from_flag


@pytest.mark.parametrize("flag", ["--fix", "--unsafe-fixes", "--diff", "--show-flows"])
def test_the_fix_and_flow_flags_parse_to_typed_settings(tmp_path, monkeypatch, flag):
    settings = _settings(tmp_path, monkeypatch, flag)
    name = option_for_flag(flag).name
    assert getattr(settings, name) is True
    assert getattr(_settings(tmp_path, monkeypatch), name) is False
    # behaviour, not the engine's business: they never change what is linted or cached
    assert settings.fingerprint_data() == _settings(tmp_path, monkeypatch).fingerprint_data()


@pytest.mark.parametrize("toml, words", [
    ('[tool.etrace-lint]\nunsafe-fix = true\n', ["unknown key 'unsafe-fix'", "did you mean 'unsafe-fixes'?"]),
    ('[tool.etrace-lint]\nshow_flows = true\n', ["did you mean 'show-flows'?"]),
    ('[tool.etrace-lint]\nfix = true\n', ["unknown key 'fix'"]),  # the command line only, as in ruff
    ('[tool.etrace-lint.verify]\ncosine_floor = 0.9\n', ["'verify.cosine_floor'", "'verify.cosine-floor'"]),
    ('[tool.etrace-lint]\nverify = 3\n', ["verify must be a table, not an integer (3)"]),
    ('[tool.etrace-lint.verify]\nsteps = 0\n', ["verify.steps must be positive, not 0"]),
    ('[tool.etrace-lint]\njobs = -1\n', ["jobs must be zero or more, not -1"]),
])
def test_file_mistakes_name_the_key_and_the_closest_one(tmp_path, monkeypatch, capsys, toml, words):
    (tmp_path / "pyproject.toml").write_text(toml)
    monkeypatch.chdir(tmp_path)
    assert main(["--no-cache", "--list-targets"]) == EXIT_ERROR
    err = capsys.readouterr().err
    for word in words:
        assert word in err


@pytest.mark.parametrize("argv, message", [
    (["--jobs", "-1"], "--jobs must be zero or more"),
    (["--timeout", "0"], "--timeout must be positive"),
    (["--verify-steps", "0"], "--verify-steps must be positive"),
    (["--select", "ETL0005"], "unknown rule 'ETL0005'; did you mean ETL005?"),
    (["--statistics", "--output-format", "sarif"], "--statistics prints text or json, not sarif"),
    (["--shard", "3/2"], "--shard"),
])
def test_flag_mistakes_are_usage_errors(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(["--isolated", "--list-targets", *argv]) == EXIT_ERROR
    assert message in capsys.readouterr().err


def test_unknown_rule_suggestions_are_the_same_everywhere(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["rule", "weight-to-weigth"]) == EXIT_ERROR
    from_rule = capsys.readouterr().err
    assert main(["--isolated", "--ignore", "weight-to-weigth"]) == EXIT_ERROR
    from_flag = capsys.readouterr().err
    assert from_rule == from_flag
    assert from_flag.startswith("etrace-lint: error: unknown rule 'weight-to-weigth'; did you mean weight-to-weight")


def test_the_engine_gets_typed_settings_with_the_options_it_reads(tmp_path, monkeypatch):
    # the probe is the one engine option on by default
    assert Settings().for_engine() == EngineSettings() and EngineSettings().set_options() == {"probe": True}
    toml = '[tool.etrace-lint.verify]\nsteps = 8\ndevice = "cpu"\n[tool.etrace-lint.environ]\ndt = "0.1 ms"\n'
    settings = _settings(tmp_path, monkeypatch, "--verify", "--check-online-grad", "--verify-batch", "2",
                         "--verify-seed", "0", "--verify-cosine-floor", "0.9", "--verify-algorithms", "d_rtrl",
                         "--environ", "tau=2ms", "--fix", "--show-flows", "--drop-env", "AWS_*", toml=toml)
    engine = settings.for_engine(EngineScope(count_only=frozenset({"ETL003"})))
    assert engine.set_options() == {
        "check_online_grad": True, "probe": True, "verify": True, "verify_steps": 8, "verify_batch": 2,
        "verify_seed": 0, "verify_cosine_floor": 0.9, "verify_algorithms": ["d_rtrl"], "device": "cpu",
        "environ": {"dt": "0.1 ms", "tau": "2ms"}}
    assert engine.scope.count_only == {"ETL003"} and engine.drop_env == ("AWS_*",)
    assert not hasattr(engine, "fix") and not hasattr(engine, "show_flows"), "output options stay out of the engine"
    assert pickle.loads(pickle.dumps(engine)) == engine, "it crosses the pipe to a worker as it is"
    with pytest.raises(dataclasses.FrozenInstanceError):
        engine.verify = False
    # what the engine reads, and only that, keys the cache
    assert settings.fingerprint_data()["engine"] == engine.set_options()
    assert dataclasses.replace(settings, fix=False).fingerprint_data() == settings.fingerprint_data()


def test_every_opt_in_flag_names_an_option_the_engine_reads():
    from etrace_lint.core.registry import all_rules

    flags = {rule.opt_in_flag for rule in all_rules().values() if rule.opt_in_flag}
    assert {"--verify", "--check-online-grad"} <= flags
    for flag in flags:
        assert option_for_flag(flag).engine, flag
    assert flag_is_on("--check-online-grad", option_values(EngineSettings(check_online_grad=True)))
    assert flag_is_on("--check-online-grad", option_values(Settings(check_online_grad=True)))
    assert not flag_is_on("--verify", option_values(EngineSettings(check_online_grad=True)))
    with pytest.raises(KeyError, match=r"did you mean --verify\?"):
        option_for_flag("--verfy")


def test_every_output_format_has_a_writer():
    assert tuple(build_parser()._option_string_actions["--output-format"].choices) == FORMATS
    for name in OUTPUT_FORMATS:
        assert callable(get_writer(name)) and callable(get_writer(name, quiet=True)), name


def test_the_configuration_page_is_the_options_table():
    """docs/configuration.md holds no copy of the table: the site's hook writes it there from OPTIONS when the
    site is built, so the reference cannot fall behind the options."""
    import importlib.util

    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (the test extra installs it)")
    with open(os.path.join(REPO, "docs", "configuration.md"), encoding="utf-8") as handle:
        page = handle.read()
    spec = importlib.util.spec_from_file_location("generate", os.path.join(REPO, "docs", "hooks", "generate.py"))
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    assert page.count(hook.OPTIONS_TABLE) == 1 and "| `--select IDS` |" not in page
    built = hook.on_page_markdown(page, None, None, None)
    table = options_markdown()
    assert table in built
    for option in OPTIONS:
        assert all(f"`{flag}" in table for flag in option.flags if flag.startswith("-"))
        assert not option.key or f"`{option.key}`" in table


def test_each_stage_gets_only_its_own_settings_and_the_policy_decides_the_scope_once(tmp_path, monkeypatch):
    from etrace_lint.policy.scope import engine_scope, stage_settings

    settings = _settings(tmp_path, monkeypatch, "--verify", "--fix", "--shard", "1/2", "--select", "ETL0,ETL4",
                         "--output-format", "json")
    stages = stage_settings(settings)
    assert stages.engine.scope == engine_scope(stages.policy) == engine_scope(settings.for_policy())
    assert stages.policy.select == ("ETL0", "ETL4") and "verify" in stages.policy.flags_on
    assert stages.output.output_format == "json" and stages.output.fix and stages.discovery.shard == "1/2"
    # the shard's record carries every option's value, as merge compares them
    assert stages.discovery.configuration == option_values(settings)
    assert not hasattr(stages.policy, "output_format") and not hasattr(stages.output, "select")
    assert not hasattr(stages.discovery, "fail_level") and not hasattr(stages.run, "show_info")
    for stage in (stages.discovery, stages.run, stages.policy, stages.output):
        with pytest.raises(dataclasses.FrozenInstanceError):
            stage.root = "elsewhere"  # type: ignore[misc]
