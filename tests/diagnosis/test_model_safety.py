"""Model files are input from outside: loading one never runs code, never
grows without bound, and a bad one is refused in one line (exit 2)."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from forensics.diagnosis.classifier.loader import SCORER_PATH
from forensics.diagnosis.classifier.files import check_model_file
from forensics.diagnosis.classifier.scorer import load_scorer
from forensics.errors import ModelError

REPO = Path(__file__).resolve().parents[2]
LOG = b"[2026-01-05 10:00:00] starting\nRuntimeError: boom\n"


def _cli(*args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), **(env_extra or {}))
    env.pop("FORENSICS_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "forensics", *args], input=LOG, capture_output=True,
                          env=env, timeout=120, cwd=REPO)


def _one_line_refusal(p: subprocess.CompletedProcess, *words: str) -> None:
    err = p.stderr.decode()
    assert p.returncode == 2, (p.returncode, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for w in words:
        assert w in err, err


def _node(cls: str, mod: str, loader: str, **kw) -> dict:
    return {"__class__": cls, "__module__": mod, "__loader__": loader, **kw}


def _str(s: str) -> dict:
    return _node("str", "builtins", "JsonNode", content=json.dumps(s), is_json=True)


def _skops(path: Path, schema: dict) -> Path:
    schema = dict(schema, protocol=2, _skops_version="0.16.0")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("schema.json", json.dumps(schema))
    return path


def exploits(marker: Path) -> dict[str, dict]:
    code = f"open({str(marker)!r}, 'w').write('ran')"
    args = _node("tuple", "builtins", "TupleNode", content=[
        _str(code), _node("dict", "builtins", "DictNode", content={},
                          key_types=_node("list", "builtins", "ListNode", content=[]))])
    return {
        # numpy's own helper that calls exec(): trusted by a ``numpy.*`` wildcard
        "numpy-runstring-constructor": _node("runstring", "numpy.testing._private.utils",
                                             "ConstructorFromReduceNode", content=args),
        "builtins-exec-constructor": _node("exec", "builtins", "ConstructorFromReduceNode",
                                           content=_node("tuple", "builtins", "TupleNode", content=[_str(code)])),
        "reduce-node-os-system": _node("system", "os", "ReduceNode", content={},
                                       __reduce__={"args": _node("tuple", "builtins", "TupleNode",
                                                                 content=[_str(f"touch {marker}")])}),
        # a trusted-looking container holding a function node deep inside
        "function-node-nested": _node("dict", "builtins", "DictNode", content={
            "a": _node("list", "builtins", "ListNode", content=[_node("system", "os", "FunctionNode")])},
            key_types=_node("list", "builtins", "ListNode", content=[_node("str", "builtins", "TypeNode")])),
        "numpy-object-node": _node("runstring", "numpy.testing._private.utils", "ObjectNode", content={}),
    }


@pytest.mark.parametrize("name", sorted(exploits(Path("/x"))))
def test_crafted_skops_is_refused_and_runs_nothing(tmp_path, name):
    marker = tmp_path / "MARKER"
    evil = _skops(tmp_path / "evil.skops", exploits(marker)[name])
    with pytest.raises(ModelError, match="untrusted"):
        check_model_file(evil)
    p = _cli("classify", "--model", str(evil), "-")
    _one_line_refusal(p, "refused", "untrusted")
    p = _cli("eval", "--model", str(evil), str(tmp_path))
    _one_line_refusal(p, "refused")
    # The run-time path never opens a .skops at all.
    p = _cli("classify", "-", env_extra={"FORENSICS_MODEL": str(evil)})
    _one_line_refusal(p, "scorer")
    assert not marker.exists(), "loading the crafted model ran code"


def test_skops_exploit_is_real_without_our_check(tmp_path):
    """The crafted file does run code in skops when its types are trusted (so
    the test above proves something)."""
    import skops.io as sio

    marker = tmp_path / "MARKER"
    evil = _skops(tmp_path / "evil.skops", exploits(marker)["numpy-runstring-constructor"])
    sio.load(evil, trusted=sio.get_untrusted_types(file=evil))
    assert marker.read_text() == "ran"


def test_not_a_zip_skops_is_one_line(tmp_path):
    bad = tmp_path / "m.skops"
    bad.write_bytes(b"PK\x03\x04 not really")
    _one_line_refusal(_cli("classify", "--model", str(bad), "-"), "not a valid skops")


# ------------------------------------------------------------ scorer files
def _shipped() -> dict:
    return json.loads(gzip.decompress(SCORER_PATH.read_bytes()))


def _write(path: Path, data) -> Path:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    path.write_bytes(gzip.compress(raw, 1))
    return path


def _mutations() -> dict[str, object]:
    d = _shipped()
    out: dict[str, object] = {}

    def mut(name, fn):
        x = json.loads(json.dumps(d))
        fn(x)
        out[name] = x

    mut("vocab-index-out-of-range", lambda x: x["vectorizers"][0]["vocab"].update({"zz": 10 ** 9}))
    mut("vocab-index-negative", lambda x: x["vectorizers"][1]["vocab"].update({"zz": -1}))
    mut("vocab-index-float", lambda x: x["vectorizers"][1]["vocab"].update({"zz": 1.5}))
    mut("column-out-of-range", lambda x: x["vectorizers"][0].update(column=7))
    mut("classes-not-a-list", lambda x: x.update(classes=5))
    mut("classes-not-strings", lambda x: x.update(classes=[1] * len(x["classes"])))
    mut("n-features-huge", lambda x: x.update(n_features=10 ** 12))
    mut("n-features-bool", lambda x: x.update(n_features=True))
    mut("coef-short", lambda x: x.update(coef=x["coef"][:-8]))
    mut("coef-not-base64", lambda x: x.update(coef="!" * len(x["coef"])))
    mut("intercept-nan", lambda x: x["intercept"].__setitem__(0, float("nan")))
    mut("calibration-wrong-shape", lambda x: x["calibration"].__setitem__(0, [1.0]))
    mut("idf-strings", lambda x: x["vectorizers"][0]["idf"].__setitem__(0, "1"))
    mut("catastrophic-token-pattern", lambda x: x["vectorizers"][0].update(token_pattern=r"(a+)+$"))
    mut("ngram-huge", lambda x: x["vectorizers"][1].update(ngram_range=[1, 10 ** 6]))
    mut("analyzer-unknown", lambda x: x["vectorizers"][1].update(analyzer="callable"))
    mut("vectorizer-missing-keys", lambda x: x["vectorizers"][0].pop("idf"))
    mut("templates-wrong-type", lambda x: x["meta"].update(warning_templates=[1, 2]))
    mut("meta-a-list", lambda x: x.update(meta=[]))
    mut("format-unknown", lambda x: x.update(format="pickle/1"))
    out["top-level-list"] = [1, 2, 3]
    out["deep-nesting"] = b"[" * 200_000 + b"]" * 200_000
    out["not-json"] = b"\x00\x01 garbage"
    return out


@pytest.mark.parametrize("name", sorted(_mutations()))
def test_crafted_scorer_is_refused_in_process(tmp_path, name):
    path = _write(tmp_path / "m.scorer.json.gz", _mutations()[name])
    with pytest.raises(ModelError) as e:
        load_scorer(path)
    assert "\n" not in str(e.value)


def test_crafted_scorer_is_one_line_through_the_cli(tmp_path):
    path = _write(tmp_path / "m.scorer.json.gz", _mutations()["vocab-index-out-of-range"])
    _one_line_refusal(_cli("classify", "-", env_extra={"FORENSICS_MODEL": str(path)}), "vocabulary")
    _one_line_refusal(_cli("classify", "--model", str(path), "-"), "vocabulary")


def test_gzip_bomb_scorer_is_refused_in_bounded_memory(tmp_path):
    """1 GiB of zeros in a ~1 MB gzip: refused at the limit, not read whole."""
    bomb = tmp_path / "bomb.scorer.json.gz"
    chunk = b"\x00" * (1 << 20)
    with gzip.open(bomb, "wb", compresslevel=9) as f:
        for _ in range(1024):
            f.write(chunk)
    assert bomb.stat().st_size < 2 << 20
    code = ("import resource, sys\nfrom pathlib import Path\nfrom forensics.diagnosis.classifier.scorer import load_scorer\n"
            "from forensics.errors import ModelError\n"
            "try:\n    load_scorer(Path(sys.argv[1]))\nexcept ModelError as e:\n    print('refused:', e)\n"
            # VmHWM, not ru_maxrss: ru_maxrss keeps the forking parent's peak across exec
                "print(next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')))\n")
    p = subprocess.run([sys.executable, "-c", code, str(bomb)], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(REPO)))
    out = p.stdout.splitlines()
    assert out[0].startswith("refused:") and "expands past" in out[0], p.stdout + p.stderr
    assert int(out[1]) < 600 * 1024, f"peak RSS {int(out[1]) // 1024} MiB"  # KiB: well under 1 GiB


def test_oversized_compressed_scorer_is_refused_before_reading(tmp_path, monkeypatch):
    from forensics.diagnosis.classifier import scorer

    monkeypatch.setattr(scorer, "MAX_COMPRESSED", 1000)
    with pytest.raises(ModelError, match="too large"):
        scorer.load_scorer(SCORER_PATH)


def test_missing_named_model_is_one_line(tmp_path):
    _one_line_refusal(_cli("classify", "-", env_extra={"FORENSICS_MODEL": str(tmp_path / "none.scorer.json.gz")}),
                      "no such file")
    _one_line_refusal(_cli("classify", "--model", str(tmp_path / "none.skops"), "-"), "no such file")


def test_shipped_scorer_and_model_still_load():
    from forensics.diagnosis.classifier.loader import MODEL_PATH

    assert load_scorer(SCORER_PATH).classes
    assert check_model_file(MODEL_PATH)
    p = _cli("classify", "--format", "json", "-")
    assert p.returncode == 1, p.stderr
    assert json.loads(p.stdout)["verdict"] == "failed"
