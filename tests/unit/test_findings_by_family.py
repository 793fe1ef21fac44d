"""bench/findings_by_family.py: counts over hand-made corpus entries."""

from __future__ import annotations

import json

import pytest

from bench import findings_by_family as fbf


def _entry(tmp_path, id_, ops, known=None, hits=("c1",)):
    d = tmp_path / id_
    d.mkdir()
    meta = {"id": id_, "ops": ops, "root": {"stage": "reinplace"}, "known": known,
            "hits": [{"campaign": c} for c in hits]}
    (d / "meta.json").write_text(json.dumps(meta))


def test_families_count_root_causes_new_ones_and_sightings(tmp_path):
    _entry(tmp_path, "a", ["add_.Scalar", "narrow"], hits=("c1", "c1"))
    _entry(tmp_path, "b", ["add_.Scalar"], known={"issue": "pytorch/pytorch#1"})
    _entry(tmp_path, "c", ["max.dim_max"], hits=("c2",))
    metas = fbf.entries(tmp_path, "c1")
    assert [m["id"] for m in metas] == ["a", "b"]  # c has no sighting of c1
    table = fbf.by_family(metas)
    assert table["in-place"] == {"roots": 2, "new": 1, "hits": 3}
    assert table["views"] == {"roots": 1, "new": 1, "hits": 2}
    assert "multi-output out=" not in table
    assert fbf.by_family(fbf.entries(tmp_path))["multi-output out="]["roots"] == 1


def test_a_missing_corpus_is_an_error_with_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        fbf.main(["--corpus", str(tmp_path / "nope")])
    assert e.value.code == 2 and "no corpus folder" in capsys.readouterr().err
