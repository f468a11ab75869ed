"""Early warnings that generalise: link what a log said earlier to the failure
it predicted, by what both lines are *about*.

Four mechanisms, all over typed events (one module each; this package re-exports
what the rest of the tool uses):

* **subjects** -- what a line is about, normalised: Python packages and
  modules, native libraries, tools, environment variables, GPU architectures
  (every spelling), device indices and counts, model types, quantisation
  methods, attention/kernel backends, collectives and quantities with units;
* **retrospective linking** (``classify``) -- every non-fatal warning-ish line
  before the failure is a candidate, scored by the subjects it shares with the
  failure (weighted by how rare each is in healthy start-ups), by the topic of
  the failure's label and by how unusual it is against the healthy baseline;
* **resource arithmetic** -- lines with numbers predict failures even at INFO
  level (weights above the memory budget, a KV-cache budget that is negative or
  near zero, a GPU index at or beyond the GPUs there are);
* **prospective warnings** (``watch``) -- a pure decision per line: precursor
  signature, or unusual against the baseline *and* about a failure topic.

Precursor signatures stay the strongest prior; they are no longer the only way
in. The healthy baseline (``data/healthy_baseline.json``) is built by
``python -m forensics.lab.ew_baseline`` from the project's healthy corpora.
"""
from __future__ import annotations

from forensics.diagnosis.early_warnings.baseline import BASELINE_PATH, Baseline, baseline
from forensics.diagnosis.early_warnings.carry import Collector
from forensics.diagnosis.early_warnings.candidates import (
    Candidate, Notes, coarse_template, collect, is_noise, template, text_level)
from forensics.diagnosis.early_warnings.linking import lead_seconds, link, relink
from forensics.diagnosis.early_warnings.live import live_decision, live_early_warnings
from forensics.diagnosis.early_warnings.resources import arithmetic
from forensics.diagnosis.early_warnings.scoring import Failure, failure_context, score_candidate
from forensics.diagnosis.early_warnings.subjects import normalise_arch, quantities_gib, subject_value, subjects

__all__ = ["BASELINE_PATH", "Baseline", "Candidate", "Collector", "Failure", "Notes", "arithmetic", "baseline", "coarse_template",
           "collect", "failure_context", "is_noise", "lead_seconds", "link", "live_decision", "live_early_warnings", "normalise_arch",
           "quantities_gib", "relink", "score_candidate", "subject_value", "subjects", "template", "text_level"]
