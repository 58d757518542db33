"""Which engine runs: the simulator compiled by Cython, or its Python source (issue 10).

The simulator (``serq/sim/*.py`` and ``serq/ir/arith.py``) is written in Cython's pure-Python
mode: the same files run interpreted, or compiled to C extension modules that ``pip install``
builds beside them when a C compiler is there (``setup.py``). Python's import system prefers an
extension module to a ``.py`` file of the same name; the finder below, installed first on
``sys.meta_path`` by ``serq/__init__.py``, overrides that choice in two cases:

- ``SERQ_PURE=1`` in the environment: every module runs from its source (the interpreted
  engine, for comparing the two modes and for debugging with Python's tools);
- a compiled module is *stale*: its source changed after it was built (an editable install
  leaves the extensions beside the sources, and ``git pull`` changes the sources only). The
  build records the SHA-256 of each source in ``serq/compiled.txt``; a module whose source no
  longer matches — or that the record does not name — runs from its source, with a one-line
  notice on stderr saying to rebuild. A stale extension is never used silently.

:func:`describe` says which engine runs, for ``serq --version`` and the benchmarks.
This module imports nothing heavy: it is imported with ``serq`` itself.
"""
import os
import sys

# The modules that setup.py compiles: every module of these packages but the ones named in
# EXCLUDED. The monitors and hooks run only when asked for, beside the run. states.py holds
# the Python names of constants that states.pxd gives the compiled modules. interrupts.py
# must stay interpreted: compiled code never runs CPython's evaluation loop, the only place
# where a pending signal (Ctrl-C) or serq.deep's interrupt of its worker thread is acted on,
# and a run compiled from end to end reaches it only by calling interrupts.poll(), which the
# event loop does every few hundred events (tests/test_cli_io.py, tests/sim/test_interrupts.py).
# Note also: calls between compiled functions do not count against Python's recursion limit
# (Cython's vectorcall skips the check), so a compiled module must not recurse as deep as the
# program nests (tests/sim/test_deep_nesting.py runs in both modes).
PACKAGES = {"serq.sim": None, "serq.ir": ("arith",)}
EXCLUDED = ("serq.sim.__init__", "serq.sim.monitors", "serq.sim.hooks",
            "serq.sim.interrupts", "serq.sim.states")
# Cython's directives for them (pure-Python mode; the exactness tests hold both modes equal)
DIRECTIVES = {"language_level": 3, "binding": True}
MANIFEST = "compiled.txt"
# the build record's comment lines start so; setup.py's profile-guided build writes one
NOTE_PREFIX = "# build: "
PURE_VARIABLE = "SERQ_PURE"

_HERE = os.path.dirname(os.path.abspath(__file__))
_state = {"manifest": None, "noticed": False, "note": None}
# module name -> "compiled" or the reason it runs interpreted, as the finder decided
chosen = {}


def modules(root=os.path.dirname(_HERE)):
    """The names of the modules to compile, found in the source tree under ``root``."""
    names = []
    for package, only in PACKAGES.items():
        folder = os.path.join(root, *package.split("."))
        leaves = only or sorted(f[:-3] for f in os.listdir(folder) if f.endswith(".py"))
        names += [f"{package}.{leaf}" for leaf in leaves if f"{package}.{leaf}" not in EXCLUDED]
    return names


def _cimported(line):
    """What a line cimports from serq, or None: the module and the names it takes, e.g.
    ``("serq.sim.stats", ["TimeAvg"])`` from ``from cython.cimports.serq.sim.stats import
    TimeAvg`` (a ``.py``) or from ``from serq.sim.stats cimport TimeAvg`` (a ``.pxd``). The
    module may be a package whose names are modules (``from cython.cimports.serq.ir import
    arith``): ``_cimported_files`` tells the two apart."""
    words = line.replace(",", " ").replace("(", " ").replace(")", " ").split()
    if len(words) < 4 or words[0] != "from":
        return None
    if words[1].startswith("cython.cimports.serq.") and words[2] == "import":
        module = words[1][len("cython.cimports."):]
    elif words[1].startswith("serq.") and words[2] == "cimport":
        module = words[1]
    else:
        return None
    names = [w for k, w in enumerate(words[3:]) if w != "as" and (k == 0 or words[2 + k] != "as")]
    return module, names


def _cimported_files(root, line):
    """The ``.py`` files of the serq modules a line cimports (see ``_cimported``)."""
    found = _cimported(line)
    if found is None:
        return []
    module, names = found
    path = os.path.join(root, *module.split("."))
    if os.path.exists(path + ".py") or not os.path.isdir(path):
        return [path + ".py"]
    return [p for p in (os.path.join(path, n + ".py") for n in names) if os.path.exists(p)]


def source_hash(path):
    """SHA-256 of a module's source (and of its ``.pxd``, when there is one, which types it),
    and of the sources of the serq modules it cimports (``from cython.cimports.serq...``): a
    compiled module uses the C types of those, so it is stale when one of them changed (the
    changed one runs interpreted, and its types are no longer there to import)."""
    import hashlib
    h = hashlib.sha256()
    todo, seen = [path], set()
    while todo:
        p = todo.pop(0)
        if p in seen:
            continue
        seen.add(p)
        for q in (p, p[:-3] + ".pxd"):
            facts = _source_facts(q)
            if facts is not None:
                data, cimported = facts
                h.update(data)
                todo += cimported
    return h.hexdigest()


_cimports_of = {}  # (a source file, its bytes) -> the files it cimports: parsed once


