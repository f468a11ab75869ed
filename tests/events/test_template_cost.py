"""What a catalogue lookup may cost (issue 27): every template's regex is
built so that it cannot backtrack over a line more than once per literal, the
regexes find what the regexes before the fix found, and the index hands a
bounded number of candidates to each line of a real log.

Before the fix torch_npu's ``{__func__}:{__FILE__}:{__LINE__}{ERROR}{error_msg}
{is}{time_msg}, error code is {error_code}{ACL}`` became ``:.*?:.*?.*?.*?.*?.*?,
\\s+error...``: six lazy wildcards in a row, O(n^6) on a line with colons and
no tail; one real 2 kB log took minutes to classify. No timing here (the
machine is shared): ``bench/catalogue_cost.py`` times the logs."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from forensics.events import catalogue as cat
from forensics.events.templates import split_template, template_regex

REPO = Path(__file__).resolve().parents[2]
NPU_PRINT = "{__func__}:{__FILE__}:{__LINE__}{ERROR}{error_msg}{is}{time_msg}, error code is {error_code}{ACL}"


def _legacy_regex():  # type: ignore[no-untyped-def]
    """The regex builder before the fix (kept in the bench that measures it): the oracle."""
    spec = importlib.util.spec_from_file_location("catalogue_cost", REPO / "bench" / "catalogue_cost.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod._old_template_regex


def _unguarded_wildcards(rx: str) -> int:
    """Lazy wildcards not opening an atomic group whose next token is a literal."""
    return rx.replace("(?>.*?", "").count(".*?") + rx.count("(?>.*?.*?") + rx.count("(?>.*?)")


def test_no_template_regex_can_backtrack_over_its_wildcards():
    idx = cat._index()
    assert idx.size > 80_000
    bad = []
    for i in range(idx.size):
        t = idx.template(i)
        if _unguarded_wildcards(template_regex(t)):
            bad.append(t)
    assert not bad, bad[:5]


def test_the_npu_error_print_is_one_wildcard_per_literal():
    rx = template_regex(NPU_PRINT)
    assert rx.count(".*?") == 2, rx  # ':' ':' ', error code is': three literals, two gaps
    line = ("[ERROR] 2025-03-01-10:00:01 (PID:1234, Device:0, RankID:-1) ERR00100 PTA call acl api failed "
            "EZ9999: Inner Error! npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:467 "
            "NPU function error: AclrtSynchronizeDeviceWithTimeout, error code is 507035")
    assert re.search(rx, line)
    # the same line without its tail, long and full of colons: no match (before the
    # fix, this search was the one that did not end)
    cut = line.rsplit(",", 1)[0] + " " + " a:b:c" * 40
    assert re.search(rx, cut) is None


def _project_lines() -> list[str]:
    lines: list[str] = []
    for d in ("cpu", "gpu"):
        for p in sorted((REPO / "corpora" / d).glob("*.log"))[:30]:
            lines += [ln[:400] for ln in p.read_text(errors="replace").splitlines()[-40:]]
    return lines


def test_regexes_find_what_the_regexes_before_the_fix_found():
    """On the project's corpora lines and on every 25th template filled and
    re-spaced, each candidate the index hands over matches with the new regex
    exactly when it matched with the old one (old regexes with more than three
    wildcards are left out: they are the ones that could not end)."""
    legacy = _legacy_regex()
    idx = cat._index()
    lines = _project_lines()
    for i in range(0, idx.size, 25):
        first = idx.template(i).split("\n", 1)[0]
        filled = "".join(lit + ("x1 : y" if ph is not None else "") for lit, ph in split_template(first))
        lines += [filled[:400], re.sub(" ", "   ", filled)[:400]]
    compared = matched = 0
    for ln in lines:
        cands, _keys = idx.candidates(ln)
        for i in cands:
            t = idx.template(i)
            old = legacy(t)
            if old.count(".*?") > 3:
                continue
            want = re.search(old, ln) is not None
            assert (re.search(template_regex(t), ln) is not None) == want, (t, ln)
            compared += 1
            matched += want
    assert compared > 10_000 and matched > 1_000, (compared, matched)


def test_candidates_per_line_stay_bounded_on_a_real_log():
    """The index hands each line only the entries sharing its rarest words: on a
    real log's lines the most any one line gets stays small next to the
    catalogue's size (measured: 73 of 83,000 on the visible real logs)."""
    idx = cat._index()
    most = 0
    for p in sorted((REPO / "examples").glob("*.log")):
        for ln in p.read_text(errors="replace").splitlines():
            most = max(most, len(idx.candidates(ln)[0]))
    assert 0 < most <= 400, most
