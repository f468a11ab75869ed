"""A short classify stays light: no pandas, sklearn, numpy or scipy imported."""
from __future__ import annotations

from conftest import CORPORA


SEEDS = CORPORA / "seeds"


def test_short_log_does_not_import_pandas_or_sklearn(tmp_path):
    import subprocess
    import sys

    from conftest import REPO
    log = tmp_path / "short.log"
    log.write_text("\n".join((SEEDS / "seed1.short.log").read_text().splitlines()[:50]) + "\n")
    code = ("import sys; from forensics.cli.main import main\n"
            "try:\n    main(['classify', %r])\nexcept SystemExit:\n    pass\n"
            "bad = [m for m in ('pandas', 'sklearn', 'numpy', 'scipy') if m in sys.modules]\n"
            "print('HEAVY', bad, file=sys.stderr)\n") % str(log)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=REPO, timeout=60)
    assert b"HEAVY []" in p.stderr, p.stderr.decode()[-500:]
