"""spla.plots: PNGs are written atomically; a clear error without matplotlib."""

from __future__ import annotations

import builtins

import pytest

from spla import InputError, plots
from spla.io import generators

PNG = b"\x89PNG\r\n\x1a\n"


def test_missing_matplotlib_is_a_clear_error(monkeypatch, tmp_path):
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    A = generators.from_spec("gen:random:50:3")
    with pytest.raises(InputError, match=r"pip install 'spla\[plot\]'"):
        plots.spy(A, tmp_path / "a.png")
    assert list(tmp_path.iterdir()) == []


def test_every_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    A = generators.from_spec("gen:hugerows:3000:3:1500")
    results = [{"matrix": m, "kernel": k, "gbps": g, "gflops": g / 6, "speedup_vs_anchor": g / 10}
               for m, g0 in (("a", 10.0), ("b", 20.0)) for k, g in (("cusparse", g0), ("auto", 1.5 * g0))]
    written = [
        plots.spy(A, tmp_path / "spy.png"),
        plots.row_length_histogram(A, tmp_path / "rows.png"),
        plots.row_length_histogram([0, 0, 1, 5, 9], tmp_path / "rows_list.png"),
        plots.throughput_bars(results, tmp_path / "bars.png", ceiling=30.0),
        plots.roofline([dict(r, label=r["matrix"], intensity=1 / 6) for r in results], tmp_path / "roof.png",
                       bandwidth_gbps=40.0, peak_gflops=100.0),
    ]
    for path in written:
        data = path.read_bytes()
        assert data.startswith(PNG) and len(data) > 2000
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_bad_plot_inputs(tmp_path):
    pytest.importorskip("matplotlib")
    with pytest.raises(InputError, match="no results"):
        plots.throughput_bars([{"matrix": "a", "kernel": "k"}], tmp_path / "x.png")
    with pytest.raises(InputError, match="does not exist"):
        plots.spy(generators.from_spec("gen:random:10:2"), tmp_path / "nope" / "x.png")


def test_info_spy_writes_the_pattern(tmp_path):
    pytest.importorskip("matplotlib")
    from click.testing import CliRunner

    from spla.cli import main

    out = tmp_path / "pattern.png"
    result = CliRunner().invoke(main, ["info", "gen:poisson2d:16", "--spy", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == PNG
    assert "gini" in result.output


def test_roofline_names_the_matrix_of_each_point(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib.axes

    names = []
    real = matplotlib.axes.Axes.annotate
    monkeypatch.setattr(matplotlib.axes.Axes, "annotate", lambda self, text, *a, **k: names.append(text) or
                        real(self, text, *a, **k))
    points = [{"label": m, "kernel": k, "intensity": 1 / 6, "gflops": g}
              for m, g in (("web", 10.0), ("road", 20.0)) for k in ("cusparse", "auto")]
    plots.roofline(points, tmp_path / "roof.png", bandwidth_gbps=40.0)
    assert sorted(names) == ["road", "road", "web", "web"]
