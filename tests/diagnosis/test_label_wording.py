"""What a proving line's own words say its failure is (``decision/label_wording.yaml``): every
class's examples, the labels they name are the taxonomy's, and the label model reads them."""
from __future__ import annotations

import pytest

import forensics.diagnosis.decision.label_wording as wording
from forensics.diagnosis.decision.label_features import INDEX, DecisionInputs, pair_vector
from forensics.diagnosis.taxonomy import LABELS
from forensics.events.tables import load_table

CLASSES = load_table(wording.__file__, "label_wording.yaml")["classes"]
CASES = [(c["id"], t, True) for c in CLASSES for t in c["examples"]["match"]] + \
        [(c["id"], t, False) for c in CLASSES for t in c["examples"]["no_match"]]


@pytest.mark.parametrize("cid,text,hit", CASES)
def test_every_example(cid: str, text: str, hit: bool) -> None:
    assert (cid in wording.classes_of(text)) is hit, (cid, text)


def test_classes_are_unique_name_taxonomy_labels_and_lowercase_hints() -> None:
    ids = [c["id"] for c in CLASSES]
    assert len(ids) == len(set(ids))
    for c in CLASSES:
        assert c["says"] in LABELS, c["id"]
        assert c["hints"] and all(isinstance(h, str) and h == h.lower() for h in c["hints"]), c["id"]
        assert c["examples"]["match"] and c["examples"]["no_match"], c["id"]


def test_says_names_labels_once_and_nothing_for_no_text() -> None:
    assert wording.says(None) == () and wording.says("") == ()
    assert wording.says("OSError: libcudart.so.12: cannot open shared object file: No such file or directory") == (
        "env.library-missing",)


def test_the_label_model_reads_what_the_wording_says() -> None:
    inp = DecisionInputs(clf={"config.model-load": 0.6, "net.port-in-use": 0.1}, says=("net.port-in-use",))
    said = pair_vector(inp, "net.port-in-use")
    assert said[INDEX["says"]] == 1.0 and said[INDEX["says_without_rule"]] == 1.0
    assert said[INDEX["says_x_clf"]] == pytest.approx(0.1)
    assert pair_vector(inp, "config.model-load")[INDEX["says"]] == 0.0
    assert pair_vector(inp, "unknown")[INDEX["unknown_when_said"]] == 1.0
    assert pair_vector(DecisionInputs(), "unknown")[INDEX["unknown_when_said"]] == 0.0


def test_the_cuda_runtimes_names_for_an_old_driver_say_the_driver() -> None:
    """CUDA's own errors for a driver older than the program (its documentation of each): the
    wording and the catalogue's label agree, and neither calls them the ABI or the architecture."""
    from forensics.diagnosis.decision.label_prior import catalogue_says

    for line in ("RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.",
                 "[FT][ERROR] CUDA runtime error: API call is not supported in the installed CUDA driver"):
        assert wording.says(line) == ("env.driver-too-old",), line
        assert catalogue_says(line) == ("env.driver-too-old",), line
    # a driver API entry point missing from libcuda is the driver's age; a C++ symbol is the ABI
    assert wording.says("ImportError: /x/_C.abi3.so: undefined symbol: cuTensorMapEncodeTiled") == (
        "env.driver-too-old",)
    assert wording.says("ImportError: /x/_C.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi") == (
        "env.abi-mismatch",)
