"""The ``--json FILE`` of the lab's figure commands (``crossval``, ``rules_holdout``): a path
refused before minutes of work, a failed write said in one line (exit 2), never a traceback."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from forensics.atomic import atomic_write_text


def json_target_refused(path: Path | None) -> bool:
    """A ``--json`` path whose folder does not exist, said in one line before any work."""
    if path is not None and not path.parent.is_dir():
        print(f"forensics: --json {path}: no such directory {str(path.parent)!r}", file=sys.stderr)
        return True
    return False


def write_json(path: Path, figures: Any) -> int:
    """The figures as JSON at ``path``: the exit status (2, in one line, when it cannot be written)."""
    try:
        atomic_write_text(path, json.dumps(figures, indent=1, default=str) + "\n")
    except OSError as e:
        print(f"forensics: cannot write {path}: {e.strerror or e}", file=sys.stderr)
        return 2
    return 0
