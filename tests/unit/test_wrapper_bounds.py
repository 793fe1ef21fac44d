"""oracle.wrapper_bounds: views past their base's storage made by Inductor's generated
wrapper, checked as it makes them. The program of corpus crash-lowering-f49daf5cc5 (the
wrapper makes reinterpret_tensor(buf0, (2, 1), (3, 1), 11) of a 10-element buffer) is run
in a child interpreter by tests/unit/test_heap.py; here the check itself, and the hook
around a real compile that stays in bounds."""

from __future__ import annotations

import torch

from aliasfuzz.oracle.wrapper_bounds import checked_views, out_of_bounds, read_found


def test_the_corpus_entrys_view_past_its_ten_element_buffer_is_out_of_bounds():
    buf0 = torch.empty_strided((4, 1), (3, 1))  # 10 elements, as Inductor allocated it
    o = out_of_bounds(buf0, (2, 1), (3, 1), 11)
    assert o is not None and (o.numel, o.lo, o.hi) == (10, 11, 14)
    assert "(2, 1), (3, 1), 11)" in o.message() and "11 to 14" in o.message()
    # the offsets Inductor should have used, and the last element exactly
    assert out_of_bounds(buf0, (2, 1), (3, 1), 0) is None
    assert out_of_bounds(buf0, (2, 1), (3, 1), 6) is None
    assert out_of_bounds(buf0, (2, 1), (3, 1), 7).hi == 10


def test_the_storage_not_the_tensor_bounds_a_view_and_empty_views_reach_nothing():
    s = torch.zeros(12)
    x = s[4:6]  # a view of 2 elements on a storage of 12: absolute offsets up to 11 are in
    assert out_of_bounds(x, (4,), (2,), 5) is None
    assert out_of_bounds(x, (4,), (2,), 6).hi == 12
    assert out_of_bounds(x, (0, 3), (1, 1), 99) is None  # empty
    assert out_of_bounds(x, (2,), (1,), -1).lo == -1  # before the storage
    half = torch.zeros(3, dtype=torch.float16)  # elements of the base's dtype, not bytes
    assert out_of_bounds(half, (3,), (1,), 0) is None and out_of_bounds(half, (2,), (1,), 2)


def test_a_compiled_wrapper_gets_the_checking_view_and_in_bounds_runs_record_nothing(
        tmp_path, monkeypatch):
    from torch._inductor.codecache import PyCodeCache

    monkeypatch.setattr(torch.compiler.config, "force_disable_caches", True)
    real = PyCodeCache.__dict__["load_by_key_path"]
    made = []

    def f(x):
        a, b = x.split(2)  # views of the input's buffer: reinterpret_tensor in the wrapper
        return torch.ops.aten.mm(a, b.t()) + 1

    with checked_views(tmp_path / "views") as found:
        from torch._inductor import codecache

        loaded = codecache.PyCodeCache.load_by_key_path

        def spy(*a, **k):
            mod = loaded(*a, **k)
            made.append(getattr(getattr(mod, "reinterpret_tensor", None), "checked", False))
            return mod

        monkeypatch.setattr(codecache.PyCodeCache, "load_by_key_path", spy)
        out = torch.compile(f, backend="inductor")(torch.arange(12.0).reshape(4, 3))
        monkeypatch.undo()
    assert torch.equal(out, f(torch.arange(12.0).reshape(4, 3)))
    assert True in made and found == [] and read_found(tmp_path / "views") == []
    assert PyCodeCache.__dict__["load_by_key_path"] is real  # restored


def test_read_found_reads_what_was_written_and_skips_a_line_cut_short(tmp_path):
    path = tmp_path / "views"
    buf = torch.empty(10)
    o = out_of_bounds(buf, (2, 1), (3, 1), 11)
    import json
    from dataclasses import asdict

    path.write_text(json.dumps(asdict(o)) + "\n" + '{"sizes": [2')  # killed mid-write
    assert read_found(path) == [o]
    assert read_found(tmp_path / "absent") == []
