"""Rule tables kept as data: a YAML file next to the module that uses it."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any


def cache_dir() -> str | None:
    """The user's own cache directory for what forensics rebuilds from its
    sources (``$XDG_CACHE_HOME`` or ``~/.cache``, then ``forensics/``), or None
    when it cannot be made or others may write to it (what is read back from
    it must be what this user wrote)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "forensics")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.stat(folder)
    except OSError:
        return None
    getuid = getattr(os, "getuid", None)
    if st.st_mode & 0o022 or (getuid is not None and st.st_uid != getuid()):
        return None
    return folder


def load_table(module_file: str, name: str) -> Any:
    """The table ``name`` (a YAML file in the folder of ``module_file``);
    callers read it once, at import, and compile what they need then. The
    parse is kept as JSON in ``cache_dir()`` under the hash of the YAML text
    (importing PyYAML costs a process ~15 ms); a table JSON cannot hold
    exactly (dates, non-string keys) is parsed every time."""
    text = Path(module_file).with_name(name).read_text(encoding="utf-8")
    folder = cache_dir()
    path = None
    if folder is not None:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
        path = os.path.join(folder, f"table-{Path(name).stem}-{digest}.json")
        try:
            with open(path, encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            pass
    table = _parse_yaml(text)
    if path is not None:
        _store(path, table)
    return table


def _parse_yaml(text: str) -> Any:
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _store(path: str, table: Any) -> None:
    """Write ``table`` as JSON when it reads back equal (atomically: a reader
    never sees half a file); a failure only means no cache."""
    try:
        dumped = json.dumps(table, ensure_ascii=False)
        if json.loads(dumped) != table:
            return
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(dumped)
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        pass


def joined(value: str | list[str] | None) -> str | None:
    """A regex written in a table as a list is its pieces concatenated (a long
    alternation stays readable, one piece a line)."""
    return "".join(value) if isinstance(value, list) else value
