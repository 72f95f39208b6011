"""The check both database layers (SQLite, PostgreSQL) run on a component's migrations
(internal)."""

from __future__ import annotations

__all__ = ["check_schema"]


def check_schema(name: object, migrations: object) -> None:
    """Raise ``ValueError`` unless ``name`` is a non-empty string and ``migrations`` a
    non-empty tuple of steps, each a non-empty tuple of SQL statements."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    if not isinstance(migrations, tuple) or not migrations:
        raise ValueError(f"schema {name!r}: migrations must be a non-empty tuple")
    for number, step in enumerate(migrations, start=1):
        if (
            not isinstance(step, tuple)
            or not step
            or not all(isinstance(s, str) and s.strip() for s in step)
        ):
            raise ValueError(
                f"schema {name!r}: migration {number} must be a non-empty tuple of SQL "
                f"statements, got {step!r}"
            )
