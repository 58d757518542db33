"""Build serq, compiling the simulator with Cython when a C compiler is there (issue 10).

The simulator's modules (``serq/sim/*.py`` and ``serq/ir/arith.py``, which expressions call on
every evaluation) are written in Cython's pure-Python mode: the same ``.py`` files run
interpreted, or compiled to C extension modules beside them. This script compiles them when it
can. When Cython is missing, there is no working C compiler, or one module fails to compile,
the install still succeeds and that part stays interpreted, with a one-line notice.

With gcc 10 or later the build is profile-guided: an instrumented build runs the benchmark
programs and the examples once, and the extensions are built again with those counts (the run's
code spans every module, and the counts let gcc keep each function's hot paths apart from the
rest: about 6x fewer instruction-cache misses an event; benchmarks/README.md). It takes about
twice as long; ``SERQ_PGO=0`` builds the plain way, as does any failure of it (with a notice).

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
        guided = None
        if reason is None:
            if self.compiler.compiler_type == "unix":
                # -g0: no debug info (a third of the build time). -ffp-contract=off: the
                # compiler must not fuse `a * b + c` into one rounding (an FMA), which gcc
                # does by default where the target has one (aarch64, -march=native): every
                # product and sum is rounded as CPython rounds it, or reports would differ
                for ext in self.extensions:
                    ext.extra_compile_args = [*ext.extra_compile_args, "-g0",
                                              "-ffp-contract=off"]
            guided = self._build_profile_guided()
            if guided is not True:
                super().build_extensions()
            built = {ext.name: getattr(ext, "_serq_ok", False) for ext in self.extensions}
        failed = sorted(name for name, ok in built.items() if not ok)
        self._write_manifest(built, guided is True)
        if reason is not None:
            notice(f"{reason}: installing the interpreted engine")
        elif failed:
            notice(f"compiled engine built, except {', '.join(failed)} (interpreted)")
        else:
            how = {True: ", profile-guided", None: ""}.get(
                guided, f"; not profile-guided: {guided}")
            notice(f"compiled engine built ({len(built)} modules{how})")

    # -- the profile-guided build ----------------------------------------------------------
    def _build_profile_guided(self):
        """Build the extensions with gcc's profile-guided optimization: an instrumented
        build, one run of the training programs with it (``TRAINING``), and the build that
        uses the counts. True when that worked; None when not attempted (``SERQ_PGO=0``, a
        compiler other than gcc 10 or later, no training programs in the source tree); else
        why it failed, and the caller builds the plain way.

        Why: a run's code spans every module of the engine and most of it is touched once per
        event, so the instruction cache, not the instruction count, decides its speed (by
        callgrind's cache model on mgc_ps.sq: 17 instruction-cache misses an event, pyserq
        7). The counts let gcc put each function's rarely taken paths (Cython's error
        handling, most of the code) apart from the hot ones: about 6x fewer misses. The
        arithmetic is the same: no flag here changes how a float is rounded, and the whole
        conformance corpus runs against this build."""
        if os.environ.get(PGO_VARIABLE, "1") == "0" or self.compiler.compiler_type != "unix":
            return None
        programs = training_programs()
        if not programs or self._check_compiler(["-fprofile-partial-training"],
                                                GCC_ONLY) is not None:
            return None
        base = {ext.name: (list(ext.extra_compile_args), list(ext.extra_link_args))
                for ext in self.extensions}

        def build(compile_args, link_args):
            for ext in self.extensions:
                ext.extra_compile_args = [*base[ext.name][0], *compile_args]
                ext.extra_link_args = [*base[ext.name][1], *link_args]
                ext._serq_ok = False
            self.force = True  # (the sources did not change between the passes)
            super(BuildCompiled, self).build_extensions()
            return all(getattr(ext, "_serq_ok", False) for ext in self.extensions)

        self._remove_profiles()
        try:
            why = None
            if not build(["-fprofile-generate", "-fprofile-update=single"],
                         ["-fprofile-generate"]):
                why = "the instrumented build failed"
            else:
                why = self._train(programs)
            if why is None and not build(["-fprofile-use", "-fprofile-correction",
                                          "-fprofile-partial-training",
                                          "-Wno-missing-profile"], []):
                why = "the build with the profile failed"
        finally:
            self._remove_profiles()
            for ext in self.extensions:
                ext.extra_compile_args, ext.extra_link_args = base[ext.name]
        return True if why is None else why

    def _remove_profiles(self):
        """The counts of an earlier training (gcc would add to them)."""
        for folder, _, files in os.walk(self.build_temp):
            for name in files:
                if name.endswith(".gcda"):
                    os.remove(os.path.join(folder, name))

    def _train(self, programs):
        """Run the training programs with the instrumented extensions (which write their
        counts beside the object files): in a copy of the package made for it, its build
        record naming this build, so that nothing of an older build in the source tree is
        used. None when they ran; else why not."""
        import shutil
        import subprocess
        import tempfile
        leftovers = ["__pycache__", "*.c", "*.html", compiled.MANIFEST,
                     *(f"*{suffix}" for suffix in EXTENSION_SUFFIXES)]
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(os.path.join(HERE, "serq"), os.path.join(tmp, "serq"),
                            ignore=shutil.ignore_patterns(*leftovers))
            for ext in self.extensions:
                built = self.get_ext_fullpath(ext.name)
                shutil.copy2(built, os.path.join(tmp, *ext.name.split(".")[:-1],
                                                 os.path.basename(built)))
            with open(os.path.join(tmp, "serq", compiled.MANIFEST), "w") as f:
                f.writelines(self._manifest_lines({ext.name: True for ext in self.extensions}))
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(
                [tmp, *filter(None, [os.environ.get("PYTHONPATH")])]))
            env.pop(compiled.PURE_VARIABLE, None)
            try:
                p = subprocess.run([sys.executable, "-c", TRAIN_SCRIPT, tmp, *programs], cwd=tmp,
                                   env=env, text=True, capture_output=True, timeout=1800)
            except (OSError, subprocess.SubprocessError) as e:
                return f"the training run failed ({type(e).__name__})"
        if p.returncode != 0:
            last = (p.stderr.strip().splitlines() or ["no message"])[-1]
            return f"the training run failed ({last})"
        return None

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

    def _check_compiler(self, flags=(), source=""):
        """None when the C compiler compiles a trivial file (with ``flags``, after
        ``source``); else why not."""
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "probe.c")
            with open(src, "w") as f:
                f.write(f"{source}int serq_probe(void) {{ return 0; }}\n")
            try:
                self.compiler.compile([src], output_dir=tmp, extra_postargs=list(flags))
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

    def _manifest_lines(self, built, guided=False):
        """The build record's lines: each module and the SHA-256 of the source it was
        compiled from (``-`` when it was not), and a comment line that the profile-guided
        build adds (``serq --version`` shows it)."""
        lines = [GUIDED_LINE] if guided else []
        for name in compiled.modules(HERE):
            source = os.path.join(HERE, *name.split(".")) + ".py"
            digest = compiled.source_hash(source) if built.get(name) else "-"
            lines.append(f"{name} {digest}\n")
        return lines

    def _write_manifest(self, built, guided=False):
        """``serq/compiled.txt`` where the extensions go: the wheel's files, and the source
        tree too for an editable install (setuptools copies the extensions there)."""
        lines = self._manifest_lines(built, guided)
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


# The profile-guided build (BuildCompiled._build_profile_guided): SERQ_PGO=0 turns it off; it
# trains on these programs of the source tree (the run benchmarks and the examples: fifo, ps and
# delay stages, the step engine, pools, routers, trace replay), those that are there. The
# build record's first line then says so (serq.compiled.build_note).
PGO_VARIABLE = "SERQ_PGO"
TRAINING = ("benchmarks/programs/*.sq", "examples/*.sq", "examples/papers/*.sq")
GUIDED_LINE = (f"{compiled.NOTE_PREFIX}profile-guided "
               "(gcc, trained on the benchmarks and examples)\n")
# gcc 10 or later (-fprofile-partial-training), not clang (whose counts need llvm-profdata)
GCC_ONLY = "#if defined(__clang__) || !defined(__GNUC__)\n#error not gcc\n#endif\n"
# run by the instrumented engine in a copy of the package (argv: the copy's folder, then the
# programs): every training program once
TRAIN_SCRIPT = """
import os, sys
import serq
from serq import compiled
if not os.path.abspath(serq.__file__).startswith(os.path.abspath(sys.argv[1]) + os.sep):
    sys.exit("serq was imported from outside the training copy: " + serq.__file__)
if compiled.describe() != "compiled":
    sys.exit("the instrumented engine is not in use: " + compiled.describe())
ran = 0
for path in sys.argv[2:]:
    try:
        serq.run(serq.compile(path))
        ran += 1
    except Exception as e:  # a program this version cannot run: trained without it
        print(f"{path}: {type(e).__name__}: {e}", file=sys.stderr)
if not ran:
    sys.exit("no training program ran")
"""


def training_programs():
    import glob
    return [path for pattern in TRAINING
            for path in sorted(glob.glob(os.path.join(HERE, pattern)))]


def extensions():
    from setuptools import Extension
    return [Extension(name, [os.path.join(*name.split(".")) + ".py"])
            for name in compiled.modules(HERE)]


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildCompiled})
