"""Write the exploration notebooks (outputs stripped): ``python notebooks/build_notebooks.py``.

The notebooks are generated so that their source stays reviewable as Python
here, and so the repository never carries outputs. CI executes them
(``tests/lab/test_notebooks.py``) from the repository root.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

# Shared by both notebooks: find the labelled collections, subsample, run the batch.
SETUP = '''\
import json
import os
import re
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import forensics
from forensics.lab.evaluate import read_labels
from forensics.report.frames import rows_frame
from forensics.report.summary import render_summary

# Run from the repository root (CI) or from notebooks/.
ROOT = Path.cwd() if (Path.cwd() / "corpora").is_dir() else Path.cwd().parent
CORPORA = ROOT / "corpora"
# At most this many logs per collection (stratified by label); 0 = all of them.
MAX_PER_COLLECTION = int(os.environ.get("FORENSICS_NB_MAX", "100"))
SEED = 0
pd.set_option("display.max_colwidth", 110)
pd.set_option("display.width", 200)


def hbox(ax, data, labels):
    """Horizontal box plot on any matplotlib (``vert`` became ``orientation`` in 3.10)."""
    import matplotlib
    new = tuple(int(x) for x in matplotlib.__version__.split(".")[:2]) >= (3, 10)
    ax.boxplot(data, **({"orientation": "horizontal"} if new else {"vert": False}))
    ax.set_yticks(range(1, len(labels) + 1), labels)'''

LOAD_LABELS = '''\
def load_labels(corpora: Path, max_per_collection: int, seed: int = 0) -> pd.DataFrame:
    """Every collection under corpora/ with a labels.csv (whichever exist now),
    one row per labelled log that is present, subsampled per collection."""
    frames = []
    for d in sorted(p for p in corpora.iterdir() if (p / "labels.csv").is_file()):
        try:
            rows = read_labels(d)
        except Exception as e:  # a collection may be half-written while it is generated
            print(f"skipping {d.name}: {e}")
            continue
        if rows:
            df = pd.DataFrame(rows).rename(columns={"_path": "path"})
            df["collection"] = d.name
            frames.append(df)
    cols = ["id", "collection", "path", "label", "root_cause", "phase", "verdict", "early_warning_substring"]
    if not frames:
        return pd.DataFrame(columns=cols)
    labels = pd.concat(frames, ignore_index=True)
    for c in cols:
        if c not in labels:
            labels[c] = None
    labels["root_cause"] = labels["root_cause"].fillna("").astype(str)
    labels["label"] = labels["root_cause"].replace("", "none")  # "none": a log without failure
    if max_per_collection:
        # Round-robin over labels so that a small sample still covers every label.
        shuffled = labels.sample(frac=1.0, random_state=seed)
        shuffled["_rank"] = shuffled.groupby(["collection", "label"]).cumcount()
        shuffled = shuffled.sort_values(["collection", "_rank"], kind="stable")
        labels = shuffled.groupby("collection").head(max_per_collection).drop(columns="_rank")
    return labels[cols].sort_values("path").reset_index(drop=True)


labels = load_labels(CORPORA, MAX_PER_COLLECTION, SEED)
print(f"{len(labels)} labelled logs from", dict(labels.groupby("collection").size()))
labels.groupby(["collection", "label"]).size().unstack(0, fill_value=0)'''

RUN_BATCH = '''\
t0 = time.monotonic()
table = forensics.batch(labels["path"].tolist()) if len(labels) else rows_frame([])
print(f"diagnosed {len(labels)} logs in {time.monotonic() - t0:.1f} s")
table["file"] = table["source"].map(lambda s: os.path.relpath(s, ROOT))
print(render_summary(table, top=5))'''

PER_FILE = '''\
# One answer per log: the incident `forensics classify` reports at top level
# (the last failed one, else the last one); `main` marks it in the batch table.
main = table[table["main"].fillna(False)].set_index("source")
pred_cols = main[["verdict", "root_cause", "phase", "confidence", "decided_by", "signature",
                  "time_to_failure_s", "first_lead_s"]].rename(
    columns={"verdict": "verdict_pred", "root_cause": "root_cause_pred", "phase": "phase_pred"})
files = labels.set_index("path").join(pred_cols)
files["pred"] = files["root_cause_pred"].astype("string").where(files["verdict_pred"] == "failed").fillna("none")
files[["collection", "label", "pred", "confidence", "decided_by", "signature"]].head()'''


def tour() -> nbformat.NotebookNode:
    cells = [
        new_markdown_cell(
            "# A tour of the failure corpus\n\n"
            "Every labelled collection under `corpora/` (`labels.csv` beside the logs: generated, CPU-reproduced, "
            "GPU, seeds; whichever exist) is diagnosed with `forensics.batch`, one row per incident. We look at "
            "which root causes strike in which phase of start-up, how long a server runs before it dies, how the "
            "diagnosis compares with the labels, and the evidence lines it quotes.\n\n"
            "Large collections are subsampled (`FORENSICS_NB_MAX` logs per collection, stratified by label; "
            "set it to `0` for all) so the notebook runs in seconds."),
        new_code_cell(SETUP),
        new_markdown_cell("## The labelled logs"),
        new_code_cell(LOAD_LABELS),
        new_markdown_cell("## Diagnose them all: `forensics.batch`\n\n"
                          "The table has one row per incident (process lifetime); its columns and dtypes are "
                          "`forensics.report.frames.INCIDENT_COLUMNS`."),
        new_code_cell(RUN_BATCH),
        new_code_cell("table.dtypes"),
        new_code_cell(PER_FILE),
        new_code_cell(
            "# The batch table says what `forensics.classify` says (it runs the same diagnosis: signatures,\n"
            "# then the classifier when a model ships). Check it on a few logs.\n"
            "for path in labels[\"path\"].head(3):\n"
            "    res = forensics.classify(path)\n"
            "    assert res[\"root_cause\"] == (None if pd.isna(files.at[path, \"root_cause_pred\"]) "
            "else files.at[path, \"root_cause_pred\"]), path\n"
            "    print(os.path.relpath(path, ROOT), \"->\", res[\"verdict\"], res[\"root_cause\"], res[\"decided_by\"])"),
        new_markdown_cell("## Root causes by phase\n\nAll failed incidents, by diagnosed root cause and the phase "
                          "in which the server died."),
        new_code_cell(
            "failed = table[table[\"verdict\"] == \"failed\"].copy()\n"
            "by_phase = pd.crosstab(failed[\"root_cause\"].astype(\"string\").fillna(\"(none)\"),\n"
            "                       failed[\"phase\"].astype(\"string\").fillna(\"(unknown)\"))\n"
            "phase_order = [p for p in table[\"phase\"].cat.categories if p in by_phase.columns]\n"
            "by_phase = by_phase[phase_order + [c for c in by_phase.columns if c not in phase_order]]\n"
            "by_phase = by_phase.loc[by_phase.sum(axis=1).sort_values().index]\n"
            "if len(by_phase):\n"
            "    ax = by_phase.plot.barh(stacked=True, figsize=(10, 0.35 * len(by_phase) + 1.5), colormap=\"viridis\")\n"
            "    ax.set_xlabel(\"failed incidents\")\n"
            "    ax.set_ylabel(\"\")\n"
            "    ax.legend(title=\"phase\", bbox_to_anchor=(1.01, 1), loc=\"upper left\")\n"
            "    plt.tight_layout()\n"
            "    plt.show()\n"
            "by_phase"),
        new_code_cell(
            "# Does the diagnosed phase agree with the labelled one?\n"
            "has_phase = files[(files[\"label\"] != \"none\") & files[\"phase\"].fillna(\"\").ne(\"\")]\n"
            "if len(has_phase):\n"
            "    agree = (has_phase[\"phase\"] == has_phase[\"phase_pred\"].astype(\"string\")).fillna(False)\n"
            "    print(f\"phase agrees with the label on {agree.mean():.0%} of {len(has_phase)} failed logs\")\n"
            "    print(agree.groupby(has_phase[\"collection\"]).mean().round(3).to_string())"),
        new_markdown_cell("## Time to failure\n\nSeconds from the start of the process lifetime to the failure line "
                          "(only where the log has timestamps)."),
        new_code_cell(
            "ttf = failed.dropna(subset=[\"time_to_failure_s\"])\n"
            "ttf = ttf[ttf[\"time_to_failure_s\"] >= 0]\n"
            "if len(ttf):\n"
            "    groups = ttf.groupby(ttf[\"root_cause\"].astype(\"string\"))[\"time_to_failure_s\"]\n"
            "    order = groups.median().sort_values().index\n"
            "    fig, ax = plt.subplots(figsize=(10, 0.35 * len(order) + 1.5))\n"
            "    hbox(ax, [groups.get_group(k).clip(lower=0.1) for k in order], order)\n"
            "    ax.set_xscale(\"log\")\n"
            "    ax.set_xlabel(\"time to failure (s, log scale)\")\n"
            "    plt.tight_layout()\n"
            "    plt.show()\n"
            "    display(groups.describe()[[\"count\", \"min\", \"50%\", \"max\"]].sort_values(\"50%\"))\n"
            "else:\n"
            "    print(\"no timestamped failures in this sample\")"),
        new_markdown_cell("## Predicted vs labelled root cause\n\nRows: the label; columns: what `forensics` says "
                          "(`none`: no failure diagnosed). The diagonal is right."),
        new_code_cell(
            "cm = pd.crosstab(files[\"label\"], files[\"pred\"])\n"
            "names = sorted(set(cm.index) | set(cm.columns))\n"
            "cm = cm.reindex(index=names, columns=names, fill_value=0)\n"
            "if len(cm):\n"
            "    fig, ax = plt.subplots(figsize=(0.55 * len(names) + 3, 0.5 * len(names) + 2))\n"
            "    ax.imshow(np.log1p(cm.values), cmap=\"Blues\")\n"
            "    ax.set_xticks(range(len(names)), names, rotation=60, ha=\"right\")\n"
            "    ax.set_yticks(range(len(names)), names)\n"
            "    ax.set_xlabel(\"predicted\")\n"
            "    ax.set_ylabel(\"labelled\")\n"
            "    for i in range(len(names)):\n"
            "        for j in range(len(names)):\n"
            "            if cm.values[i, j]:\n"
            "                ax.text(j, i, int(cm.values[i, j]), ha=\"center\", va=\"center\", fontsize=8,\n"
            "                        color=\"white\" if i == j else \"black\")\n"
            "    plt.tight_layout()\n"
            "    plt.show()\n"
            "    correct = files[\"label\"] == files[\"pred\"]\n"
            "    print(f\"accuracy {correct.mean():.1%} over {len(files)} logs\")\n"
            "    display(correct.groupby(files[\"collection\"]).agg([\"mean\", \"size\"]).rename(\n"
            "        columns={\"mean\": \"accuracy\", \"size\": \"logs\"}).round(3))"),
        new_code_cell(
            "# The commonest confusions, with an example each.\n"
            "misses = files[files[\"label\"] != files[\"pred\"]].reset_index()\n"
            "misses[\"file\"] = misses[\"path\"].map(lambda s: os.path.relpath(s, ROOT))\n"
            "(misses.groupby([\"label\", \"pred\"]).agg(n=(\"file\", \"size\"), example=(\"file\", \"first\"))\n"
            "       .sort_values(\"n\", ascending=False).head(15))"),
        new_markdown_cell("## Evidence\n\nThe line each diagnosis quotes as the cause, one example per root cause."),
        new_code_cell(
            "examples = (failed.dropna(subset=[\"evidence_text\"])\n"
            "                  .sort_values([\"root_cause\", \"confidence\"], ascending=[True, False])\n"
            "                  .groupby(\"root_cause\", observed=True).head(1))\n"
            "examples[[\"root_cause\", \"file\", \"evidence_line\", \"evidence_text\", \"signature\", \"confidence\",\n"
            "          \"decided_by\"]].reset_index(drop=True)"),
        new_code_cell(
            "unreadable = table[table[\"error\"].notna()]\n"
            "print(f\"{len(unreadable)} unreadable logs\")\n"
            "unreadable[[\"file\", \"error\"]].head()"),
    ]
    return _notebook(cells)


def early_warnings() -> nbformat.NotebookNode:
    cells = [
        new_markdown_cell(
            "# Early warnings\n\n"
            "A server often says what is about to go wrong well before it dies (`Unexpected error during package "
            "walk: cutlass.cute.experimental` ~100 s before `ImportError: Vendored FlashAttention CUTE is not "
            "available`). This notebook looks at:\n\n"
            "1. which early warnings the diagnosis reports before which failures, and how long before;\n"
            "2. which warning *templates* in the logs are over-represented before each label: the lift "
            "P(label | warning) / P(label) over the labelled corpus (what the corpus could teach).\n\n"
            "Large collections are subsampled (`FORENSICS_NB_MAX` logs per collection)."),
        new_code_cell(SETUP),
        new_code_cell(LOAD_LABELS),
        new_code_cell(RUN_BATCH),
        new_code_cell(PER_FILE),
        new_markdown_cell("## Which warnings precede which failures\n\n"
                          "The `early_warnings` column holds, per incident, the precursor lines the diagnosis "
                          "found (JSON), each with its `lead_seconds` before the failure."),
        new_code_cell(
            "rows = []\n"
            "for r in table[table[\"verdict\"] == \"failed\"].itertuples():\n"
            "    for w in json.loads(r.early_warnings or \"[]\"):\n"
            "        rows.append({\"file\": r.file, \"root_cause\": r.root_cause, \"phase\": r.phase,\n"
            "                     \"warning\": w.get(\"signature\") or w.get(\"template\") or w.get(\"text\", \"\")[:80],\n"
            "                     \"lead_s\": w.get(\"lead_seconds\"), \"count\": w.get(\"count\"), \"text\": w.get(\"text\")})\n"
            "warnings = pd.DataFrame(rows, columns=[\"file\", \"root_cause\", \"phase\", \"warning\", \"lead_s\", \"count\", \"text\"])\n"
            "n_failed = int((table[\"verdict\"] == \"failed\").sum())\n"
            "print(f\"{warnings['file'].nunique()} of {n_failed} failed incidents had an early warning\")\n"
            "pd.crosstab(warnings[\"warning\"], warnings[\"root_cause\"].astype(\"string\")) if len(warnings) else warnings"),
        new_code_cell(
            "# Were the early warnings that the labels name found?\n"
            "want = files[files[\"early_warning_substring\"].fillna(\"\").ne(\"\")]\n"
            "found_text = warnings.groupby(\"file\")[\"text\"].apply(lambda t: \"\\n\".join(x or \"\" for x in t))\n"
            "def _found(row):\n"
            "    rel = os.path.relpath(row.name, ROOT)\n"
            "    return row[\"early_warning_substring\"] in found_text.get(rel, \"\")\n"
            "if len(want):\n"
            "    hit = want.apply(_found, axis=1)\n"
            "    print(f\"labelled early warning reported for {hit.mean():.0%} of {len(want)} logs that have one\")\n"
            "    display(hit.groupby(want[\"label\"]).agg([\"mean\", \"size\"]).rename(columns={\"mean\": \"found\", \"size\": \"logs\"}))\n"
            "else:\n"
            "    print(\"no labelled early warnings in this sample\")"),
        new_markdown_cell("## Lead times"),
        new_code_cell(
            "leads = warnings.dropna(subset=[\"lead_s\"])\n"
            "if len(leads):\n"
            "    fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 0.4 * leads[\"warning\"].nunique() + 2.5))\n"
            "    a1.hist(leads[\"lead_s\"].clip(lower=0.1), bins=np.logspace(-1, 4, 30))\n"
            "    a1.set_xscale(\"log\")\n"
            "    a1.set_xlabel(\"lead time before the failure (s)\")\n"
            "    a1.set_ylabel(\"early warnings\")\n"
            "    g = leads.groupby(\"warning\")[\"lead_s\"]\n"
            "    order = g.median().sort_values().index\n"
            "    hbox(a2, [g.get_group(k).clip(lower=0.1) for k in order], order)\n"
            "    a2.set_xscale(\"log\")\n"
            "    a2.set_xlabel(\"lead time (s)\")\n"
            "    plt.tight_layout()\n"
            "    plt.show()\n"
            "    display(g.describe()[[\"count\", \"min\", \"50%\", \"max\"]].sort_values(\"50%\", ascending=False))\n"
            "else:\n"
            "    print(\"no timestamped early warnings in this sample\")"),
        new_code_cell(
            "# How much of the run was left when the first warning appeared?\n"
            "early = table[(table[\"verdict\"] == \"failed\") & table[\"first_lead_s\"].notna() & table[\"time_to_failure_s\"].notna()]\n"
            "if len(early):\n"
            "    fig, ax = plt.subplots(figsize=(6, 5))\n"
            "    for rc, g in early.groupby(early[\"root_cause\"].astype(\"string\")):\n"
            "        ax.scatter(g[\"time_to_failure_s\"].clip(lower=0.1), g[\"first_lead_s\"].clip(lower=0.1), label=rc, s=18)\n"
            "    ax.set_xscale(\"log\"); ax.set_yscale(\"log\")\n"
            "    ax.set_xlabel(\"time to failure (s)\"); ax.set_ylabel(\"lead of the first warning (s)\")\n"
            "    ax.legend(fontsize=7)\n"
            "    plt.tight_layout()\n"
            "    plt.show()"),
        new_markdown_cell(
            "## Lift of warning templates per label\n\n"
            "For every log we take the warning-like lines *before the failure line* (level WARNING, package-walk "
            "warnings, and unlabelled lines that say *warn / deprecated / falling back / not available / not "
            "found / disabled / unsupported*), mask the variable parts (numbers, hex, paths, quoted names) into a "
            "template, and count each template once per log. Then\n\n"
            "lift(template, label) = P(label | template) / P(label)\n\n"
            "Lift ≫ 1 with decent support marks a warning that announces that failure."),
        new_code_cell(
            "WARNY = re.compile(r\"warn|deprecat|fall(?:ing)? ?back|not available|not found|disabled|unsupported|\"\n"
            "                   r\"too (?:old|large|small)|mismatch\", re.I)\n"
            "MASKS = [\n"
            "    (re.compile(r\"(?:/[\\w.+-]+){2,}/?\"), \"<path>\"),\n"
            "    (re.compile(r\"'[^']*'|\\\"[^\\\"]*\\\"\"), \"<str>\"),\n"
            "    (re.compile(r\"\\b0x[0-9a-fA-F]+\\b\"), \"<hex>\"),\n"
            "    (re.compile(r\"\\b\\d+(?:\\.\\d+)*\\b\"), \"<n>\"),\n"
            "    (re.compile(r\"\\s+\"), \" \"),\n"
            "]\n\n\n"
            "def template(text: str) -> str:\n"
            "    for rx, repl in MASKS:\n"
            "        text = rx.sub(repl, text)\n"
            "    return text.strip()[:120]\n\n\n"
            "def warning_templates(path: str, fail_line) -> set[str]:\n"
            "    ev = forensics.read_events(path)\n"
            "    if pd.notna(fail_line):\n"
            "        ev = ev[ev[\"line\"] < fail_line]\n"
            "    level = ev[\"level\"].astype(\"string\").fillna(\"\")\n"
            "    kind = ev[\"kind\"].astype(\"string\")\n"
            "    text = ev[\"text\"].fillna(\"\")\n"
            "    warny = level.isin([\"WARNING\", \"WARN\"]) | (kind == \"package_walk_warning\") | (\n"
            "        kind.isin([\"message\", \"log\"]) & ~level.isin([\"ERROR\", \"CRITICAL\"]) & text.str.contains(WARNY))\n"
            "    return {template(t) for t in text[warny]}\n\n\n"
            "t0 = time.monotonic()\n"
            "fail_line = main[\"evidence_line\"].where(main[\"verdict\"] == \"failed\")\n"
            "per_log = {p: warning_templates(p, fail_line.get(p)) for p in files.index if pd.notna(files.at[p, \"verdict_pred\"])}\n"
            "print(f\"templated {len(per_log)} logs in {time.monotonic() - t0:.1f} s; \"\n"
            "      f\"{len(set().union(*per_log.values())) if per_log else 0} distinct warning templates\")"),
        new_code_cell(
            "MIN_SUPPORT = 3  # logs in which a template must appear\n"
            "pairs = pd.DataFrame([(p, t) for p, ts in per_log.items() for t in ts], columns=[\"path\", \"template\"])\n"
            "pairs[\"label\"] = pairs[\"path\"].map(files[\"label\"])\n"
            "n_logs = len(per_log)\n"
            "p_label = files.loc[list(per_log), \"label\"].value_counts() / max(n_logs, 1)\n"
            "support = pairs.groupby(\"template\")[\"path\"].nunique()\n"
            "joint = pairs.groupby([\"template\", \"label\"])[\"path\"].nunique().rename(\"n\").reset_index()\n"
            "joint[\"support\"] = joint[\"template\"].map(support)\n"
            "joint = joint[joint[\"support\"] >= MIN_SUPPORT]\n"
            "joint[\"p_label_given_t\"] = joint[\"n\"] / joint[\"support\"]\n"
            "joint[\"p_label\"] = joint[\"label\"].map(p_label)\n"
            "joint[\"lift\"] = joint[\"p_label_given_t\"] / joint[\"p_label\"]\n"
            "lift = joint.sort_values([\"lift\", \"n\"], ascending=False)\n"
            "lift[lift[\"label\"] != \"none\"].head(20).round(3)"),
        new_code_cell(
            "# The strongest template for each label, and a heat map of lift for the top templates.\n"
            "best = lift[lift[\"label\"] != \"none\"].groupby(\"label\").head(1).set_index(\"label\")\n"
            "display(best[[\"template\", \"n\", \"support\", \"p_label_given_t\", \"lift\"]].round(3))\n"
            "top = lift[(lift[\"label\"] != \"none\") & (lift[\"lift\"] > 1)].head(15)[\"template\"].unique()\n"
            "if len(top):\n"
            "    heat = joint[joint[\"template\"].isin(top)].pivot_table(index=\"template\", columns=\"label\",\n"
            "                                                         values=\"lift\", fill_value=0)\n"
            "    fig, ax = plt.subplots(figsize=(0.6 * heat.shape[1] + 6, 0.4 * heat.shape[0] + 2))\n"
            "    im = ax.imshow(heat.values, cmap=\"magma_r\", aspect=\"auto\")\n"
            "    ax.set_xticks(range(heat.shape[1]), heat.columns, rotation=60, ha=\"right\")\n"
            "    ax.set_yticks(range(heat.shape[0]), [t[:70] for t in heat.index], fontsize=7)\n"
            "    fig.colorbar(im, ax=ax, label=\"lift\")\n"
            "    plt.tight_layout()\n"
            "    plt.show()\n"
            "else:\n"
            "    print(f\"no template reaches support {MIN_SUPPORT} with lift > 1 in this sample\")"),
        new_markdown_cell(
            "## What changed: a good run against a bad one\n\n"
            "`forensics.diff(good, bad)` compares two start-ups of the same scenario (GPU captures in "
            "`corpora/gpu-pairs/`): the warnings new in the failing run, with lead time before the failure, "
            "the facts that differ, and phase timing."),
        new_code_cell(
            "pairs = pd.read_csv(CORPORA / \"gpu-pairs\" / \"pairs.csv\")\n"
            "pair = pairs[pairs[\"id\"] == \"gpu-pair-nccl-ifname\"].iloc[0]\n"
            "d = forensics.diff(str(CORPORA / \"gpu-pairs\" / pair[\"good\"]), str(CORPORA / \"gpu-pairs\" / pair[\"bad\"]))\n"
            "print(\"change:\", pair[\"change\"])\n"
            "print(\"BAD failed:\", d[\"failure\"][\"root_cause\"], \"in\", d[\"failure\"][\"phase\"], \"| exit\", d[\"exit\"])\n"
            "display(pd.DataFrame(d[\"new_in_bad\"])[[\"line\", \"lead_seconds\", \"early_warning\", \"fatal\", \"text\"]])\n"
            "display(pd.DataFrame([c for c in d[\"facts\"][\"changed\"] if not c[\"volatile\"]])[[\"key\", \"good\", \"bad\"]])\n"
            "pd.DataFrame(d[\"timing\"][\"phases\"])"),
    ]
    return _notebook(cells)


def _notebook(cells: list) -> nbformat.NotebookNode:
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"  # stable ids: regenerating changes nothing unless the source does
    nbformat.validate(nb)
    return nb


def main() -> None:
    for name, build in (("01-failure-corpus-tour.ipynb", tour), ("02-early-warnings.ipynb", early_warnings)):
        nbformat.write(build(), HERE / name)
        print(f"wrote notebooks/{name}")


if __name__ == "__main__":
    main()
