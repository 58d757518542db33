"""Small programs whose deployment view is compared with pyserq 0.1.3's `draw`.

`regen.py` (run with the reference's Python) writes each one's SVG and TikZ into
`expected.json`; `tests/test_draw.py` compares serq.draw with them, byte for byte.
"""
PROGRAMS = {
    "fifo": "stage server : fifo(1); workload { arrive poisson(0.8); } session { run server (1); end; } run { horizon 10; }",
    "fifo_long_rate": "stage server : fifo(1); workload { arrive poisson(1000000); } session { run server (1); end; } run { horizon 10; }",
    "two_stages": "stage a : fifo(1); stage bb : ps(2); workload { arrive poisson(1); } session { run a (1); run bb (2); end; } run { horizon 10; }",
    "servers_delay_batch": "let c=3; stage a : fifo(c+1); stage d : delay; workload { arrive batch(3); } session { run d (2.5); run a (1); end; } run { horizon 10; }",
    "renewal": "stage a : fifo(1); workload { arrive renewal(~exp(2)); } session { run a (1); end; } run { horizon 10; }",
    "no_arrivals": "stage a : fifo(1); workload { arrive none; } session { run a (1); end; } run { horizon 10; }",
    "delay_uniform": "stage d : delay; workload { arrive poisson(1); } session { run d (~uniform(1,3)); end; } run { horizon 10; }",
    "delay_h2": "stage d : delay; workload { arrive poisson(1); } session { run d (~h2(1, 4)); end; } run { horizon 10; }",
    "delay_exp_shifted": "stage d : delay; workload { arrive poisson(1); } session { run d (~exp(1) + 1); end; } run { horizon 10; }",
    "delay_attr": "stage d : delay; workload { arrive poisson(1); init { set x = 3; } } session { run d (x); end; } run { horizon 10; }",
    "hold_one_pool": "pool p { cap 4; } stage a : fifo(1); workload { arrive poisson(1); } session { hold p (1) { run a (1); } end; } run { horizon 10; }",
    "hold_cached_long_name": "pool pool_with_long_name { cap 4; evict lru; } stage a : fifo(1); workload { arrive poisson(1); } session { hold pool_with_long_name (1) { run a (1); } cache (1); end; } run { horizon 10; }",
    "hold_two_stages": "pool p { cap 4; } stage a : fifo(1); stage b : ps(1); workload { arrive poisson(1); } session { hold p (1) { run a (1); run b (1); } end; } run { horizon 10; }",
    "hold_ps": "pool p { cap 4; } stage a : ps(1); workload { arrive poisson(1); } session { hold p (1) { run a (1); } end; } run { horizon 10; }",
    "hold_two_pools": "pool p { cap 4; } pool q { cap 8; block 2; } stage a : fifo(1); workload { arrive poisson(1); } session { hold p (1), q (2) { run a (1); } end; } run { horizon 10; }",
    "hold_two_pools_cached": "pool p { cap 4; block 2; } pool q { cap 5; } stage a : fifo(1); workload { arrive poisson(1); } session { hold q (1), p (1) { run a (1); } cache (1); end; } run { horizon 10; }",
    "preempt_block": "pool p { cap 4; preempt lifo; block 2; } stage a : fifo(1); workload { arrive poisson(1); } session { hold p (1) { run a (1); } end; } run { horizon 10; }",
    "step": "pool kv { cap 100; } stage e : step { budget 64; cost 0.01; memory kv; } workload { arrive poisson(1); } session { run e prefill (10); run e decode (5); end; } run { horizon 10; }",
    "loop_one": "stage a : fifo(1); workload { arrive closed(3); } session { loop { run a (1); } } run { horizon 10; }",
    "loop_three": "stage a : fifo(1); stage b : fifo(1); stage c : fifo(1); workload { arrive closed(3); } session { run a (1); loop { run b (1); run c (1); } } run { horizon 10; }",
    "branch": "stage a : fifo(1); stage b : ps(1); workload { arrive poisson(1); } session { branch with (0.5) { run a (1); } else { run b (1); } end; } run { horizon 10; }",
    "revisit": "stage a : fifo(1); stage b : ps(1); workload { arrive poisson(1); } session { run a (1); run b (1); run a (2); end; } run { horizon 10; }",
    "choose_station": "let N = 2; stage s[N] : fifo; workload { arrive poisson(0.5); session { request; } } server { choose j in N by (queue(s[j])); run s[j] (1); } run { horizon 100; }",
    "turns_more": "stage s : fifo; stage think : delay; workload { arrive closed(3); turn { set w = new * 0.001; } } session { loop { turn; run s (w); branch (more) { run think (think); } else { end; } } } run { horizon 100; }",
    "shared_run": "stage a : ps(2); stage b : ps(3); share bottleneck; workload { arrive poisson(1); } session { run a, b (1); end; } run { horizon 10; }",
    "wide_labels": "stage a_very_long_stage_name_here : fifo(1); stage cpu : ps(present <= 2 ? present : 2 + 0.5 * (present - 2)); workload { arrive poisson(1); } session { run a_very_long_stage_name_here (1); run cpu (1); end; } run { horizon 10; }",
    "renewal_folded": "stage a : fifo(1); workload { arrive renewal(2 * 0.5); } session { run a (1); end; } run { horizon 10; }",
    "loop_frame_exit": "pool kv { cap 100; evict lru; } stage svc : fifo(1); stage away : delay; workload { arrive closed(2); } session { set visits = 0; loop { hold kv (10) { run svc (1); } cache (10); set visits = visits + 1; branch (visits == 3) { end; } run away (~exp(6)); } } run { horizon 10; }",
    "branch_condition_text": "stage a : fifo(1); stage b : ps(1); workload { arrive poisson(1); init { set x = 1; } } session { run a(1); branch (x > 1 || x < 0) { run b (1); } end; } run { horizon 10; }",
    "nothing_run": "workload { arrive poisson(1); } session { set x = 1; end; } run { horizon 10; }",
}
