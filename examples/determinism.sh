#!/bin/sh
# determinism.sh: does examples/vllm_engine.sq's batching keep every request's tokens bit for
# bit, and what would determinism cost it? (docs/numerics.md has the output of each line)
set -e
serq run examples/vllm_engine.sq --plan p.jsonl > /dev/null       # the step engine's plan
serq numerics check p.jsonl --kernels exact                      # invariant kernels: exit 0
serq numerics check p.jsonl --kernels default || true            # batch-dependent: exit 1
serq numerics check p.jsonl --kernels default --dvr 8            # decode/verify/rollback: exit 0
serq numerics cost examples/vllm_engine.sq --set lam=10 --fraction 0.5   # TTFT and throughput
