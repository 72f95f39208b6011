"""The restricted JSON Schema of a form elicitation: reading it into fields, applying its
defaults (SEP-1034) and checking an answer against it.

A form is a flat object whose properties are strings (``minLength``, ``maxLength``, ``format``
email / uri / date / date-time), numbers or integers (``minimum``, ``maximum``), booleans,
single-choice enums (``enum``, titled ``oneOf``, legacy ``enumNames``) and multi-choice arrays
(``items`` with ``enum`` or titled ``anyOf``; ``minItems``, ``maxItems``).

Problems never quote the value that was given, only its type or size: an answer may be private
and these messages reach logs and the server.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal
from urllib.parse import urlsplit

__all__ = [
    "FieldKind",
    "FormError",
    "FormField",
    "SchemaError",
    "check_value",
    "complete_content",
    "parse_form",
]

FieldKind = Literal["string", "number", "integer", "boolean", "choice", "choices"]
"""What a field holds: ``choice`` is a single-select enum, ``choices`` a multi-select array."""

_FORMATS = frozenset({"email", "uri", "date", "date-time"})
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# RFC 3339: a time zone is part of a date-time (Z or an offset).
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


class SchemaError(ValueError):
    """The server's ``requested_schema`` is not a restricted elicitation schema."""

    def __init__(self, problem: str, field: str | None = None) -> None:
        self.problem = problem
        self.field = field
        where = f"property {field!r} of requested_schema" if field else "requested_schema"
        super().__init__(f"{where}: {problem}")


class FormError(ValueError):
    """An answer does not fit the form; ``field`` names the field at fault, if one is."""

    def __init__(self, problem: str, field: str | None = None) -> None:
        self.problem = problem
        self.field = field
        super().__init__(f"field {field!r}: {problem}" if field else problem)


@dataclass(frozen=True, kw_only=True)
class FormField:
    """One property of a form, as a UI shows it and the checker enforces it."""

    name: str
    kind: FieldKind
    required: bool = False
    title: str | None = None
    description: str | None = None
    has_default: bool = False
    default: Any = None
    choices: tuple[tuple[str, str], ...] = ()
    """(value, label) pairs of a ``choice`` or ``choices`` field."""
    format: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_items: int | None = None
    max_items: int | None = None

    @property
    def label(self) -> str:
        """The title, or the name when there is none."""
        return self.title or self.name


def _options(items: Any, key: str, name: str) -> tuple[tuple[str, str], ...]:
    """(value, label) pairs of a titled ``oneOf`` / ``anyOf`` list."""
    if not isinstance(items, list) or not items:
        raise SchemaError(f"{key} must be a non-empty list of {{const, title}} options", name)
    found: list[tuple[str, str]] = []
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("const"), str):
            raise SchemaError(f"every {key} option needs a string const", name)
        title = item.get("title")
        found.append((item["const"], title if isinstance(title, str) else item["const"]))
    return tuple(found)


