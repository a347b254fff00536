"""The stowage: config block: defaults, inheritance from compression.*, errors."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from stowage.context_engine.config.schema import KEYS
from stowage.context_engine.config.settings import StowageConfigError, default_settings, load_settings


def test_defaults():
    s = default_settings()
    assert s.compaction.threshold == 0.75
    assert s.compaction.target_ratio == 0.20
    assert s.compaction.protect_first_n == 3
    assert s.compaction.protect_last_n == 8
    assert s.compaction.abort_on_summary_failure is False
    assert s.compaction.provider_profile == "strict"
    assert s.tokenizer.encoding == "o200k_base"
    assert s.tokenizer.allow_download is False
    assert dict(s.spill.per_tool) == {} and s.spill.never_spill == ()
    assert all(origin == "default" for origin in s.origins.values())
    assert set(s.origins) == {k.path for k in KEYS}


def test_every_default_passes_its_own_validation():
    explicit = {}
    for key in KEYS:
        explicit.setdefault(key.section, {})[key.name] = copy.deepcopy(key.default)
    s = load_settings({"stowage": explicit})
    assert s.as_dict() == default_settings().as_dict()
    assert all(origin == "stowage" for origin in s.origins.values())


def test_none_and_missing_config():
    assert load_settings(None).compaction.threshold == 0.75
    assert load_settings({"stowage": None}).compaction.threshold == 0.75
    assert load_settings({"stowage": {"compaction": None}}).compaction.threshold == 0.75


def test_inherits_compression_keys():
    s = load_settings(
        {
            "compression": {
                "threshold": 0.6,
                "target_ratio": 0.3,
                "protect_first_n": 5,
                "protect_last_n": 6,
                "abort_on_summary_failure": True,
            }
        }
    )
    c = s.compaction
    assert (c.threshold, c.target_ratio, c.protect_first_n, c.protect_last_n, c.abort_on_summary_failure) == (
        0.6,
        0.3,
        5,
        6,
        True,
    )
    assert s.origins["compaction.threshold"] == "compression.threshold"
    assert s.origins["compaction.abort_on_summary_failure"] == "compression.abort_on_summary_failure"


def test_inherited_protect_last_n_capped_at_8():
    s = load_settings({"compression": {"protect_last_n": 20}})  # the Hermes default
    assert s.compaction.protect_last_n == 8
    assert s.origins["compaction.protect_last_n"] == "compression.protect_last_n"
    # an explicit stowage value is not capped
    assert load_settings({"stowage": {"compaction": {"protect_last_n": 20}}}).compaction.protect_last_n == 20


def test_explicit_stowage_value_wins_over_inherited():
    s = load_settings(
        {"compression": {"threshold": 0.6, "protect_first_n": 5}, "stowage": {"compaction": {"threshold": 0.8}}}
    )
    assert s.compaction.threshold == 0.8
    assert s.origins["compaction.threshold"] == "stowage"
    assert s.compaction.protect_first_n == 5


def test_compression_keys_without_stowage_counterpart_are_ignored():
    s = load_settings({"compression": {"enabled": False, "in_place": True, "hygiene_hard_message_limit": 5000}})
    assert s.as_dict() == default_settings().as_dict()


def test_integer_given_as_float_and_choice_normalized():
    s = load_settings(
        {
            "stowage": {
                "compaction": {"protect_last_n": 10.0, "provider_profile": " OpenAI "},
                "tool_search": {"enabled": False},
            }
        }
    )
    assert s.compaction.protect_last_n == 10 and isinstance(s.compaction.protect_last_n, int)
    assert s.compaction.provider_profile == "openai"
    assert s.tool_search.enabled == "off"  # YAML turns `off` into False


def test_number_accepts_int():
    assert load_settings({"stowage": {"compaction": {"threshold": 1 / 2}}}).compaction.threshold == 0.5
    assert load_settings({"stowage": {"store": {"ttl_hours": 24}}}).store.ttl_hours == 24.0


def _error(config) -> StowageConfigError:
    with pytest.raises(StowageConfigError) as info:
        load_settings(config)
    return info.value


def test_out_of_range_names_key_value_and_range():
    err = _error({"stowage": {"compaction": {"threshold": 1.5}}})
    assert len(err.problems) == 1
    problem = err.problems[0]
    assert "stowage.compaction.threshold" in problem
    assert "1.5" in problem
    assert "from 0.1 to 0.95" in problem
    assert "out of range" in problem
    assert "config.yaml" in str(err) and "stowage.compaction.threshold" in str(err)


def test_inherited_bad_value_names_the_compression_key():
    err = _error({"compression": {"target_ratio": 0.95}})
    assert "compression.target_ratio" in err.problems[0]
    assert "stowage.compaction.target_ratio" in err.problems[0]
    assert "0.95" in err.problems[0] and "from 0.05 to 0.8" in err.problems[0]


@pytest.mark.parametrize(
    "section,key,value,accepted",
    [
        ("compaction", "threshold", "high", "a number from 0.1 to 0.95"),
        ("compaction", "protect_last_n", 2.5, "a whole number from 1 to 200"),
        ("compaction", "protect_last_n", True, "a whole number"),
        ("compaction", "abort_on_summary_failure", "yes", "true or false"),
        ("compaction", "provider_profile", "anthropic", "one of 'strict', 'openai'"),
        ("tokenizer", "encoding", "p50k_base", "one of 'o200k_base', 'cl100k_base'"),
        ("store", "path", 42, "a string"),
        ("spill", "never_spill", "terminal", "a list of strings"),
        ("spill", "per_tool", {"terminal": -5}, "a mapping of tool name"),
        ("spill", "per_tool", {"terminal": True}, "a mapping of tool name"),
    ],
)
def test_wrong_type_or_value(section, key, value, accepted):
    err = _error({"stowage": {section: {key: value}}})
    assert len(err.problems) == 1
    problem = err.problems[0]
    assert f"stowage.{section}.{key}" in problem
    assert repr(value) in problem
    assert accepted in problem


def test_unknown_key_with_did_you_mean():
    err = _error({"stowage": {"compaction": {"treshold": 0.5}}})
    assert len(err.problems) == 1
    assert "stowage.compaction.treshold" in err.problems[0]
    assert "unknown key" in err.problems[0]
    assert "did you mean 'threshold'" in err.problems[0]


def test_unknown_section_with_suggestion():
    err = _error({"stowage": {"compation": {"threshold": 0.5}}})
    assert "stowage.compation" in err.problems[0] and "unknown section" in err.problems[0]
    assert "did you mean 'compaction'" in err.problems[0]
    err = _error({"stowage": {"zzz": {}}})
    assert "did you mean" not in err.problems[0] and "known sections" in err.problems[0]


def test_section_and_block_must_be_mappings():
    assert "expected a mapping" in _error({"stowage": {"compaction": 3}}).problems[0]
    assert "expected a mapping" in _error({"stowage": ["compaction"]}).problems[0]


def test_several_problems_reported_together():
    err = _error(
        {
            "compression": {"protect_first_n": -1},
            "stowage": {
                "compaction": {"threshold": 2, "protect_lastn": 3},
                "tokenizer": {"allow_download": "no"},
                "bogus": {},
            },
        }
    )
    text = str(err)
    assert len(err.problems) == 5
    for fragment in (
        "compression.protect_first_n",
        "stowage.compaction.threshold",
        "protect_lastn",
        "stowage.tokenizer.allow_download",
        "stowage.bogus",
    ):
        assert fragment in text


def test_settings_are_read_only_and_deepcopy_shares():
    s = default_settings()
    with pytest.raises(AttributeError):
        _ = s.nosection
    with pytest.raises(AttributeError):
        _ = s.compaction.nokey
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.compaction.threshold = 0.1  # type: ignore[misc]
    with pytest.raises(AttributeError):
        s.compaction = None  # type: ignore[assignment]
    assert copy.deepcopy(s) is s


def test_list_and_map_values_are_frozen_so_no_default_can_be_shared_and_changed():
    a = default_settings()
    assert isinstance(a.spill.never_spill, tuple) and isinstance(a.tool_search.never_defer, tuple)
    with pytest.raises(TypeError):
        a.spill.per_tool["terminal"] = 1  # type: ignore[index]
    assert [k for k in KEYS if k.path == "spill.never_spill"][0].default == []


def test_every_schema_key_is_a_typed_field_of_its_section_and_nothing_else():
    import dataclasses
    import typing

    from stowage.context_engine.config.schema import BOOLEAN, CHOICE, INT_MAP, INTEGER, KEYS, NUMBER, STRING, STRINGS
    from stowage.context_engine.config.sections import SECTION_TYPES

    expected_type = {
        BOOLEAN: bool,
        INTEGER: int,
        NUMBER: float,
        STRING: str,
        CHOICE: str,
        STRINGS: tuple[str, ...],
        INT_MAP: typing.Mapping[str, int],
    }
    for section, cls in SECTION_TYPES.items():
        hints = typing.get_type_hints(cls)
        schema = {k.name: k for k in KEYS if k.section == section}
        assert {f.name for f in dataclasses.fields(cls)} == set(schema), section
        for name, key in schema.items():
            assert hints[name] == expected_type[key.kind], f"{section}.{name}"
    settings = load_settings({"stowage": {"spill": {"never_spill": ["read_file"], "per_tool": {"terminal": 9000}}}})
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.view.hot_tokens = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        settings.spill.per_tool["terminal"] = 1  # type: ignore[index]
    assert settings.spill.never_spill == ("read_file",)
    assert settings.as_dict()["spill"]["never_spill"] == ["read_file"]
