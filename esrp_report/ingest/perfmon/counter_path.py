r"""Perfmon counter paths: ``\\MACHINE\Object(Instance)\Counter``.

The counter is what follows the last backslash (counter names never hold one). The instance
may hold backslashes and parentheses (``LogicalDisk(C:\MP\DB\DB1)``,
``Network Interface(Intel(R) PRO_1000)``), so it is found by matching the object part's final
closing parenthesis back to its opening one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CounterPath:
    """A counter path split into machine (None when not written), object, instance (None when none) and
    counter."""

    machine: str | None
    object: str
    instance: str | None
    counter: str


def _split_instance(object_part: str) -> tuple[str, str | None]:
    if not object_part.endswith(")"):
        return object_part, None
    depth = 0
    for index in range(len(object_part) - 1, -1, -1):
        char = object_part[index]
        if char == ")":
            depth += 1
        elif char == "(":
            depth -= 1
            if depth == 0:
                obj = object_part[:index]
                if obj:
                    return obj, object_part[index + 1 : -1]
                break
    # Unbalanced parentheses inside the instance: the first "(" opens it.
    opening = object_part.find("(")
    if opening > 0:
        return object_part[:opening], object_part[opening + 1 : -1]
    return object_part, None


def parse_counter_path(text: str) -> CounterPath:
    """Split a counter path; raises ValueError saying what was expected."""
    path = text.strip()
    machine: str | None = None
    if path.startswith("\\\\"):
        rest = path[2:]
        slash = rest.find("\\")
        if slash <= 0:
            raise ValueError(
                f"counter path {text!r} names a machine but no object; expected \\\\MACHINE\\Object\\Counter"
            )
        machine, path = rest[:slash], rest[slash:]
    if not path.startswith("\\"):
        raise ValueError(
            f"counter path {text!r} does not start with a backslash; expected \\\\MACHINE\\Object\\Counter"
        )
    last = path.rfind("\\")
    counter = path[last + 1 :]
    object_part = path[1:last]
    if not counter or not object_part:
        raise ValueError(
            f"counter path {text!r} lacks an object or a counter; expected \\\\MACHINE\\Object\\Counter"
        )
    obj, instance = _split_instance(object_part)
    return CounterPath(machine, obj, instance, counter)


def format_counter_path(p: CounterPath) -> str:
    r"""The counter path as perfmon writes it: ``\\MACHINE\Object(Instance)\Counter``, the machine
    and instance parts only when present."""
    machine = f"\\\\{p.machine}" if p.machine is not None else ""
    instance = f"({p.instance})" if p.instance is not None else ""
    return f"{machine}\\{p.object}{instance}\\{p.counter}"