def _source_facts(path):
    """A source file's bytes and the ``.py`` files its lines cimport, in line order (None
    when there is no such file). The file is read each time (it may have changed); its
    cimports are parsed once for each content: every compiled module's check walks the files
    it cimports, most of them shared, and parsing them again for each took about 100 ms of
    the first ``serq.run`` in a process (issue 10)."""
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        data = f.read()
    key = (path, data)
    cimported = _cimports_of.get(key)
    if cimported is None:
        root = os.path.dirname(_HERE)
        cimported = []
        for line in data.decode("utf-8").splitlines():
            if "cimport" in line:  # (both forms _cimported reads name it)
                cimported += _cimported_files(root, line)
        _cimports_of[key] = cimported
    return data, cimported


def pure_requested():
    return os.environ.get(PURE_VARIABLE, "") not in ("", "0")


def _manifest():
    if _state["manifest"] is None:
        record = {}
        try:
            with open(os.path.join(_HERE, MANIFEST), encoding="utf-8") as f:
                for line in f:
                    if line.startswith(NOTE_PREFIX):
                        _state["note"] = line[len(NOTE_PREFIX):].strip()
                    elif not line.startswith("#"):
                        name, _, digest = line.strip().partition(" ")
                        record[name] = digest
        except OSError:
            pass
        _state["manifest"] = record
    return _state["manifest"]


def _extension(folder, leaf):
    from importlib.machinery import EXTENSION_SUFFIXES
    for suffix in EXTENSION_SUFFIXES:
        path = os.path.join(folder, leaf + suffix)
        if os.path.exists(path):
            return path
    return None


def _why_interpreted(name, source):
    """None when the compiled module beside ``source`` may be used; else why not."""
    if name in EXCLUDED:
        return "not compiled"  # an extension left by an older build: ignored, no notice
    if pure_requested():
        return f"{PURE_VARIABLE}=1"
    digest = _manifest().get(name)
    if digest is None or digest == "-":
        return "stale: not built from this source tree"
    if digest != source_hash(source):
        return "stale: its source changed after it was compiled"
    return None


def _notice(name, reason):
    if _state["noticed"] or not reason.startswith("stale"):
        return
    _state["noticed"] = True
    rel = name.replace(".", "/") + ".py"
    sys.stderr.write(f"serq: {rel} changed since the engine was compiled; running the changed "
                     f"modules interpreted (rebuild: pip install -e . or make)\n")


class Chooser:
    """The meta-path finder: for a compiled module, the extension or the source (see above)."""

    def find_spec(self, fullname, path, target=None):
        package, _, leaf = fullname.rpartition(".")
        if package not in PACKAGES or path is None:
            return None
        for folder in path:
            source = os.path.join(folder, leaf + ".py")
            if not os.path.exists(source):
                continue
            if _extension(folder, leaf) is None:
                return None  # no extension: the usual finder loads the source
            reason = _why_interpreted(fullname, source)
            if reason is None:
                chosen[fullname] = "compiled"
                return None  # the usual finder loads the extension
            chosen[fullname] = reason
            _notice(fullname, reason)
            from importlib.util import spec_from_file_location
            return spec_from_file_location(fullname, source)
        return None


def install():
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, Chooser) for f in sys.meta_path):
        sys.meta_path.insert(0, Chooser())


def is_compiled(module):
    """True when ``module`` (a module object) is an extension module."""
    from importlib.machinery import EXTENSION_SUFFIXES
    return (getattr(module, "__file__", None) or "").endswith(tuple(EXTENSION_SUFFIXES))


def status():
    """{module name: "compiled" or why it runs interpreted}, for every module that setup.py
    compiles: what was chosen for the ones already imported, what would be for the others."""
    out = {}
    for name in modules():
        module = sys.modules.get(name)
        if module is not None:
            out[name] = "compiled" if is_compiled(module) else chosen.get(name, "not compiled")
            continue
        package, _, leaf = name.rpartition(".")
        folder = os.path.join(os.path.dirname(_HERE), *package.split("."))
        if _extension(folder, leaf) is None:
            out[name] = "not compiled"
        else:
            out[name] = _why_interpreted(name, os.path.join(folder, leaf + ".py")) or "compiled"
    return out


def describe(build=False):
    """One line: ``compiled``, ``interpreted (why)`` or ``partly compiled (...)``; with
    ``build``, followed by how the extensions in use were built when the build record says
    (``, profile-guided (...)``: ``serq --version``, the Makefile's line after an install)."""
    if build:
        engine = describe()
        note = None if engine.startswith("interpreted") else build_note()
        return f"{engine}, {note}" if note else engine
    st = status()
    compiled = [n for n, s in st.items() if s == "compiled"]
    if len(compiled) == len(st):
        return "compiled"
    if not compiled:
        reasons = sorted(set(st.values()))
        why = reasons[0] if len(reasons) == 1 else "; ".join(reasons)
        if why == "not compiled":
            why = "not compiled: no C compiler or Cython when it was installed"
        return f"interpreted ({why})"
    rest = ", ".join(n.rpartition(".")[2] for n, s in st.items() if s != "compiled")
    return f"partly compiled ({len(compiled)} of {len(st)} modules; interpreted: {rest})"


def build_note():
    """What the build record says of how the extensions were built (``profile-guided
    (...)``, setup.py), or None."""
    _manifest()
    return _state["note"]


if __name__ == "__main__":  # the Makefile's list of what the install compiles (its stamps)
    root = os.path.dirname(_HERE)
    print(" ".join(os.path.relpath(os.path.join(root, *n.split(".")) + ext, root)
                   for n in modules() for ext in (".py", ".pxd")
                   if os.path.exists(os.path.join(root, *n.split(".")) + ext)))
