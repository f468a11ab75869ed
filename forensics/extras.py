"""Optional parts of the install. The core (classify, watch, parse, the
signatures, journal files, every compressor) needs only the packages of
``pip install forensics``; the rest comes with an extra:

=============  ==========================================  =========================
extra          brings                                      for
=============  ==========================================  =========================
``batch``      pandas, pyarrow, dask[distributed], tqdm    ``batch``, ``report``, ``read_events``
``train``      scikit-learn, skops                         ``train``, reading ``.skops`` models
``notebooks``  batch + jupyter kernel, nbclient, matplotlib  ``notebooks/``
``archives``   py7zr                                       reading ``.7z`` archives (tar, zip: core)
``html``       matplotlib                                  ``classify --format html``, ``report --html``
``test``       all of the above + pytest, hypothesis,      the test suite (the page tests drive
               jsonschema, playwright                      Debian's chromium)
=============  ==========================================  =========================

A command that needs a missing extra says which one, in one line (exit 2).
"""
from __future__ import annotations

import importlib.util

from forensics.errors import ForensicsError


class MissingExtra(ForensicsError):
    pass


def need(extra: str, *modules: str) -> None:
    """Raise a one-line ``MissingExtra`` naming the extra when a module is not installed."""
    for mod in modules:
        try:
            found = importlib.util.find_spec(mod) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise MissingExtra(f"this needs the {extra!r} extra ({mod} is not installed): "
                               f"pip install 'forensics[{extra}]'")
