"""Write examples/vllm_replay.csv: a seeded synthetic multi-turn chat trace of the shape of
upstream's `short_base.csv` replay (formal.md §5.2: 333 sessions, 3,321 turns; the original is
not public). Deterministic: `python3 tools/make_vllm_replay_trace.py` rewrites the same bytes.

Each session has 1–19 turns (the counts are then nudged to total exactly 3,321). A turn's `new`
is the whole prompt: the previous prompt plus the previous answer plus 16–200 new user tokens,
so consecutive turns share a growing prefix; `out` is 8–200 tokens, `think` 0–30 time units,
and 5 % of turns are `forced` (their prefix must not be reused).
"""
import pathlib
import random

SESSIONS, TURNS, SEED = 333, 3321, 333
OUT = pathlib.Path(__file__).resolve().parents[1] / "examples" / "vllm_replay.csv"


def turn_counts(rng):
    counts = [rng.randint(1, 19) for _ in range(SESSIONS)]
    while sum(counts) != TURNS:
        i = rng.randrange(SESSIONS)
        if sum(counts) > TURNS and counts[i] > 1:
            counts[i] -= 1
        elif sum(counts) < TURNS and counts[i] < 19:
            counts[i] += 1
    return counts


def main():
    rng = random.Random(SEED)
    rows = ["session,turn,new,out,think,forced"]
    for s, n in enumerate(turn_counts(rng)):
        prompt, out = 0, 0
        for t in range(n):
            prompt = prompt + out + rng.randint(16, 200)
            out = rng.randint(8, 200)
            think = rng.randint(0, 30)
            forced = int(rng.random() < 0.05)
            rows.append(f"{s},{t},{prompt},{out},{think},{forced}")
    OUT.write_text("\n".join(rows) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(rows) - 1} turns)")


if __name__ == "__main__":
    main()
