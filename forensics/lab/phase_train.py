"""The phase model's training (``decision_train`` collects the rows): P(phase | label) counted
over the training families (``phase_features.prior_keys``) and P(phase | words) (``phase_words``),
set on each row as at run time, and the pair model fitted on them.

A training row's prior and words come from the *other* families' rows (what a family never met
gets at run time: the model learns how far to trust them), a test row's from every training row;
a prior's key is kept only where two families carry it (``label_prior.count_table``), a word only
where ``phase_words.MIN_FAMILIES`` do."""
from __future__ import annotations

import dataclasses
from typing import Any

from forensics.diagnosis.decision.phase_features import prior_keys, prior_of
from forensics.diagnosis.decision.phase_words import MIN_FAMILIES, tokens
from forensics.diagnosis.taxonomy import PHASES

ALPHA = 1.0  # the words' Laplace smoothing


def phase_prior_table(rows: list[Any]) -> dict[str, dict[str, float]]:
    """P(phase | key) over ``rows`` (their recorded ``phase_inputs`` and phase truth)."""
    from forensics.diagnosis.decision.label_prior import count_table

    return count_table((tuple(prior_keys(r.phase_inputs).values()), r.phase_truth, r.group) for r in rows)


class WordCounts:
    """Token x phase counts of the rows, per group, so that a table without some groups is a
    subtraction (thousands of tables in a cross-validation; numpy)."""

    def __init__(self, rows: list[Any]) -> None:
        import numpy as np

        self.vocab: dict[str, int] = {}
        self.row_tokens: dict[int, Any] = {}
        per: dict[str, list[tuple[Any, int]]] = {}
        for r in rows:
            idx = np.array([self.vocab.setdefault(t, len(self.vocab)) for t in tokens(r.phase_inputs.words)], dtype=int)
            self.row_tokens[id(r.phase_inputs)] = idx
            per.setdefault(r.group, []).append((idx, PHASES.index(r.phase_truth)))
        v, k = len(self.vocab), len(PHASES)
        self.group_parts: dict[str, tuple[Any, Any, Any]] = {}
        self.counts, self.fams, self.docs = np.zeros((v, k)), np.zeros(v), np.zeros(k)
        for g, items in per.items():
            c = np.zeros((v, k))
            d = np.zeros(k)
            for idx, cls in items:
                c[idx, cls] += 1
                d[cls] += 1
            present = np.nonzero(c.sum(axis=1))[0]
            self.group_parts[g] = (present, c[present], d)
            self.counts[present] += c[present]
            self.fams[present] += 1
            self.docs += d

    def arrays(self, without: set[str] = frozenset()) -> tuple[Any, Any, Any]:
        """(log prior per phase, log-likelihood ratio per token x phase, kept tokens) without ``without``."""
        import numpy as np

        counts, fams, docs = self.counts.copy(), self.fams.copy(), self.docs.copy()
        for g in without:
            present, c, d = self.group_parts.get(g, (np.zeros(0, dtype=int), np.zeros((0, len(PHASES))), 0))
            counts[present] -= c
            fams[present] -= 1
            docs = docs - d
        kept = fams >= MIN_FAMILIES
        p = (counts + ALPHA) / (docs + 2 * ALPHA)
        like = np.log(p) - np.log1p(-p)
        prior = np.log((docs + ALPHA) / (docs.sum() + ALPHA * len(PHASES))) + np.log1p(-p[kept]).sum(axis=0)
        like[~kept] = 0.0
        return prior, like, kept

    def probs(self, arrays: tuple[Any, Any, Any], inp: Any) -> dict[str, float]:
        """``phase_words.proba`` of ``inp``'s words under ``arrays`` (a row of these counts, or any)."""
        import numpy as np

        prior, like, kept = arrays
        idx = self.row_tokens.get(id(inp))
        if idx is None:
            idx = np.array([self.vocab[t] for t in tokens(inp.words) if t in self.vocab], dtype=int)
        idx = idx[kept[idx]] if len(idx) else idx
        if not len(idx):
            return {}
        z = prior + like[idx].sum(axis=0)
        e = np.exp(z - z.max())
        return {c: float(v) for c, v in zip(PHASES, e / e.sum())}

    def table(self) -> dict[str, Any]:
        """The exported words table over every group (``phase_words.proba`` reads it)."""
        prior, like, kept = self.arrays()
        words = sorted(t for t, i in self.vocab.items() if kept[i])
        return {"classes": list(PHASES), "log_prior": [round(float(v), 4) for v in prior],
                "log_like": {t: [round(float(v), 4) for v in like[self.vocab[t]]] for t in words}}


def _with(r: Any, table: dict[str, dict[str, float]], words: dict[str, float]) -> Any:
    inp = r.phase_inputs
    return dataclasses.replace(r, phase_inputs=dataclasses.replace(inp, prior=prior_of(table, inp), word_probs=words))


def with_phase_priors(train: list[Any], *tests: list[Any]) -> tuple[list[Any], tuple[list[Any], ...]]:
    """Copies of the rows with their phase prior and words set (a training row's without its own
    family)."""
    counts = WordCounts(train)
    groups = sorted({r.group for r in train})
    tables = {g: (phase_prior_table([r for r in train if r.group != g]), counts.arrays({g})) for g in groups}
    full = (phase_prior_table(train), counts.arrays())
    own = [_with(r, tables[r.group][0], counts.probs(tables[r.group][1], r.phase_inputs)) for r in train]
    return own, tuple([_with(r, full[0], counts.probs(full[1], r.phase_inputs)) for r in t] for t in tests)


def words_table(rows: list[Any]) -> dict[str, Any]:
    """The words table the shipped model carries (every row's group)."""
    return WordCounts(rows).table()
