"""The package layout keeps its promises (CONTRIBUTING.md, "Where things go").

* every package folder has a docstring that says what lives there and what it
  may import;
* no module imports a private name (``_x``), or a private module, of another
  family -- except the two shared contracts, ``linclass._core`` (the Cython
  kernels) and ``linclass._validation`` (the input checks);
* no import cycle between modules, counting imports made inside functions too;
* ``linclass/`` itself stays small: families and tasks live in folders.

Static: the source is parsed with ``ast``, nothing is imported.
"""
import ast
import pathlib

import pytest

import linclass

PACKAGE = pathlib.Path(linclass.__file__).resolve().parent
SHARED = {"linclass._core", "linclass._validation", "linclass._version", "linclass._registry",
          "linclass._atomic"}


def _modules():
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("")
        parts = ["linclass", *rel.parts]
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_package)
    return out


MODULES = _modules()


def _family(module):
    """linclass.linear.svm -> linclass.linear; linclass.cli -> linclass.cli."""
    parts = module.split(".")
    return ".".join(parts[:2])


def _imports(module):
    """(target module, imported names, line) of every import, at any depth."""
    path, is_package = MODULES[module]
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("linclass"):
                continue
            names = [a.name for a in node.names]
            # "from pkg import submodule" imports the submodule
            subs = [n for n in names if "%s.%s" % (target, n) in MODULES]
            for n in subs:
                yield "%s.%s" % (target, n), [], node.lineno
            rest = [n for n in names if n not in subs]
            if rest or not subs:
                yield target, rest, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("linclass"):
                    yield alias.name, [], node.lineno


def test_every_package_folder_has_a_docstring():
    missing = []
    for module, (path, is_package) in MODULES.items():
        if is_package:
            doc = ast.get_docstring(ast.parse(path.read_text()))
            if not doc or len(doc.split()) < 15:
                missing.append(module)
    assert not missing, "package folders without a docstring saying what lives there: %s" % missing


def test_no_private_names_across_families():
    bad = []
    for module in MODULES:
        family = _family(module)
        for target, names, line in _imports(module):
            if _family(target) == family or any(target == s or target.startswith(s + ".")
                                                for s in SHARED):
                continue
            private_module = [p for p in target.split(".")[1:] if p.startswith("_")]
            private_names = [n for n in names if n.startswith("_")]
            if private_module or private_names:
                bad.append("%s:%d imports %s from %s" % (module, line, private_names or "*",
                                                         target))
    assert not bad, "\n".join(bad)


def _resolve(target):
    """The module an import lands in (a name imported from a package lands in it)."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target


def test_no_import_cycles():
    graph = {m: sorted({_resolve(t) for t, _, _ in _imports(m)} - {m, ""}) for m in MODULES}
    # importing linclass.a.b also runs linclass.a/__init__: parents are implicit edges
    # that cannot form a cycle by themselves, so only explicit imports are followed
    state, stack, cycles = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in graph[m]:
            if state.get(n) == 1:
                cycles.append(stack[stack.index(n):] + [n])
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_top_level_stays_small():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 12, "linclass/ has %d modules at its top level: %s" % (len(top), top)


@pytest.mark.parametrize("name", sorted(linclass._MODELS))
def test_public_models_come_from_their_family(name):
    cls = getattr(linclass, name)
    assert cls.__module__.startswith("linclass.%s" % linclass._MODELS[name])
