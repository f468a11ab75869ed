"""Compile the per-line core in place, or say which path runs.

    python -m forensics.compile build     # mypyc beside the sources (a checkout, an editable install)
    python -m forensics.compile clean     # remove what build wrote: pure Python again
    python -m forensics.compile [status]  # "per-line core: compiled" or "python (why)"

``forensics.native`` says what is compiled and when it runs.
"""
from __future__ import annotations

import sys

import forensics.native as native


def main(argv: list[str]) -> int:
    if argv[:1] == ["build"]:
        for p in native.build_in_place():
            print(p)
        return 0
    if argv[:1] == ["clean"]:
        for p in native.clean_in_place():
            print(f"removed {p}")
        return 0
    if argv and argv != ["status"]:
        print("usage: python -m forensics.compile [build|clean|status]", file=sys.stderr)
        return 2
    why = native.WHY_PURE
    print(f"per-line core: {native.core()}" + (f" ({why})" if why else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
