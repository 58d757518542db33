"""Build serq, compiling the simulator with Cython when a C compiler is there (issue 10).

The simulator's modules (``serq/sim/*.py`` and ``serq/ir/arith.py``, which expressions call on
every evaluation) are written in Cython's pure-Python mode: the same ``.py`` files run
interpreted, or compiled to C extension modules beside them. This script compiles them when it
can. When Cython is missing, there is no working C compiler, or one module fails to compile,
the install still succeeds and that part stays interpreted, with a one-line notice.

Each build writes ``serq/compiled.txt`` beside the extensions: one line per module, its name,
the SHA-256 of the source it was compiled from (or ``-`` when it was not compiled). At import,
``serq.compiled`` compares that hash with the source's: a compiled module older than its source
is not used (an editable install leaves the extensions beside the sources; see
``serq/compiled.py``). Everything else about the package is in ``pyproject.toml``.
"""
import os
import sys

from importlib.machinery import EXTENSION_SUFFIXES

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def _load_compiled():
    """``serq/compiled.py`` (the module list, the hash), loaded by path: serq is not installed
    yet, and that module imports nothing but ``os`` and ``sys``."""
    from importlib.util import module_from_spec, spec_from_file_location
    spec = spec_from_file_location("_serq_compiled", os.path.join(HERE, "serq", "compiled.py"))
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


compiled = _load_compiled()


def notice(text):
    """The build's one-line notices, on stderr (pip shows them with ``-v``)."""
    print(f"serq: {text}", file=sys.stderr, flush=True)


class BuildCompiled(build_ext):
    """``build_ext`` that turns the listed modules into C with Cython first, and treats every
    failure (no Cython, no compiler, a module that does not compile) as "stay interpreted"."""

    def run(self):
        if self.parallel is None:  # the modules compile independently
            self.parallel = os.cpu_count() or 1
        # setuptools builds in build_lib and copies to the source tree afterwards (clearing
        # `inplace` meanwhile): the record goes to the source tree too in both cases
        self._to_source = bool(self.inplace or getattr(self, "editable_mode", False))
        super().run()

    def build_extensions(self):
        built = {}
        try:
            reason = self._cythonize()
        except Exception as e:  # noqa: BLE001  Cython's own errors are of many kinds
            reason = f"Cython failed ({type(e).__name__}: {e})"
        if reason is None:
            reason = self._check_compiler()
        if reason is None:
            if self.compiler.compiler_type == "unix":
                # -g0: no debug info (a third of the build time). -ffp-contract=off: the
                # compiler must not fuse `a * b + c` into one rounding (an FMA), which gcc
                # does by default where the target has one (aarch64, -march=native): every
                # product and sum is rounded as CPython rounds it, or reports would differ
                for ext in self.extensions:
                    ext.extra_compile_args = [*ext.extra_compile_args, "-g0",
                                              "-ffp-contract=off"]
            super().build_extensions()
            built = {ext.name: getattr(ext, "_serq_ok", False) for ext in self.extensions}
        failed = sorted(name for name, ok in built.items() if not ok)
        self._write_manifest(built)
        if reason is not None:
            notice(f"{reason}: installing the interpreted engine")
        elif failed:
            notice(f"compiled engine built, except {', '.join(failed)} (interpreted)")
        else:
            notice(f"compiled engine built ({len(built)} modules)")

    def _cythonize(self):
        try:
            from Cython.Build import cythonize
        except ImportError:
            return "Cython is not installed"
        translated = cythonize(
            self.extensions, quiet=True, nthreads=self.parallel or 1, language_level=3,
            compiler_directives=compiled.DIRECTIVES)
        for ext, c in zip(self.extensions, translated):  # keep setuptools' Extension objects
            ext.sources = c.sources
            # and what a module's `# distutils:` header asks for (rng.py's compile flags)
            ext.extra_compile_args = [*ext.extra_compile_args, *c.extra_compile_args]
        return None

    def _check_compiler(self):
        """None when the C compiler compiles a trivial file; else why not."""
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "probe.c")
            with open(src, "w") as f:
                f.write("int serq_probe(void) { return 0; }\n")
            try:
                self.compiler.compile([src], output_dir=tmp)
            except Exception as e:  # noqa: BLE001  CompileError, DistutilsExecError, OSError
                return f"no working C compiler ({type(e).__name__})"
        return None

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
            ext._serq_ok = True
        except Exception as e:  # noqa: BLE001
            notice(f"{ext.name} did not compile ({type(e).__name__}: {e}); it stays interpreted")
            ext._serq_ok = False

    def _write_manifest(self, built):
        """``serq/compiled.txt`` where the extensions go: the wheel's files, and the source
        tree too for an editable install (setuptools copies the extensions there)."""
        lines = []
        for name in compiled.modules(HERE):
            source = os.path.join(HERE, *name.split(".")) + ".py"
            digest = compiled.source_hash(source) if built.get(name) else "-"
            lines.append(f"{name} {digest}\n")
        self._manifest = os.path.join(self.build_lib, "serq", compiled.MANIFEST)
        folders = [os.path.dirname(self._manifest)]
        if self._to_source:
            folders.append(os.path.join(HERE, "serq"))
        if self._to_source:  # extensions of modules no longer compiled: not left beside them
            for name in compiled.EXCLUDED:
                leaf = os.path.join(HERE, *name.split("."))
                for suffix in EXTENSION_SUFFIXES:
                    if os.path.exists(leaf + suffix):
                        os.remove(leaf + suffix)
        for folder in folders:
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, compiled.MANIFEST), "w") as f:
                f.writelines(lines)

    def get_outputs(self):
        manifest = getattr(self, "_manifest", None)
        return super().get_outputs() + ([manifest] if manifest else [])


def extensions():
    from setuptools import Extension
    return [Extension(name, [os.path.join(*name.split(".")) + ".py"])
            for name in compiled.modules(HERE)]


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildCompiled})
