"""The program IR: storages, input tensor specs, statements and programs.

A :class:`Program` is a straight-line tensor program. Its inputs are strided views
(:class:`TensorSpec`) into input storages (:class:`StorageSpec`): an input may be a fresh
contiguous tensor, a transposed or sliced view of a larger buffer, or share its storage with
another input (aliased inputs). Its body is a tuple of :class:`Op` statements in SSA form:
each statement names the values it reads (``args``), its non-tensor parameters
(``params``) and the names it binds (``out``). In-place ops bind a fresh name to their
result, which aliases their mutated argument, so names never change meaning.

Everything here is plain data: frozen dataclasses with a JSON round trip carrying
:data:`SCHEMA_VERSION`. Loading JSON never runs code. Semantic validation (shapes,
dtypes, aliasing) lives in :mod:`aliasfuzz.fuzz.validate`; this module checks structure.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from aliasfuzz.errors import InvalidArgument

__all__ = [
    "DTYPES",
    "INITS",
    "MAX_STORAGE_BYTES",
    "SCHEMA_VERSION",
    "Op",
    "Program",
    "StorageSpec",
    "TensorSpec",
]

SCHEMA_VERSION = 1

#: dtype name -> element size in bytes (the names are ``torch.<name>``).
DTYPES: dict[str, int] = {
    "float32": 4,
    "float64": 8,
    "float16": 2,
    "bfloat16": 2,
    "int64": 8,
    "int32": 4,
    "int16": 2,
    "int8": 1,
    "uint8": 1,
    "bool": 1,
}

#: How an input storage is filled. Every fill is deterministic given the spec.
INITS = ("arange", "randn", "randint", "ones", "zeros", "values", "linspace")

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _check_name(what: str, name: object) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidArgument(f"{what} name {name!r} is not a Python identifier")
    return name


def _int_tuple(what: str, value: object) -> tuple[int, ...]:
    if not isinstance(value, list | tuple) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise InvalidArgument(f"{what} must be a list of integers, got {value!r}")
    return tuple(value)


#: The most bytes one input storage may hold (1 GiB): a program is run several times per
#: pipeline, eagerly and compiled, each run on fresh inputs; generated and shrunk programs
#: hold a few hundred bytes.
MAX_STORAGE_BYTES = 1 << 30


@dataclass(frozen=True)
class StorageSpec:
    """One input storage: ``numel`` elements of ``dtype``, filled deterministically.

    ``init`` is one of :data:`INITS`; ``init_args`` holds its parameters: ``arange`` takes
    optional ``start``/``step``; ``randn``/``randint`` take ``seed`` (and ``low``/``high``);
    ``values`` takes ``data`` (a flat list of exactly ``numel`` numbers); ``linspace`` takes
    ``start``/``end``. Units: elements of ``dtype``.

    Raises :class:`InvalidArgument` on a bad name, dtype, size or init.
    """

    name: str
    numel: int
    dtype: str = "float32"
    init: str = "arange"
    init_args: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_name("storage", self.name)
        if self.dtype not in DTYPES:
            raise InvalidArgument(f"storage {self.name}: unknown dtype {self.dtype!r}")
        if not isinstance(self.numel, int) or self.numel < 0:
            raise InvalidArgument(f"storage {self.name}: numel must be an int >= 0")
        if self.numel * DTYPES[self.dtype] > MAX_STORAGE_BYTES:
            # fresh user 47's B8: 10**11 elements passed the corpus check, and replay died
            # allocating them with a traceback
            raise InvalidArgument(
                f"storage {self.name}: {self.numel} elements of {self.dtype} are "
                f"{self.numel * DTYPES[self.dtype]} bytes, more than the {MAX_STORAGE_BYTES} "
                "a program's storage may hold")
        if self.init not in INITS:
            raise InvalidArgument(f"storage {self.name}: unknown init {self.init!r}")
        if self.init == "values":
            data = self.init_args.get("data")
            if not isinstance(data, list) or len(data) != self.numel:
                raise InvalidArgument(
                    f"storage {self.name}: init 'values' needs a 'data' list of {self.numel} numbers"
                )

    @property
    def nbytes(self) -> int:
        """Size of the storage in bytes."""
        return self.numel * DTYPES[self.dtype]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "numel": self.numel,
            "dtype": self.dtype,
            "init": self.init,
            "init_args": dict(self.init_args),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> StorageSpec:
        return cls(
            name=d["name"],
            numel=d["numel"],
            dtype=d.get("dtype", "float32"),
            init=d.get("init", "arange"),
            init_args=dict(d.get("init_args", {})),
        )


@dataclass(frozen=True)
class TensorSpec:
    """One program input: a strided view ``as_strided(storage, shape, stride, offset)``.

    ``stride`` and ``offset`` are in elements of the storage's dtype (an input never
    reinterprets its storage's dtype). Several inputs may name one storage: they alias,
    and may or may not overlap. ``requires_grad`` marks a float leaf input; ``optional``
    marks an ``Optional[Tensor]`` input (rendered with that annotation) and ``none`` makes
    this input ``None`` in a run.

    Raises :class:`InvalidArgument` on malformed fields; bounds against the storage are
    checked by :meth:`Program.validate`.
    """

    name: str
    storage: str
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int = 0
    requires_grad: bool = False
    optional: bool = False
    none: bool = False

    def __post_init__(self) -> None:
        _check_name("input", self.name)
        object.__setattr__(self, "shape", _int_tuple(f"input {self.name} shape", self.shape))
        object.__setattr__(self, "stride", _int_tuple(f"input {self.name} stride", self.stride))
        if len(self.shape) != len(self.stride):
            raise InvalidArgument(f"input {self.name}: shape and stride differ in length")
        if any(s < 0 for s in self.shape) or any(s < 0 for s in self.stride):
            raise InvalidArgument(f"input {self.name}: negative size or stride")
        if not isinstance(self.offset, int) or self.offset < 0:
            raise InvalidArgument(f"input {self.name}: offset must be an int >= 0")
        if self.none and not self.optional:
            raise InvalidArgument(f"input {self.name}: only an optional input may be None")

    @property
    def span(self) -> int:
        """One past the last storage element this view can touch (0 for an empty view)."""
        if any(s == 0 for s in self.shape):
            return self.offset
        return self.offset + sum((n - 1) * st for n, st in zip(self.shape, self.stride, strict=True)) + 1

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name,
            "storage": self.storage,
            "shape": list(self.shape),
            "stride": list(self.stride),
            "offset": self.offset,
        }
        for flag in ("requires_grad", "optional", "none"):
            if getattr(self, flag):
                d[flag] = True
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> TensorSpec:
        return cls(
            name=d["name"],
            storage=d["storage"],
            shape=tuple(d["shape"]),
            stride=tuple(d["stride"]),
            offset=d.get("offset", 0),
            requires_grad=d.get("requires_grad", False),
            optional=d.get("optional", False),
            none=d.get("none", False),
        )


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides (in elements) of a contiguous tensor of ``shape``, as torch gives."""
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


