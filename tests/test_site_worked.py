"""The Worked examples page's record: its tables, and the checks that can stop the build."""

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from attention_scaling.site import worked as worked_module
from attention_scaling.site.checks import PageCheckError
from attention_scaling.site.worked import WorkedExamples, softmax_steps, steps_table, worked_examples

PAGE = Path(__file__).resolve().parents[1] / "docs" / "worked-examples.md"


@pytest.fixture(scope="module")
def worked():
    return worked_examples()


def row(table: str, stage: str) -> list[str]:
    line = next(line for line in table.splitlines() if line.startswith(f"| {stage}"))
    return [cell.strip() for cell in line.strip("|").split("|")][1:]


def test_every_table_the_page_shows_is_in_the_record(worked):
    shown = re.findall(r"Markdown\(worked\.(\w+)\)", PAGE.read_text())
    assert shown == [field.name for field in dataclasses.fields(WorkedExamples)]


def test_tables_are_the_steps_with_four_digits(worked):
    assert worked.shekhar_three_scaled == steps_table(softmax_steps([14.0, 10.0, 12.0], scale=1 / 8))
    # The printed weights of the articles, recomputed (see the Claims checked page).
    assert row(worked.book_five, "weight") == ["0.5986", "2.7e-06", "0.4012", "2.7e-07", "0.0002"]
    assert row(worked.shekhar_three, "weight") == ["0.8668", "0.0159", "0.1173"]
    assert row(worked.division_scaled, "scaled") == ["10.0000", "10.2000", "10.3000"]
    for field in dataclasses.fields(WorkedExamples):
        table = getattr(worked, field.name)
        assert len(table.splitlines()) == 8 and "|---|" in table.splitlines()[1], field.name


def test_a_wrong_exponential_stops_the_page(monkeypatch):
    # Plant a fault: exponentials of the scaled scores, without subtracting the maximum.
    def unshifted(scores, scale=1.0):
        steps = softmax_steps(scores, scale)
        return dataclasses.replace(steps, exponentials=np.exp(steps.scaled))

    monkeypatch.setattr(worked_module, "softmax_steps", unshifted)
    with pytest.raises(PageCheckError, match="largest exponential is exactly e\\^0 = 1.*example='division'"):
        worked_examples()


def test_weights_that_do_not_sum_to_one_stop_the_page(monkeypatch):
    def unnormalised(scores, scale=1.0):
        steps = softmax_steps(scores, scale)
        return dataclasses.replace(steps, weights=steps.exponentials)

    monkeypatch.setattr(worked_module, "softmax_steps", unnormalised)
    with pytest.raises(PageCheckError, match="the weights sum to 1"):
        worked_examples()


def test_a_scale_that_changes_nothing_stops_the_division_section(monkeypatch):
    # Plant a fault: the scale is ignored, so division no longer changes the weights.
    monkeypatch.setattr(worked_module, "softmax_steps", lambda scores, scale=1.0: softmax_steps(scores))
    with pytest.raises(PageCheckError, match="worked-division.*dividing changes them"):
        worked_examples()
