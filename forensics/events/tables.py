"""Rule tables kept as data: a YAML file next to the module that uses it."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_table(module_file: str, name: str) -> Any:
    """The table ``name`` (a YAML file in the folder of ``module_file``);
    callers read it once, at import, and compile what they need then."""
    return yaml.load(Path(module_file).with_name(name).read_text(encoding="utf-8"), Loader=_LOADER)


def joined(value: str | list[str] | None) -> str | None:
    """A regex written in a table as a list is its pieces concatenated (a long
    alternation stays readable, one piece a line)."""
    return "".join(value) if isinstance(value, list) else value
