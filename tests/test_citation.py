"""Citation: every citable label exists where the registry says, and versions agree."""

import re
from pathlib import Path

import attention_scaling
from attention_scaling.site.citation import EXERCISES, citables, site_bibtex

ROOT = Path(__file__).resolve().parents[1]


def labels_on(page: str) -> set[str]:
    text = (ROOT / "docs" / f"{page}.md").read_text()
    return set(re.findall(r"^\(([\w-]+)\)=", text, re.MULTILINE)) | set(re.findall(r":(?:label|name): ([\w-]+)", text))


def test_every_citable_label_is_on_its_page():
    missing = [item.anchor for item in citables() if item.label not in labels_on(item.page)]
    assert not missing


def test_every_exercise_on_the_page_is_registered():
    on_page = {label for label in labels_on("exercises") if label.startswith("ex-")}
    assert on_page == {label for label, _ in EXERCISES}


def test_versions_agree():
    cff = (ROOT / "CITATION.cff").read_text()
    assert f'version: "{attention_scaling.__version__}"' in cff
    assert f"version = {{{attention_scaling.__version__}}}" in site_bibtex()
