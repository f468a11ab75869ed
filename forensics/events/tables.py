"""Rule tables kept as data: a YAML file next to the module that uses it."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from forensics.cache import read_entry, write_entry


def load_table(module_file: str, name: str) -> Any:
    """The table ``name`` (a YAML file in the folder of ``module_file``);
    callers read it once, at import, and compile what they need then. The
    parse is kept as JSON in the cache (``forensics.cache``) under the hash of
    the YAML text (importing PyYAML costs a process ~15 ms); a table JSON
    cannot hold exactly (dates, non-string keys) is parsed every time."""
    text = Path(module_file).with_name(name).read_text(encoding="utf-8")
    kind, key = f"table-{Path(name).stem}", hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
    body = read_entry(kind, key)
    if body is not None:
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            pass
    table = _parse_yaml(text)
    _store(kind, key, table)
    return table


def _parse_yaml(text: str) -> Any:
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _store(kind: str, key: str, table: Any) -> None:
    """Keep ``table`` when its JSON reads back equal; a failure only means no cache."""
    try:
        dumped = json.dumps(table, ensure_ascii=False)
        if json.loads(dumped) != table:
            return
    except (TypeError, ValueError, RecursionError):
        return
    write_entry(kind, key, dumped.encode("utf-8"))


def joined(value: str | list[str] | None) -> str | None:
    """A regex written in a table as a list is its pieces concatenated (a long
    alternation stays readable, one piece a line)."""
    return "".join(value) if isinstance(value, list) else value