_JSON_SCALARS = (int, float, bool, str, type(None))


def _check_param(what: str, value: Any) -> None:
    if isinstance(value, _JSON_SCALARS):
        if isinstance(value, float) and not math.isfinite(value):
            raise InvalidArgument(f"{what}: non-finite float {value!r}")
        return
    if isinstance(value, list | tuple):
        for v in value:
            _check_param(what, v)
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise InvalidArgument(f"{what}: dict keys must be strings")
            _check_param(what, v)
        return
    raise InvalidArgument(f"{what}: parameter of type {type(value).__name__} is not JSON data")


def _freeze(value: Any) -> Any:
    """Lists become tuples so that ops are hashable and compare by value."""
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    if isinstance(value, dict):
        return {k: _thaw(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Op:
    """One statement: apply registry op ``op`` to values ``args`` with ``params``.

    ``args`` are names of earlier values (program inputs or statement results), in the
    op's positional order; variadic ops (``cat``, ``_foreach_add_``) take any number.
    ``params`` are the non-tensor arguments, JSON data only (lists are stored as tuples).
    ``out`` names the results: one for most ops, none for ops that return ``None``
    (setitem, custom ops that only mutate, kernel launches), several for ``split``/``unbind``.

    Raises :class:`InvalidArgument` on malformed fields; whether the op exists and accepts
    these arguments is checked by :func:`aliasfuzz.fuzz.validate.infer`.
    """

    op: str
    args: tuple[str, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    out: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.op, str) or not self.op:
            raise InvalidArgument(f"op name {self.op!r} is not a non-empty string")
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "out", tuple(self.out))
        for a in self.args:
            _check_name(f"{self.op} argument", a)
        for o in self.out:
            _check_name(f"{self.op} result", o)
        if not isinstance(self.params, dict):
            raise InvalidArgument(f"{self.op}: params must be a dict")
        _check_param(f"{self.op} params", self.params)
        object.__setattr__(self, "params", {k: _freeze(v) for k, v in self.params.items()})

    def __hash__(self) -> int:
        return hash((self.op, self.args, tuple(sorted(self.params.items())), self.out))

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "args": list(self.args),
            "params": _thaw(self.params),
            "out": list(self.out),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Op:
        return cls(
            op=d["op"],
            args=tuple(d.get("args", ())),
            params=dict(d.get("params", {})),
            out=tuple(d.get("out", ())),
        )


@dataclass(frozen=True)
class Program:
    """A straight-line tensor program: storages, inputs, statements and outputs.

    ``outputs`` names the returned values, in order (empty: the program returns ``None``);
    an output may be an input, a view of one, or a fresh tensor. ``meta`` is free-form JSON
    data (seed, origin, case name, expected verdicts) that never changes semantics.

    :meth:`validate` checks everything (structure, names, bounds, op signatures, shapes and
    dtypes) and raises :class:`InvalidArgument` with the first problem found.
    """

    storages: tuple[StorageSpec, ...]
    inputs: tuple[TensorSpec, ...]
    body: tuple[Op, ...]
    outputs: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        for attr in ("storages", "inputs", "body", "outputs"):
            object.__setattr__(self, attr, tuple(getattr(self, attr)))

    # -- structure -------------------------------------------------------------------
    def validate(self) -> None:
        """Check the program fully; raise :class:`InvalidArgument` on the first problem."""
        from aliasfuzz.fuzz.validate import infer

        infer(self)

    @property
    def storage_by_name(self) -> dict[str, StorageSpec]:
        return {s.name: s for s in self.storages}

    def with_body(self, body: tuple[Op, ...], outputs: tuple[str, ...] | None = None) -> Program:
        """A copy with another body (and outputs); used by shrinking and mutants."""
        return Program(
            self.storages,
            self.inputs,
            tuple(body),
            self.outputs if outputs is None else tuple(outputs),
            dict(self.meta),
        )

    # -- JSON ------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA_VERSION,
            "storages": [s.to_json() for s in self.storages],
            "inputs": [t.to_json() for t in self.inputs],
            "body": [op.to_json() for op in self.body],
            "outputs": list(self.outputs),
            "meta": self.meta,
        }

    def dumps(self) -> str:
        """The program as indented, key-sorted JSON text (stable across runs)."""
        return json.dumps(self.to_json(), indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, d: Any) -> Program:
        """Build a program from parsed JSON; raise :class:`InvalidArgument` if malformed."""
        if not isinstance(d, dict):
            raise InvalidArgument("program JSON must be an object")
        schema = d.get("schema")
        if schema != SCHEMA_VERSION:
            raise InvalidArgument(
                f"program schema {schema!r} is not supported (this aliasfuzz reads {SCHEMA_VERSION})"
            )
        try:
            return cls(
                storages=tuple(StorageSpec.from_json(s) for s in d["storages"]),
                inputs=tuple(TensorSpec.from_json(t) for t in d["inputs"]),
                body=tuple(Op.from_json(o) for o in d["body"]),
                outputs=tuple(d.get("outputs", ())),
                meta=dict(d.get("meta", {})),
            )
        except (KeyError, TypeError, AttributeError) as e:
            raise InvalidArgument(f"malformed program JSON: {type(e).__name__}: {e}") from None

    @classmethod
    def loads(cls, text: str) -> Program:
        """Parse JSON text (see :meth:`from_json`); bad JSON raises :class:`InvalidArgument`."""
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise InvalidArgument(f"program is not valid JSON: {e}") from None
        return cls.from_json(d)
