"""braintrace's online learning algorithms by name: the one table that ``--verify``, the probe, the
advice and the command line read.

Plain data, so the command line checks a name without importing braintrace.
The names are braintrace's registered ones (``braintrace.compile(model,
"d_rtrl", ...)``, braintrace's ``_ALGORITHM_REGISTRY`` in 0.2.6 and 0.2.8),
and ``snap``: ``braintrace.SnAp``, which braintrace does not register by name.
"""

from __future__ import annotations

# name -> its class in the braintrace namespace, in the order the advice's table shows them
CLASSES: dict[str, str] = {
    "d_rtrl": "D_RTRL",
    "pp_prop": "pp_prop",
    "eprop": "EProp",
    "ostl_recurrent": "OSTLRecurrent",
    "ostl_feedforward": "OSTLFeedforward",
    "snap": "SnAp",
    "uoro": "UORO",
    "dni": "DNI",
    "three_factor": "ThreeFactor",
}
# braintrace.compile's other names for them: ``es_d_rtrl`` and ``esd_rtrl`` select ``pp_prop`` (braintrace's
# ``ES_D_RTRL`` class is ``pp_prop`` itself, kept as a back-compatible alias), ``e_prop`` selects ``EProp``
ALIASES: dict[str, str] = {"es_d_rtrl": "pp_prop", "esd_rtrl": "pp_prop", "e_prop": "eprop"}
# the algorithms ``--verify`` and the probe build from their class, on the model as the layout left its
# states (``braintrace.compile`` initialises them again); any other name goes through ``braintrace.compile``
BUILT_FROM_CLASS = frozenset({"d_rtrl", "pp_prop", "eprop"})


def canonical(name: str) -> str:
    """The table's name for a registered name or alias (``"ES_D_RTRL"`` -> ``"pp_prop"``)."""
    lowered = name.strip().lower()
    return ALIASES.get(lowered, lowered)


def class_name(name: str) -> str | None:
    """The braintrace class a name or alias stands for, None for a name the table does not have."""
    return CLASSES.get(canonical(name))
