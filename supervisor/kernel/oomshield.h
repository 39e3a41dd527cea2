/* The kernel OOM killer's pick. An agent that exhausts the machine's
 * memory with many processes, each a little smaller than harness-exec,
 * would make harness-exec the largest and the killer's choice: the
 * session would end with neither its anchor nor session_end. So the
 * agent's processes are put first in line (oom_score_adj, proc(5)), and
 * no process of the session may write an oom_score_adj (the pipeline's
 * harness:oom-score). harness-exec keeps its own: at -1000 (never
 * chosen) a harness-exec that grew by a fault of its own would have the
 * killer end the machine's other programs instead. */
#ifndef HX_OOMSHIELD_H
#define HX_OOMSHIELD_H

/* The agent's oom_score_adj: half of the memory the killer weighs
 * (the machine's, or a cgroup's limit) is added to each of its
 * processes' size, so one of them is always chosen before harness-exec
 * unless harness-exec holds half of it. */
#define HX_OOM_AGENT_ADJ 500

/* In the agent's first process, before its capabilities go (system
 * calls only): its oom_score_adj raised to HX_OOM_AGENT_ADJ, never
 * lowered. With CAP_SYS_RESOURCE the kernel also makes that value the
 * least the process and its children may set (oom_score_adj_min); an
 * ordinary user's agent could lower it again by a write, which the
 * pipeline refuses. Returns 0 or -errno. */
int hx_oom_expose_agent(void);

/* The calling process's oom_score_adj in *out. 0 or -errno. */
int hx_oom_adj(int *out);

#endif
