"""The public API: explicit __all__ everywhere, one re-export policy, no shadowed submodule, no site in the library."""

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import attention_scaling

PACKAGE = Path(attention_scaling.__file__).resolve().parent
MODULES = sorted(info.name for info in pkgutil.walk_packages(attention_scaling.__path__, "attention_scaling."))
SUBMODULES = sorted(info.name for info in pkgutil.iter_modules(attention_scaling.__path__))
# Everything but page support: the modules the site's code may use, never the reverse.
# The command line (__main__) sits above both: `prove` runs the library's
# registry, `figures` exports the site's figures, so it may import either.
LIBRARY_FILES = sorted(
    path for path in PACKAGE.rglob("*.py")
    if "site" not in path.relative_to(PACKAGE).parts and path.name != "__main__.py"
)


def site_imports(source: str, module: str) -> list[str]:
    """The imports of ``attention_scaling.site`` (absolute or relative) in a module's source."""
    package = module if module.endswith("__init__") else module.rsplit(".", 1)[0]
    package = package.removesuffix(".__init__")
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parent = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found += [name for name in targets if name == "attention_scaling.site" or name.startswith("attention_scaling.site.")]
    return found


def top_level_bindings(source: str) -> set[str]:
    """Names bound at the top level of a module: imports, assignments, definitions."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {target.id for target in targets if isinstance(target, ast.Name)}
    return names


def test_the_walk_finds_the_package():
    assert {"attention_scaling.simulate", "attention_scaling.site.tables", "attention_scaling._softmax"} <= set(MODULES)
    assert LIBRARY_FILES and not any("site" in path.parts[-2:-1] for path in LIBRARY_FILES)


@pytest.mark.parametrize("name", ["attention_scaling", *MODULES])
def test_every_module_has_an_explicit_all_of_names_that_exist(name):
    module = importlib.import_module(name)
    assert hasattr(module, "__all__"), f"{name} has no __all__"
    exported = list(module.__all__)
    assert len(exported) == len(set(exported)), f"{name}.__all__ repeats a name"
    missing = [item for item in exported if not hasattr(module, item)]
    assert not missing, f"{name}.__all__ names what the module does not define: {missing}"
    private = [item for item in exported if item.startswith("_") and item != "__version__"]
    assert not private, f"{name}.__all__ exports private names: {private}"


def test_top_level_exports_are_the_core_functions_and_shadow_no_submodule():
    exported = set(attention_scaling.__all__)
    assert not exported & set(SUBMODULES)
    source = (PACKAGE / "__init__.py").read_text(encoding="utf-8")
    shadowing = top_level_bindings(source) & set(SUBMODULES)
    # Importing a private core module binds its own name, which is the module itself.
    assert not shadowing - {"_attention", "_softmax"}, f"__init__ binds submodule names: {shadowing}"
    for name in SUBMODULES:
        module = importlib.import_module(f"attention_scaling.{name}")
        assert getattr(attention_scaling, name) is module, f"attention_scaling.{name} is not the submodule"
    # The one re-export policy: what is exported comes from the private core modules.
    for item in exported - {"__version__"}:
        assert getattr(attention_scaling, item).__module__ in {"attention_scaling._softmax", "attention_scaling._attention"}, item


def test_a_shadowing_binding_would_be_found():
    assert top_level_bindings("from attention_scaling._softmax import softmax as simulate\nproofs = 1\n") == {
        "simulate", "proofs"}


@pytest.mark.parametrize("path", LIBRARY_FILES, ids=lambda path: path.relative_to(PACKAGE).as_posix())
def test_the_library_never_imports_page_support(path):
    module = "attention_scaling." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
    found = site_imports(path.read_text(encoding="utf-8"), module)
    assert not found, f"{path.name} imports page support: {found}"


@pytest.mark.parametrize(
    "source",
    [
        "import attention_scaling.site.tables",
        "from attention_scaling.site import tables",
        "from attention_scaling import site",
        "from .site.tables import markdown_table",
        "from . import site",
        "def f():\n    from attention_scaling.site.claims import CLAIMS\n",
    ],
)
def test_a_planted_site_import_would_be_found(source):
    assert site_imports(source, "attention_scaling.simulate")


def test_relative_imports_resolve_from_subpackages():
    assert site_imports("from .. import site", "attention_scaling.proofs.engine")
    assert not site_imports("from . import engine", "attention_scaling.proofs.__init__")
    assert not site_imports("from attention_scaling import simulate, softmax", "attention_scaling.figures")


def test_the_api_page_documents_the_library_alone():
    # Page support is the site's: its conventions are on the Contributing page, not in the API reference.
    api = (PACKAGE.parents[1] / "docs" / "api.md").read_text(encoding="utf-8")
    documented = re.findall(r"attention_scaling\.site\.[\w.]+", api)  # any directive or role that names page support
    assert not documented, f"docs/api.md documents page support; leave it out (Contributing page): {documented}"
