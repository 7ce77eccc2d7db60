"""The figure registry: every figure draws labelled axes; the export writes identical files each run."""

import re
import subprocess
import sys
import time

import pytest

from attention_scaling import __main__ as cli
from attention_scaling.site.figures import FIGURES, FigureSpec, make_figure, new_figure
from attention_scaling.site.plots import POLICY_STYLE
from figure_checks import assert_labelled_axes
from page_sources import PAGES, page_source



# The tuned figure's data is the training page's tuning (several seconds): its
# axes are checked in tests/test_site_training.py, the file that computes the
# tuning (make check hands each file to one worker, so it is computed once).
DRAWN_HERE = [name for name in FIGURES if name != "tuned-learning-rates"]


@pytest.fixture(scope="module")
def made():
    """Draw each figure from its page's data once, when a test first needs it."""
    drawn = {}

    def figure(name):
        if name not in drawn:
            drawn[name] = FIGURES[name].make()
        return drawn[name]

    return figure


def test_the_registered_figures_are_the_ones_the_pages_show():
    # A page shows a figure with {glue:figure} fig-NAME; each is registered in FIGURES, and each registered
    # figure is shown (the Contributing page's example aside).
    shown = {name for page in PAGES for name in re.findall(r"^`{3,}\{glue:figure\} fig-([\w-]+)$", page_source(page), re.M)}
    assert shown == set(FIGURES), {"shown, not registered": shown - set(FIGURES), "registered, not shown": set(FIGURES) - shown}
    assert all(isinstance(spec, FigureSpec) and spec.title for spec in FIGURES.values())


@pytest.mark.parametrize("name", DRAWN_HERE)
def test_every_plot_has_labelled_axes(made, name):
    assert_labelled_axes(made(name), name)


def test_policy_curves_use_the_colour_blind_palette(made):
    colours = {line.get_color().upper() for line in made("three-regimes").axes[0].get_lines()}
    assert colours <= {style["color"] for style in POLICY_STYLE.values()} == {"#D55E00", "#0072B2", "#009E73"}


def test_new_figure_has_the_registered_size_and_grid():
    figure, axes = new_figure("training-curves")
    assert axes.shape == (2, 3) and list(figure.get_size_inches()) == [7.0, 4.6]
    figure, ax = new_figure("saturation-onset")
    assert ax in figure.axes and len(figure.axes) == 1


def test_make_figure_draws_given_data():
    from attention_scaling.regimes import saturation_onset_data

    figure = make_figure("saturation-onset", saturation_onset_data(n=8, points=11))
    assert "with 8 scores" in figure.axes[0].get_title()


def test_an_unknown_figure_is_refused():
    with pytest.raises(ValueError, match="name must be one of the site's figures .*; got 'no-such-figure'"):
        new_figure("no-such-figure")


# Every figure is exported in one format, PDF, whose backend differs most from the PNGs the build
# draws (fonts embedded, a creation date); a slow test, as computing every figure's data takes
# about 40 s. A second export must match the first byte for byte. What could make it differ is
# the format's own metadata and ids (a date, SVG's hashed ids), the same for every figure, or a
# figure's data, which the page's execution in two clean builds compares
# (tests/test_clean_builds.py). So one cheap figure (0.4 s) is exported twice in each format,
# more than a second apart, so that a date in seconds would differ.
EXPORTED_AGAIN = "saturation-onset"


def test_export_writes_every_figure(tmp_path, capsys):
    assert cli.main(["figures", "--out", str(tmp_path), "--format", "pdf"]) == 0
    progress = capsys.readouterr().out.splitlines()
    assert len(progress) == len(FIGURES) and progress[0].startswith(f"[1/{len(FIGURES)}]")
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(f"{name}.pdf" for name in FIGURES)
    assert all(tmp_path.joinpath(f"{name}.pdf").stat().st_size > 1000 for name in FIGURES)


@pytest.mark.parametrize("fmt", ["svg", "png", "pdf"])
def test_an_export_gives_the_same_bytes_again(tmp_path, fmt):
    first, second = tmp_path / "a", tmp_path / "b"
    assert cli.main(["figures", "--out", str(first), "--format", fmt, EXPORTED_AGAIN]) == 0
    time.sleep(1.1)
    assert cli.main(["figures", "--out", str(second), "--format", fmt, EXPORTED_AGAIN]) == 0
    again = f"{EXPORTED_AGAIN}.{fmt}"
    assert [path.name for path in second.iterdir()] == [again]
    assert first.joinpath(again).stat().st_size > 1000
    assert (first / again).read_bytes() == (second / again).read_bytes(), f"{again} differs between two exports"


def test_export_writes_the_figures_named_once_each_in_the_order_given(tmp_path, capsys):
    assert cli.main(["figures", "--out", str(tmp_path), "--format", "png", "dispersion", "saturation-onset", "dispersion"]) == 0
    progress = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in progress] == [
        ["[1/2]", str(tmp_path / "dispersion.png")], ["[2/2]", str(tmp_path / "saturation-onset.png")]]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["dispersion.png", "saturation-onset.png"]


def test_export_refuses_a_file_as_directory(tmp_path, capsys):
    target = tmp_path / "file.txt"
    target.write_text("")
    assert cli.main(["figures", "--out", str(target)]) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_export_refuses_an_unknown_format(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "attention_scaling", "figures", "--out", str(tmp_path), "--format", "jpg"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "invalid choice: 'jpg'" in result.stderr
