"""``warm_up`` builds before ``watch`` says started what a diagnosis would
otherwise build in the middle of the first failure (issue 15's 0.5 s)."""
from __future__ import annotations

import re
import subprocess
import sys

from conftest import REPO


def test_warm_up_leaves_no_lazy_table_or_regex_for_the_first_failure():
    from forensics.diagnosis import warm

    assert warm.warm_up() > 50
    lazy = [(m.__name__, name) for m in warm._modules() for name, v in vars(m).items()
            if isinstance(v, warm.LAZY_REGEXES) and getattr(v, "_rx", getattr(v, "_rxs", getattr(v, "_match", 1))) is None]
    assert not lazy, lazy
    tables = [(m.__name__, name) for m in warm._modules() for name, v in vars(m).items()
              if warm._zero_arg_table(v) and v.cache_info().currsize == 0]
    assert not tables, tables


def test_a_failure_diagnosed_after_warm_up_compiles_no_rule_regex():
    """Only a catalogue template the log itself brings may still be compiled (they are keyed by the
    line): every pattern of the rules, tables and shapes is ready. Counted in a fresh process."""
    code = (
        "import re, re._compiler as c\n"
        "from forensics.diagnosis.warm import warm_up\n"
        "import forensics\n"
        "warm_up()\n"
        "seen = []\n"
        "orig = c.compile\n"
        "c.compile = lambda p, flags=0: (seen.append(p), orig(p, flags))[1]\n"
        "r = forensics.classify(open(%r, 'rb').read())\n"
        "assert r['verdict'] == 'failed', r['verdict']\n"
        "print(len(seen))\n"
        "print('\\n'.join(str(p)[:120] for p in seen))\n" % str(REPO / "corpora" / "seeds" / "seed1.short.log"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True).stdout
    n, *patterns = out.split("\n")
    # Left: pathlib's glob of the signature folders (classify loads its own signature set) and
    # the regex of a catalogue template the log brings, keyed by the line. (A cold process compiles ~300.)
    assert int(n) <= 5, patterns