def _enum(values: Any, labels: Any, name: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise SchemaError("enum must be a non-empty list of strings", name)
    if isinstance(labels, list) and len(labels) == len(values):
        return tuple((v, str(t)) for v, t in zip(values, labels, strict=True))
    return tuple((v, v) for v in values)


def _bound(prop: Mapping[str, Any], key: str, name: str, *, whole: bool) -> Any:
    value = prop.get(key)
    if value is None:
        return None
    ok = isinstance(value, int) if whole else isinstance(value, int | float)
    if isinstance(value, bool) or not ok:
        raise SchemaError(f"{key} must be {'an integer' if whole else 'a number'}", name)
    return value


def _field(name: str, prop: Any, required: bool) -> FormField:
    if not isinstance(prop, Mapping):
        raise SchemaError("must be an object", name)
    kind_of = prop.get("type")
    common: dict[str, Any] = {
        "name": name,
        "required": required,
        "title": prop.get("title") if isinstance(prop.get("title"), str) else None,
        "description": prop.get("description")
        if isinstance(prop.get("description"), str)
        else None,
        "has_default": "default" in prop,
        "default": prop.get("default"),
    }
    if kind_of == "string" and ("enum" in prop or "oneOf" in prop):
        choices = (
            _options(prop["oneOf"], "oneOf", name)
            if "oneOf" in prop
            else _enum(prop["enum"], prop.get("enumNames"), name)
        )
        return FormField(kind="choice", choices=choices, **common)
    if kind_of == "string":
        fmt = prop.get("format")
        if fmt is not None and fmt not in _FORMATS:
            raise SchemaError(f"format must be one of {', '.join(sorted(_FORMATS))}", name)
        return FormField(
            kind="string",
            format=fmt,
            min_length=_bound(prop, "minLength", name, whole=True),
            max_length=_bound(prop, "maxLength", name, whole=True),
            **common,
        )
    if kind_of in ("number", "integer"):
        return FormField(
            kind=kind_of,
            minimum=_bound(prop, "minimum", name, whole=False),
            maximum=_bound(prop, "maximum", name, whole=False),
            **common,
        )
    if kind_of == "boolean":
        return FormField(kind="boolean", **common)
    if kind_of == "array":
        items = prop.get("items")
        if not isinstance(items, Mapping) or not ("enum" in items or "anyOf" in items):
            raise SchemaError("an array must have items with enum or anyOf (a multi-select)", name)
        choices = (
            _options(items["anyOf"], "anyOf", name)
            if "anyOf" in items
            else _enum(items["enum"], None, name)
        )
        return FormField(
            kind="choices",
            choices=choices,
            min_items=_bound(prop, "minItems", name, whole=True),
            max_items=_bound(prop, "maxItems", name, whole=True),
            **common,
        )
    raise SchemaError(
        "type must be string, number, integer, boolean or array (a flat form has no nesting)",
        name,
    )


def parse_form(schema: Any) -> list[FormField]:
    """The fields of a form elicitation's ``requested_schema``, in the server's order.

    Raises:
        SchemaError: the schema is not a flat object of primitive properties.
    """
    if not isinstance(schema, Mapping):
        raise SchemaError("must be an object")
    if schema.get("type", "object") != "object":
        raise SchemaError("type must be 'object'")
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        raise SchemaError("properties must be an object")
    required = schema.get("required") or []
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise SchemaError("required must be a list of property names")
    unknown = [r for r in required if r not in properties]
    if unknown:
        raise SchemaError(f"required names {unknown[0]!r}, which is not a property")
    return [_field(str(name), prop, name in required) for name, prop in properties.items()]


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return f"a {type(value).__name__} (not JSON)"


def _check_format(fmt: str, value: str) -> str | None:
    """The problem with ``value`` for ``format``, or None."""
    if fmt == "email" and not _EMAIL.fullmatch(value):
        return "must be an email address (name@domain)"
    if fmt == "uri":
        scheme, sep, rest = value.partition(":")
        if not sep or not _SCHEME.fullmatch(scheme) or not rest or " " in value:
            return "must be an absolute URI with a scheme (e.g. https://example.com)"
        if scheme.lower() in ("http", "https") and not urlsplit(value).hostname:
            return "must be an absolute URI with a host (e.g. https://example.com)"
    if fmt == "date":
        try:
            ok = bool(_DATE.fullmatch(value)) and bool(date.fromisoformat(value))
        except ValueError:
            ok = False
        if not ok:
            return "must be a date as YYYY-MM-DD"
    if fmt == "date-time":
        try:
            ok = bool(_DATE_TIME.fullmatch(value)) and bool(
                datetime.fromisoformat(value.replace("z", "Z"))
            )
        except ValueError:
            ok = False
        if not ok:
            return "must be a date-time with a time zone, e.g. 2025-01-31T09:30:00Z"
    return None


def _check_string(f: FormField, value: Any) -> str:
    if not isinstance(value, str):
        raise FormError(f"expected a string, got {_type_name(value)}", f.name)
    if f.min_length is not None and len(value) < f.min_length:
        raise FormError(f"must be at least {f.min_length} characters (got {len(value)})", f.name)
    if f.max_length is not None and len(value) > f.max_length:
        raise FormError(f"must be at most {f.max_length} characters (got {len(value)})", f.name)
    problem = _check_format(f.format, value) if f.format else None
    if problem:
        raise FormError(problem, f.name)
    return value


def _check_number(f: FormField, value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        want = "an integer" if f.kind == "integer" else "a number"
        raise FormError(f"expected {want}, got {_type_name(value)}", f.name)
    number: int | float = value
    if isinstance(number, float) and not math.isfinite(number):
        raise FormError("must be a finite number (JSON has no NaN or infinity)", f.name)
    if f.kind == "integer":
        if isinstance(number, float) and not number.is_integer():
            raise FormError("expected an integer, got a fraction", f.name)
        number = int(number)
    if f.minimum is not None and number < f.minimum:
        raise FormError(f"must be at least {f.minimum}", f.name)
    if f.maximum is not None and number > f.maximum:
        raise FormError(f"must be at most {f.maximum}", f.name)
    return number


def _choice_list(f: FormField) -> str:
    return ", ".join(repr(v) for v, _ in f.choices)


def _check_choices(f: FormField, value: Any) -> list[str]:
    if not isinstance(value, list | tuple):
        raise FormError(f"expected a list of choices, got {_type_name(value)}", f.name)
    allowed = {v for v, _ in f.choices}
    picked: list[str] = []
    for item in value:
        if not isinstance(item, str) or item not in allowed:
            raise FormError(f"every choice must be one of {_choice_list(f)}", f.name)
        if item in picked:
            raise FormError("a choice is picked twice", f.name)
        picked.append(item)
    if f.min_items is not None and len(picked) < f.min_items:
        raise FormError(f"pick at least {f.min_items} (got {len(picked)})", f.name)
    if f.max_items is not None and len(picked) > f.max_items:
        raise FormError(f"pick at most {f.max_items} (got {len(picked)})", f.name)
    return picked


def check_value(f: FormField, value: Any) -> str | int | float | bool | list[str]:
    """``value`` checked against ``f``: an integral float for an integer field becomes an int,
    a tuple for a multi-select becomes a list.

    Raises:
        FormError: the value does not fit, naming the field and the problem.
    """
    if f.kind == "string":
        return _check_string(f, value)
    if f.kind in ("number", "integer"):
        return _check_number(f, value)
    if f.kind == "boolean":
        if not isinstance(value, bool):
            raise FormError(f"expected true or false, got {_type_name(value)}", f.name)
        return value
    if f.kind == "choice":
        if not isinstance(value, str) or value not in {v for v, _ in f.choices}:
            raise FormError(f"must be one of {_choice_list(f)}", f.name)
        return value
    return _check_choices(f, value)


def complete_content(
    fields: list[FormField], content: Any
) -> dict[str, str | int | float | bool | list[str] | None]:
    """An accepted form's content with the schema's defaults filled in (SEP-1034), checked.

    A field given as ``None`` counts as left out. ``None`` content counts as ``{}``.

    Raises:
        FormError: content is not an object, names a field the form does not have, leaves a
            required field without a value, or holds a value that does not fit.
    """
    if content is None:
        content = {}
    if not isinstance(content, Mapping):
        raise FormError(
            f"content must be an object of field name to value, got {_type_name(content)}"
        )
    known = {f.name for f in fields}
    for name in content:
        if not isinstance(name, str) or name not in known:
            asked = ", ".join(repr(n) for n in known) or "no fields"
            raise FormError(f"unknown field {str(name)!r} (the form asks for {asked})")
    done: dict[str, str | int | float | bool | list[str] | None] = {}
    for f in fields:
        value = content.get(f.name)
        if value is None and f.has_default and f.default is not None:
            value = f.default
        if value is None:
            if f.required:
                raise FormError("a value is required", f.name)
            continue
        done[f.name] = check_value(f, value)
    return done
