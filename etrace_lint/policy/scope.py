"""What the engine may leave out, decided here once from the settings and handed to it as data.

A run that hides notes need not build them: the engine counts them per rule instead (the
policy reports the count as hidden notes), which spares locating a note per connected
weight. An opt-in rule looks at the model only when its option is on.
"""

from __future__ import annotations

from ..config.settings import EngineScope, PolicySettings, Settings, Stages
from ..core.findings import Level
from ..core.registry import all_rules
from .decide import configured_level, opt_in_rules


def count_only_rules(settings: PolicySettings) -> frozenset[str]:
    """The rules whose findings nobody sees this run, as notes it hides: every rule whose level
    (its own, or the configured one) is a note, unless notes are shown (``--show-info``) or
    ``--verify`` runs (it may point at a note to say why a weight does not learn)."""
    if settings.show_info or settings.verify:
        return frozenset()
    return frozenset(rule_id for rule_id, rule in all_rules().items()
                     if (configured_level(rule_id, settings) or rule.level) is Level.NOTE)


def engine_scope(settings: PolicySettings, every_note: bool = False) -> EngineScope:
    """What the engine looks for and builds this run; ``every_note``: build every note whatever the
    settings say (the Python API returns findings, not a report that hides them)."""
    return EngineScope(opt_in_rules=opt_in_rules(settings),
                       count_only=frozenset() if every_note else count_only_rules(settings))


def stage_settings(settings: Settings, every_note: bool = False) -> Stages:
    """Each stage's settings for one run, with the engine's scope decided here, once."""
    return settings.stages(lambda policy: engine_scope(policy, every_note))
