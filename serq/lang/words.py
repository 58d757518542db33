"""The words of the language: keywords, functions, distributions, context variables,
retired words and their explanations. No word is reserved; these tables decide which names
a `def`, a parameter or a binding may take, and what a name means when linked."""

KEYWORDS = frozenset("""
admission admit arrivals arrive at batch bernoulli block bottleneck branch budget by cache
cap choose chunk closed cost decode def delay drop else end evict exclusive fifo first fits
from gauge grow growing hidden hold horizon in init latency lease let lifo link load loop
lru mark maxmin memory nic none observe on ordered poisson pool preempt prefill ps pull
queue release renewal request reserve reuse run seed serve server session set share spill
stage step sum to tool trace transfer turn use via warmup when with workload
""".split())

# source function name -> (IR Fun, argument kinds: "e" expression, "p" pool, "s" stage)
FUNCTIONS = {
    "min": ("Min", "ee"), "max": ("Max", "ee"), "pow": ("Pow", "ee"),
    "abs": ("Abs", "e"), "floor": ("Floor", "e"), "ceil": ("Ceil", "e"),
    "sqrt": ("Sqrt", "e"), "exp": ("Exp", "e"), "ln": ("Ln", "e"),
    "queue": ("Queue", "s"), "busy": ("Busy", "s"), "work": ("Work", "s"),
    "budget_left": ("BudgetLeft", "s"), "est_lambda": ("EstLambda", "s"),
    "est_rho": ("EstRho", "s"), "est_wait": ("EstWait", "s"),
    "used": ("Used", "p"), "free": ("Free", "p"), "cachedin": ("CachedIn", "p"),
    "holders": ("Holders", "p"), "queued": ("Queued", "p"),
    "price": ("Price", "see"),
}
CONST_FUNCTIONS = frozenset("min max abs floor ceil sqrt exp ln pow".split())
LIVE_FUNCTIONS = frozenset(n for n in FUNCTIONS if n not in CONST_FUNCTIONS)
FUNCTION_NAMES = frozenset(FUNCTIONS) | {"blocksize"}

DISTS = {"exp": ("Exp", 1), "det": ("Det", 1), "uniform": ("Uniform", 2),
         "erlang": ("Erlang", 2), "h2": ("H2", 2), "bernoulli": ("Bernoulli", 1)}

# source name -> IR CtxVar
CONTEXT = {"now": "Now", "waited": "Waited", "size": "Size", "age": "Age", "last": "Last",
           "waiting": "Queued", "present": "N", "residents": "Nres", "decoders": "Ndec",
           "kv_decode": "Kvb", "kv_prefill": "Kvp", "tokens": "Ntok", "prefilled": "Npre",
           "attention": "Attn", "decoding": "Decoding", "admission": "Admission",
           "remaining": "Remaining"}
CONTEXT_SOURCE = {v: k for k, v in CONTEXT.items()}

RENAMED_CONTEXT = {"queued": "waiting", "n": "present", "ntok": "tokens",
                   "ndec": "decoders", "npre": "prefilled", "nres": "residents",
                   "kvb": "kv_decode", "kvp": "kv_prefill", "attn": "attention"}

RETIRED = {
    "enter": "`enter` is now `hold`: `hold P (u) … at admission (x = e) { … } cache (ℓ);`",
    "admit": "`admit if … fit where x = e { … } keep (ℓ)` is now `hold … at admission "
             "(x = e) { … } cache (ℓ)` (the pool option `admit via` is unchanged)",
    "keep": "`keep` is now `cache`",
    "where": "`where x = e` is now `at admission (x = e)`",
    "fit": "`fit` is gone: the pools of a `hold` are the condition",
}


def retired_name(word: str) -> str:
    return f"`{word}` is a retired word and names nothing: {RETIRED[word]}"


SERVING_WORDS = ("prefill", "transfer", "decode", "tool", "gateway", "link")
