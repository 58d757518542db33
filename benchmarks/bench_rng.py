"""Draws per second of serq.sim.rng: random_f64, the integer reads and every sampler.

    .venv/bin/python benchmarks/bench_rng.py              # the default keystream
    .venv/bin/python benchmarks/bench_rng.py --python     # the scalar keystream
    .venv/bin/python benchmarks/bench_rng.py -n 2000000   # draws per measurement

Each line is the best of 3 runs of N calls on a fresh generator (the keystream generation
is included: it is amortised over the chunks a stream uses). The default keystream is numpy's
when serq.sim.rng runs interpreted, the scalar one (C code) when it runs compiled by Cython;
the first line says which. Not a test: run it on demand.
"""
import argparse
import time

from serq.sim import rng as R


def bench(label, make_call, n, repeat=3):
    best = None
    for _ in range(repeat):
        call = make_call()
        t = time.perf_counter()
        for _ in range(n):
            call()
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    print(f"{label:34s} {n / best:14,.0f} /s   {best / n * 1e9:8.1f} ns per call")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=1_000_000, help="calls per measurement")
    ap.add_argument("--python", action="store_true", help="force the scalar keystream")
    opts = ap.parse_args()
    backend = "python" if opts.python else R.Rng(0).backend
    slow = backend == "python" and not R.COMPILED     # the pure-Python keystream
    n = max(1, opts.n // 20) if slow else opts.n
    mode = "compiled" if R.COMPILED else "interpreted"
    print(f"serq.sim.rng {mode}, backend: {backend}, {n:,} calls per measurement")

    def fresh():
        return R.Rng(12345, backend=backend)

    bench("random_f64 (bound method)", lambda: fresh().random_f64, n)
    bench("next_u32", lambda: fresh().next_u32, n)
    bench("next_u64", lambda: fresh().next_u64, n)
    bench("range_u32(0, 999)", lambda: (lambda r: lambda: r.range_u32(0, 999))(fresh()), n)
    bench("range_f64(-1, 1)", lambda: (lambda r: lambda: r.range_f64(-1.0, 1.0))(fresh()), n)
    samplers = [
        ("sample_exp(rng, 2)", lambda r: lambda: R.sample_exp(r, 2.0)),
        ("sample_uniform(rng, 1, 3)", lambda r: lambda: R.sample_uniform(r, 1.0, 3.0)),
        ("sample_bernoulli(rng, 0.3)", lambda r: lambda: R.sample_bernoulli(r, 0.3)),
        ("sample_h2(rng, 2, 4)", lambda r: lambda: R.sample_h2(r, 2.0, 4.0)),
        ("sample_erlang(rng, 3, 6)", lambda r: lambda: R.sample_erlang(r, 3.0, 6.0)),
        ("sample_det(7)", lambda r: lambda: R.sample_det(7.0)),
        ("poisson_gap(rng, 0.8)", lambda r: lambda: R.poisson_gap(r, 0.8)),
        ("trace_pick(rng, 7)", lambda r: lambda: R.trace_pick(r, 7)),
        ("sample(rng, 'Exp', [2.0])", lambda r: lambda: R.sample(r, "Exp", [2.0])),
    ]
    for label, mk in samplers:
        bench(label, lambda mk=mk: mk(fresh()), n)


if __name__ == "__main__":
    main()
