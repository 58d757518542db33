"""serq.numerics: batch-invariant inference, for real, on a tiny model
(batch-invariance.md §4). Schedule-explicit reductions, kernel sets (``exact``, ``tiled``,
``default``), a seeded tiny causal LM with a paged KV cache, greedy decoding with margin
certificates, a reference decoder, decode/verify/rollback, and a checker that replays the step
engine's own plans (``serq run FILE --plan``, ``serq numerics check``).

numpy only. Layer: above serq.sim/serq.report (it reads plans, never imports the simulator).
"""
from serq.numerics.checker import CheckReport, check_plan
from serq.numerics.decode import MarginCert, drift, greedy
from serq.numerics.dvr import DVRServer
from serq.numerics.kernels import StepInfo, get_kernels, kernel_names
from serq.numerics.model import TinyCausalLM, TinyConfig, prompt_tokens
from serq.numerics.reference import ReferenceDecoder
from serq.numerics.trace import Plan, PlanError, StepPlan, read_plan, synthetic_plan, write_plan

__all__ = ["CheckReport", "check_plan", "MarginCert", "drift", "greedy", "DVRServer", "StepInfo",
           "get_kernels", "kernel_names", "TinyCausalLM", "TinyConfig", "prompt_tokens",
           "ReferenceDecoder", "Plan", "PlanError", "StepPlan", "read_plan", "synthetic_plan",
           "write_plan"]
