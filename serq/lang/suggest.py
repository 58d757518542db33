"""Near-name suggestions for `help: did you mean …?` lines."""
from __future__ import annotations


def levenshtein(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def closest(name: str, candidates) -> str | None:
    """The unique nearest candidate within the reference's distance (1 for names shorter
    than 4 characters, else 2), or None."""
    limit = 1 if len(name) < 4 else 2
    best, best_d, unique = None, limit + 1, False
    for c in dict.fromkeys(candidates):
        if c == name:
            continue
        d = levenshtein(name, c)
        if d < best_d:
            best, best_d, unique = c, d, True
        elif d == best_d:
            unique = False
    return best if unique and best_d <= limit else None
