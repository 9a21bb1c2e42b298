"""What a fitted model stores, as the model declares it for :mod:`mixbayes.persist`.

A model class answers ``_persist_schema(scalars)`` (``scalars``: the stored scalar attributes)
with a :class:`Schema`: its fitted arrays with their shapes in symbols and a rule on their
values, its scalars with their rules, the sizes of its own symbols, the dtypes of its
structured arrays, and a probe that predicts one sample. :mod:`mixbayes.persist` checks a file
against it and never names a model class.

Shapes use ``K`` components, ``p`` features, ``n`` training samples, ``G`` groups, ``"*"`` any
length, and any symbol ``sizes`` defines; rules are ``"+"`` positive, ``">=0"``, ``"label"`` (an
integer in [0, K)), ``"f"`` any finite number, ``"real"`` any number (traces may hold -inf),
``"int"``, ``"feature"`` (a column index), ``"node"``/``"parent"``/``"state"`` (nodes of a
tree), ``"margin"``, ``"linkage"`` (scipy's format), or a key of ``dtypes`` (a structured array
of that dtype). An array entry ``(shape, rule, "optional")`` may be missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional


@dataclass(frozen=True)
class Schema:
    arrays: dict  # name -> (shape, rule) or (shape, rule, "optional")
    scalars: dict  # name -> rule: "count", "int", "+", "real", "bool", "none", "strings", "figures",
    # "prior" (a Gamma prior's (shape, rate) or None; loaded as a tuple)
    sizes: Callable[[dict, dict], dict] = lambda scalars, arrays: {}  # its own symbols' sizes
    dtypes: dict = field(default_factory=dict)  # rule -> function returning a numpy dtype
    array_or_none: tuple = ()  # stored as an array, or as None when too large: required
    positive_definite: tuple = ()  # arrays of symmetric positive-definite matrices
    check_params: Optional[Callable[[], None]] = None  # checks beyond the parameter rules
    probe: Optional[Callable[[], object]] = None  # probabilities of one sample, or None
