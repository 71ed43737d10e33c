"""The search space of a StudySpec as a tree of dimensions, shared by every search algorithm.

A dimension is one `ParameterSpec`; its conditional children hang under the parent values that
switch them on. `assign` walks the tree "define-by-run": it asks a chooser for each dimension's
value and then descends only into the children that value activates, so every algorithm gets
conditional parameters right in the same way. Scales follow Vertex (Vizier): a log scale is
uniform in log(value); a reverse-log scale is uniform in log(min + max - value), which spreads
the values near the top of the range.
"""

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from google.cloud.aiplatform_v1 import StudySpec

Value = float | int | str
Kind = Literal["DOUBLE", "INTEGER", "DISCRETE", "CATEGORICAL"]
Scale = Literal["LINEAR", "LOG", "REVERSE_LOG"]

DISCRETE_EPSILON = 1e-10
"""Vertex matches discrete values within this tolerance."""

_KINDS: dict[str, Kind] = {
    "double_value_spec": "DOUBLE",
    "integer_value_spec": "INTEGER",
    "discrete_value_spec": "DISCRETE",
    "categorical_value_spec": "CATEGORICAL",
}
_SCALES: dict[int, Scale] = {2: "LOG", 3: "REVERSE_LOG"}


@dataclass(frozen=True)
class Dimension:
    """One tunable parameter; `key` is unique in the tree even where ids repeat across branches."""

    parameter_id: str
    key: str
    kind: Kind
    scale: Scale = "LINEAR"
    low: float = 0.0
    high: float = 0.0
    values: tuple[Value, ...] = ()
    """The choices of a DISCRETE or CATEGORICAL dimension, in spec order."""
    children: tuple["Child", ...] = ()

    def matches(self, parent_values: Sequence[Value], value: Value) -> bool:
        """True when this dimension's `value` is one of a child's `parent_values`."""
        if self.kind == "DISCRETE":
            return any(abs(float(v) - float(value)) <= DISCRETE_EPSILON for v in parent_values)
        if self.kind == "INTEGER":
            return int(value) in {int(v) for v in parent_values}
        return value in parent_values

    def active_children(self, value: Value) -> list["Dimension"]:
        """The conditional dimensions that `value` switches on."""
        return [c.dimension for c in self.children if self.matches(c.parent_values, value)]


@dataclass(frozen=True)
class Child:
    """A conditional dimension and the parent values that activate it."""

    parent_values: tuple[Value, ...]
    dimension: Dimension


def dimensions(spec: StudySpec) -> tuple[Dimension, ...]:
    """The search space of `spec` as a tree of Dimensions."""
    return tuple(_dimension(p, p.parameter_id) for p in spec.parameters)


def _dimension(param: StudySpec.ParameterSpec, key: str) -> Dimension:
    kind = _KINDS[type(param).pb(param).WhichOneof("parameter_value_spec")]
    fields: dict = {"scale": _SCALES.get(int(param.scale_type), "LINEAR")}
    if kind == "DOUBLE":
        spec = param.double_value_spec
        fields.update(low=float(spec.min_value), high=float(spec.max_value))
    elif kind == "INTEGER":
        spec = param.integer_value_spec
        fields.update(low=int(spec.min_value), high=int(spec.max_value))
    elif kind == "DISCRETE":
        fields["values"] = tuple(float(v) for v in param.discrete_value_spec.values)
    else:
        fields["values"] = tuple(param.categorical_value_spec.values)
    children = []
    for index, conditional in enumerate(param.conditional_parameter_specs):
        condition = type(conditional).pb(conditional).WhichOneof("parent_value_condition")
        values = tuple(getattr(conditional, condition).values)
        child = conditional.parameter_spec
        children.append(Child(values, _dimension(child, f"{key}/{index}/{child.parameter_id}")))
    return Dimension(param.parameter_id, key, kind, children=tuple(children), **fields)


Chooser = Callable[[Dimension], Value]


def assign(dims: Sequence[Dimension], choose: Chooser) -> dict[str, Value]:
    """Parameter values for one trial: `choose` each active dimension, parents before children."""
    params: dict[str, Value] = {}
    for dim in dims:
        value = choose(dim)
        params[dim.parameter_id] = value
        params.update(assign(dim.active_children(value), choose))
    return params


def active_dimensions(dims: Sequence[Dimension], params: Mapping[str, Value]) -> list[Dimension]:
    """The dimensions a trial with `params` used (top-level ones, and children switched on)."""
    used: list[Dimension] = []
    for dim in dims:
        if dim.parameter_id in params:
            used.append(dim)
            used.extend(active_dimensions(dim.active_children(params[dim.parameter_id]), params))
    return used


def from_unit(dim: Dimension, u: float) -> float | int:
    """The DOUBLE or INTEGER value at position `u` in [0, 1] of the dimension's scaled range."""
    if dim.kind == "INTEGER":  # widen by half a step so every integer gets an equal share
        low, high = dim.low - 0.5, dim.high + 0.5
    else:
        low, high = dim.low, dim.high
    if dim.scale == "LOG":
        value = math.exp(math.log(low) + u * (math.log(high) - math.log(low)))
    elif dim.scale == "REVERSE_LOG":
        value = high + low - math.exp(math.log(low) + (1 - u) * (math.log(high) - math.log(low)))
    else:
        value = low + u * (high - low)
    if dim.kind == "INTEGER":
        return min(max(round(value), int(dim.low)), int(dim.high))
    return min(max(value, dim.low), dim.high)


def grid_values(dim: Dimension) -> Sequence[Value]:
    """Every value of a grid-searchable (INTEGER, DISCRETE, CATEGORICAL) dimension, in order."""
    if dim.kind == "INTEGER":
        return range(int(dim.low), int(dim.high) + 1)
    if dim.kind == "DOUBLE":
        raise ValueError(f"{dim.parameter_id}: GRID_SEARCH cannot enumerate a DOUBLE parameter")
    return dim.values


def grid(dims: Sequence[Dimension]) -> Iterator[dict[str, Value]]:
    """Every point of the grid, lazily, the first dimension varying slowest."""
    if not dims:
        yield {}
        return
    head, rest = dims[0], dims[1:]
    for value in grid_values(head):
        for below in grid(head.active_children(value)):
            for tail in grid(rest):
                yield {head.parameter_id: value, **below, **tail}


def point_key(params: Mapping[str, Value]) -> tuple:
    """A hashable identity of a parameter set, for "was this grid point tried?"."""
    return tuple(sorted((k, float(v) if not isinstance(v, str) else v) for k, v in params.items()))
