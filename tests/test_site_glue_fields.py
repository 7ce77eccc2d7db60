"""attention_scaling.site.glue_fields: the one way a page record's numbers become glue keys."""

from dataclasses import dataclass

import numpy as np
import pytest

from attention_scaling.simulate import Estimate
from attention_scaling.site import glue_fields


@dataclass(frozen=True)
class Inner:
    b: float


@dataclass(frozen=True)
class Outer:
    n: int
    a: Inner
    by_name: dict
    verdict: bool
    values: np.ndarray


def test_nested_records_and_mappings_are_glued_through_and_the_rest_is_left_out():
    record = Outer(np.int64(3), Inner(np.float64(0.5)), {"x": Estimate(1.0, 0.1), "y": 2}, True, np.zeros(3))
    assert glue_fields(record, "p") == {"p_n": 3, "p_a_b": 0.5, "p_by_name_x_value": 1.0,
                                        "p_by_name_x_standard_error": 0.1, "p_by_name_y": 2}
    assert type(glue_fields(record, "p")["p_n"]) is int  # myst-nb formats a Python number, not a NumPy one


def test_two_fields_that_give_one_key_are_refused():
    @dataclass(frozen=True)
    class Clashing:
        a_b: float
        a: Inner

    with pytest.raises(ValueError, match=r"\['p_a_b'\] come from two fields"):
        glue_fields(Clashing(1.0, Inner(2.0)), "p")
    with pytest.raises(TypeError, match="dataclass record"):
        glue_fields({"a": 1}, "p")
