"""The stability numbers of formal.md §6.7, reproducibly (docs/stability.md).

    .venv/bin/python tools/stability.py [--out docs] [--seeds 3] [--quick] [--keep-dai]

Writes OUT/stability.json (every number) and OUT/stability.png (the plot; needs matplotlib,
the `plot` extra) and prints a summary. Deterministic: fixed seeds, fixed grids. Takes a few
minutes (--quick: shorter horizons and fewer rates, for a look).
"""
import argparse
import json
import pathlib
import sys
import time
from fractions import Fraction as F

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from serq.claims import stability as S  # noqa: E402

DRIFT_CASES = [  # (prompt, output, b_max, law {k: P(k)}, B, rule): scaled job-list chains
    (2, 6, 4, {0: F(3, 4), 1: F(1, 4)}, 40, "sarathi"),
    (3, 9, 6, {0: F(2, 3), 1: F(1, 3)}, 60, "sarathi"),
    (3, 9, 6, {0: F(7, 10), 1: F(1, 5), 2: F(1, 10)}, 48, "sarathi"),
    (4, 4, 4, {0: F(3, 5), 1: F(2, 5)}, 40, "rad"),
    (8, 8, 8, {0: F(2, 3), 1: F(1, 3)}, 64, "rad"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "docs"))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--keep-dai", action="store_true",
                    help="reuse the Dai rows of OUT/stability.json (they take the longest)")
    a = ap.parse_args()
    seeds = list(range(1, a.seeds + 1))
    out = {"dai_lambda_star": S.DAI_LAMBDA_STAR, "bari_lambda_star": S.BARI_LAMBDA_STAR,
           "bari_mean_tokens": S.bari_mean_tokens(), "seeds": seeds}
    t0 = time.time()

    def note(paper, rate, h, seed):
        print(f"  {paper} λ={rate} horizon={h:g} seed={seed} ({time.time() - t0:.0f} s)",
              file=sys.stderr)

    if a.quick:
        dai_rates, dai_h = [1.6, 2.6], [1e7, 2e7]
        bari_rates, bari_h = [28, 44], [5e6, 1e7]
    else:
        dai_rates, dai_h = [1.6, 1.9, 2.1, 2.3, 2.6], [4e7, 8e7]
        bari_rates, bari_h = [28, 32, 35, 38, 42], [5e7, 1e8]
    if a.keep_dai:
        out["dai"] = json.loads((pathlib.Path(a.out) / "stability.json").read_text())["dai"]
    else:
        out["dai"] = S.threshold_sweep("dai", dai_rates, dai_h, seeds, note)
    out["bari"] = S.threshold_sweep("bari", bari_rates, bari_h, seeds, note)
    out["drift"] = []
    for prompt, output, bmax, law, B, rule in DRIFT_CASES:
        r = S.drift_check(prompt, output, bmax, law, B, rule)
        out["drift"].append({
            "rule": rule, "prompt": prompt, "output": output, "bmax": bmax, "B": B,
            "law": {str(k): str(v) for k, v in law.items()}, "states": r["states"],
            "off_F": r["off_F"], "epsilon": str(r["epsilon"]),
            "worst_drift": str(r["worst_drift"]), "holds": r["holds"],
            "max_V_on_F": r["max_V_on_F"], "bound_on_F": r["bound_on_F"],
            "F_bound_holds": r["F_bound_holds"]})
    import serq
    out["kong"] = []
    for seed in range(1, 6):
        rep = serq.run(serq.compile(str(S.PAPERS / "kong_svf.sq"), seed=seed))
        tel, lower, ratio, bound = S.kong_ratio(rep)
        out["kong"].append({"seed": seed, "TEL": tel, "lower_bound": lower, "ratio": ratio,
                            "bound": bound})
    outdir = pathlib.Path(a.out)
    (outdir / "stability.json").write_text(json.dumps(out, indent=1) + "\n")
    plot(out, outdir / "stability.png")
    summary(out)


def plot(out, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, key, star, title in ((axes[0], "dai", out["dai_lambda_star"],
                                  "Dai, Sarathi (Poisson)"),
                                 (axes[1], "bari", out["bari_lambda_star"],
                                  "Bari, RAD (Poisson)")):
        rows = out[key]
        for h in sorted({r[1] for r in rows}):
            pts = [r for r in rows if r[1] == h]
            unit = 1e5 if key == "dai" else 1e6
            ax.errorbar([r[0] for r in pts], [r[2] for r in pts],
                        yerr=[0 if r[3] != r[3] else r[3] for r in pts], marker="o",
                        capsize=3, label=f"horizon {h / unit:g} s")
        ax.axvline(star, color="grey", linestyle="--", label=f"λ* ≈ {star:.3f} req/s")
        ax.set_xlabel("arrival rate λ (requests/s)")
        ax.set_ylabel("mean in system, 2nd half (95% CI)")
        ax.set_title(title)
        ax.legend(fontsize=8)
    k = out["kong"]
    ax = axes[2]
    ax.bar([str(r["seed"]) for r in k], [r["ratio"] for r in k], color="tab:green")
    ax.axhline(k[0]["bound"], color="tab:red", linestyle="--",
               label=f"competitive bound {k[0]['bound']:.4f}")
    ax.set_ylim(0, k[0]["bound"] * 1.1)
    ax.set_xlabel("seed")
    ax.set_ylabel("TEL(SVF) / lower bound")
    ax.set_title("Kong, SVF: ratio vs bound")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def summary(out):
    print(f"Dai λ* = {out['dai_lambda_star']:.4f} req/s; Bari λ* = {out['bari_lambda_star']:.4f}"
          f" req/s (E[tokens] = {out['bari_mean_tokens']:.2f})")
    for key in ("dai", "bari"):
        for rate, h, m, ci in out[key]:
            print(f"  {key:4} λ = {rate:5g}  horizon {h:8g}  mean in system {m:9.2f} ± {ci:.2f}")
    for d in out["drift"]:
        print(f"  drift {d['rule']:7} L={d['prompt']}+{d['output']} bmax={d['bmax']} B={d['B']}: "
              f"{d['states']} states, {d['off_F']} off F, worst drift {d['worst_drift']} vs "
              f"-ε = -{d['epsilon']}: {'holds' if d['holds'] else 'FAILS'}; max V on F "
              f"{d['max_V_on_F']} < {d['bound_on_F']}: {d['F_bound_holds']}")
    for r in out["kong"]:
        print(f"  kong seed {r['seed']}: TEL {r['TEL']:.0f} / lower bound "
              f"{r['lower_bound']:.0f} = {r['ratio']:.4f} <= {r['bound']:.4f}")


if __name__ == "__main__":
    main()
