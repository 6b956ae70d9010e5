/*
 * engine.h - the scheduling engine: incremental events in, decisions out.
 *
 * The engine owns the cluster state it has been told about: nodes, queues and
 * jobs with their pods.  It does no I/O, keeps no globals and reads no clock:
 * every call that needs the time takes `now`.  Callers feed changes as they
 * happen (a node added, a job submitted, a pod finished) and call
 * mu_engine_cycle() to get decisions back as data.
 *
 * A bind decision is also applied to the engine's state at once ("assumed"),
 * as kube-scheduler assumes pods: the caller reports failures with
 * mu_engine_pod_unbind() if the bind does not go through.
 */
#ifndef MUSTER_ENGINE_H
#define MUSTER_ENGINE_H

#include "muster/error.h"
#include "muster/model.h"

typedef struct mu_engine mu_engine_t;
typedef int32_t mu_id_t; /* dense id of a node, queue or job; -1 = none */

/* --- Scoring policies ---------------------------------------------------- */

/* What a score function may look at for one candidate node. */
typedef struct mu_node_view {
	const mu_res_t *alloc;   /* allocatable; MU_RES_GPU = device count */
	const mu_res_t *free;    /* free; MU_RES_GPU = fully free devices,
	                          * MU_RES_GPU_MILLI = free milli-GPU summed */
	int ngpu;                /* devices */
	const int16_t *gpu_free; /* per device free milli-GPU (0..1000) */
	const char *gpu_model;   /* the node's GPU model, NULL if none */
	/* Bound pods by GPU request: [0] shares of one GPU, [k] k whole GPUs
	 * (k <= MU_MAX_GPUS); NULL when not known.  GPU clustering reads it. */
	const int32_t *gpu_kinds;
} mu_node_view_t;

/* Size classes of mu_supply_model_t.part: a partly used device with f
 * free milli-GPU (1..999) is in class f / 100. */
#define MU_SUPPLY_CLASSES 10

/* The free GPUs of the schedulable nodes of one GPU model, summed over
 * the cluster (src/engine/supply.c). */
typedef struct mu_supply_model {
	const char *model;      /* the nodes' GPU model; NULL: nodes without one */
	int32_t nodes;          /* schedulable nodes */
	int32_t devices;        /* their devices */
	int32_t whole;          /* whole free devices */
	/* nodes_whole[k]: nodes with at least k whole free devices
	 * ([0] = nodes) */
	int32_t nodes_whole[MU_MAX_GPUS + 1];
	int32_t part[MU_SUPPLY_CLASSES];       /* partly used devices by class */
	int64_t part_milli[MU_SUPPLY_CLASSES]; /* their free milli-GPU */
} mu_supply_model_t;

/* Cluster-wide GPU supply, kept by the engine at every bind, release and
 * node change when the policy asks for it (MU_SCORE_SUPPLY): one entry per
 * GPU model seen on a node, in the order first seen, and their sum. */
typedef struct mu_supply {
	mu_supply_model_t *models;
	int32_t nmodels, cap;
	mu_supply_model_t all;
} mu_supply_t;

/* The cluster's GPU devices per model, which every engine keeps (counts
 * only, src/engine/gpumodels.c): the schedulable nodes' devices summed per
 * model, moved at every node change (add, remove, cordon, uncordon, a new
 * model or device count) in O(models), never at a bind.  With a finished
 * mix as the policy's state (MU_SCORE_MIX), press holds each model's
 * pressure by the mix's demand (muster's press_over, mu_muster_params_t),
 * brought up to date before the engine scores; pressed is false when
 * there is no pressure to read (no mix, no devices, no GPU demand, or no
 * shape that names a model: every pressure 0). */
typedef struct mu_gpu_models {
	const char **model;  /* interned names; NULL: nodes without a model */
	int64_t *devices;    /* schedulable devices of the model */
	double *press;       /* its pressure (valid when pressed) */
	int32_t n, cap;
	bool pressed;
} mu_gpu_models_t;

/* What a score function gets besides the node: the policy's own state
 * (mu_engine_config_t.score_state, e.g. a workload's pod-shape mix),
 * 64 fresh pseudo-random bits per candidate, drawn from the engine's seed,
 * the cluster's GPU supply (NULL unless the policy's flags carry
 * MU_SCORE_SUPPLY) and its devices per model (NULL outside an engine, as
 * in the rollouts). */
typedef struct mu_score_ctx {
	const void *state;
	uint64_t random;
	const mu_supply_t *supply;
	const mu_gpu_models_t *models;
} mu_score_ctx_t;

/* A scoring policy.  Higher scores win; ties go to the lower node id. */
typedef struct mu_score_ops {
	const char *name;
	/* Scores placing one pod with request `req` on `node`, which fits.
	 * Must depend only on ctx, that node and req. */
	double (*score)(const mu_score_ctx_t *ctx, const mu_node_view_t *node,
			const mu_res_t *req);
	/* Optional: the device of `node` (the node that won) for a GPU-share
	 * pod (req MU_RES_GPU_MILLI > 0).  Returns a device index whose free
	 * share holds the request; anything else, or NULL here, means the
	 * engine's choice (best fit: the least free device that holds it).
	 * Must depend only on ctx, that node and req. */
	int (*pick_device)(const mu_score_ctx_t *ctx, const mu_node_view_t *node,
			   const mu_res_t *req);
	/* MU_SCORE_* flags.  Without MU_SCORE_RANDOM a node's score for a
	 * request is taken to change only when the node does, and the engine
	 * keeps nodes in a heap by score instead of scanning them all. */
	unsigned flags;
} mu_score_ops_t;

#define MU_SCORE_RANDOM 1u /* score reads ctx->random: never cached */
#define MU_SCORE_MIX 2u    /* ctx->state must be a finished mu_workload_mix_t */
/* The score reads ctx->supply, which changes with every node: the engine
 * keeps the supply and scans the nodes instead of caching scores. */
#define MU_SCORE_SUPPLY 16u
/* Among nodes with the same allocatable vector and device count, the score
 * reads only free CPU, free memory and the summed free GPU share, and never
 * rises as one of them grows (PACKS) or never falls (SPREADS).  The engine
 * then finds the best node for a request it has not seen in about log n
 * (src/engine/fittree.c). */
#define MU_SCORE_PACKS 4u
#define MU_SCORE_SPREADS 8u

extern const mu_score_ops_t mu_score_binpack; /* most-allocated, GPU first */
extern const mu_score_ops_t mu_score_spread;  /* least-allocated */

/* GPU placement policies of the FGD paper (ATC'23) and muster's own; see
 * docs/evaluation.md (score_gpu.c, score_frag.c). */
extern const mu_score_ops_t mu_score_random;     /* any node that fits */
extern const mu_score_ops_t mu_score_dotprod;    /* free x request, largest */
extern const mu_score_ops_t mu_score_clustering; /* same GPU request together */
extern const mu_score_ops_t mu_score_packing;    /* shared GPUs, busy nodes,
                                                  * then idle nodes */
extern const mu_score_ops_t mu_score_bestfit;    /* least left after */
/* These take a finished mu_workload_mix_t as their state. */
extern const mu_score_ops_t mu_score_fgd;        /* least fragmentation growth */
extern const mu_score_ops_t mu_score_muster;     /* muster's GPU policy */
/* "muster-rollout": muster's functions; its name tells a harness to fill
 * the mix's mu_muster_params_t by mu_rollout_choose (score_rollout.c). */
extern const mu_score_ops_t mu_score_muster_rollout;
/* "muster-horizon": the same, its settings chosen again at checkpoints of
 * the arrivals from the cluster's free capacity then (receding horizon,
 * mu_rollout_horizon_t; docs/evaluation.md, "Fourteenth round"). */
extern const mu_score_ops_t mu_score_muster_horizon;
/* "muster-mg": the tenth round's option, now muster's own behaviour; the
 * same functions as mu_score_muster under the old name (score_frag.c). */
extern const mu_score_ops_t mu_score_muster_mg;
/* "muster-supply": muster with shares placed by the cluster's supply of
 * whole devices per GPU model (score_frag.c; an option, see
 * docs/evaluation.md, "Thirteenth round"). */
extern const mu_score_ops_t mu_score_muster_supply;

#define MU_MIX_MAX_MODELS 63 /* distinct GPU models a mix can name */

/* The settings of muster's share placement (score_frag.c, "muster"):
 *   - mg_multi, mg_large: a share of mg_large milli-GPU or more is placed
 *     as a whole-GPU pod is (by the CPU-aware growth) when pods of two or
 *     more GPUs carry at least mg_multi of the mix's GPU demand (0: always,
 *     above 1: never);
 *   - reserve: breaking a whole device of a node that keeps no more than
 *     reserve x devices x the mix's whole-GPU demand share whole devices
 *     costs 100 points (0: no reserve);
 *   - reserve_below: only shares below this many milli-GPU pay the reserve
 *     (1001: every share);
 *   - best_fit (the fifteenth round): a share placed by points goes by
 *     the device it leaves least free (100 points less a point per 10
 *     milli-GPU left) instead of FGD's points, the same two corrections
 *     on top (0: FGD's points);
 *   - whole_fgd (the fifteenth round): pods of whole GPUs go by FGD's
 *     points, as FGD places them, instead of the CPU-aware growth (0);
 *   - demand_multi (the sixteenth round): shares placed by points are
 *     scored with the measure weighing each shape of the mix by its share
 *     of the GPU demand instead of its share of the pods when pods of two
 *     or more GPUs carry at least demand_multi of the mix's GPU demand
 *     (0: always, above 1: never);
 *   - mem_multi (the seventeenth round): pods of whole GPUs and CPU-only
 *     pods, placed by the CPU-aware growth, count free memory as a
 *     capacity as well as free CPU (a shape asking mem uses at most
 *     free memory / mem of its pods' GPUs) when pods of two or more GPUs
 *     carry at least mem_multi of the mix's GPU demand (0: always, above
 *     1: never); a shape's memory is the mean of its pods';
 *   - cpu_fit (the seventeenth round): when pods that take no GPU are at
 *     least cpu_fit of the mix's pods, a CPU-only pod's ties in the
 *     CPU-aware growth (every node where it strands no GPU, say) go to the
 *     node it leaves the least free CPU on, not the lower node id (0:
 *     always, above 1: never);
 *   - press_over (the seventeenth round): a GPU pod avoids nodes whose
 *     GPU model the mix's model-tied pods over-ask: with the cluster's
 *     devices per model known (in an engine its own count,
 *     mu_gpu_models_t; outside one, as in the rollouts, the sums given to
 *     mu_workload_mix_supply), a node of a model
 *     whose pressure (the GPU demand of the shapes that name models, each
 *     spread evenly over the devices of the models it may use, per device
 *     of the model, over the cluster's demand per device) exceeds
 *     press_over scores PRESS_COST per unit above it less; pods tied to
 *     one model see the same cost on every node they fit, and shapes that
 *     name no model press on none (0: off);
 *   - spread_cpu (the seventeenth round; on by default since the
 *     eighteenth): a share below mg_large placed by points gains 100 points on a whole device of a node that keeps
 *     at least spread_cpu cores per free GPU once it is placed, so that
 *     small shares break the whole devices of CPU-rich nodes and leave
 *     the CPU-poor nodes' whole devices to the large shares (0: off),
 *     where shares carry at least spread_shares of the mix's GPU demand
 *     and pods without GPUs are at most spread_cpu_only of its pods and
 *     pods tied to GPU models carry at most spread_models of its demand;
 *   - cpu_reserve (the nineteenth round): where pods that take no GPU are
 *     at least cpu_reserve_only of the mix's pods, shares pay the reserve
 *     with cpu_reserve in place of reserve (0.75 -> 1.0 on openb's
 *     cpu250 and cpu500); the rollouts' candidates set the reserve themselves and
 *     turn it off (cpu_reserve_only above 1: never);
 *   - fit_reserve (the twentieth round): where pods of two or more GPUs
 *     carry at least fit_multi of the mix's GPU demand, shares placed by
 *     points go by best fit (as best_fit) and pay the reserve with
 *     fit_reserve in place of reserve (and of cpu_reserve), and the
 *     CPU-aware growth counts free memory as mem_multi has it; the rollouts'
 *     candidates set their own and turn it off (fit_multi above 1:
 *     never);
 *   - fit_spread (the twenty-first round): under the same gate
 *     (fit_multi), the spread rule holds whatever the shares' part of
 *     the demand (spread_shares is not read) with fit_spread cores per
 *     free GPU in place of spread_cpu (0: as before);
 *   - fit_keep, fit_keep_share (the twenty-second round): under the same
 *     gate, a GPU pod that leaves a node unable to hold the mix's pod
 *     type of two or more GPUs that asks the most CPU (then memory),
 *     which the node held before, costs fit_keep milli-GPU of growth
 *     (pods placed by the CPU-aware growth) or fit_keep_share points
 *     (shares placed by points), so that the few nodes able to hold that
 *     type keep it for it (0: off); only where pods of 2+ GPUs carry at
 *     most fit_keep_multi of the demand (some smaller pods to keep off).
 * The defaults (mu_muster_params_defaults) are 0.15, 700, 0.75, 1001, 0,
 * 0, 0.15, 0.45, 0.25, 1.5, 20, 0.19, 0.15, 0.15, 1.0, 0.25, 1.1, 0.35,
 * 26, 400, 100, 0.75 (score_frag.c). */
typedef struct mu_muster_params {
	double mg_multi;
	int32_t mg_large;
	double reserve;
	int32_t reserve_below;
	int32_t best_fit;
	int32_t whole_fgd;
	double demand_multi;
	double mem_multi;
	double cpu_fit;
	double press_over;
	double spread_cpu;
	double spread_shares;
	double spread_cpu_only;
	double spread_models;
	double cpu_reserve;
	double cpu_reserve_only;
	double fit_reserve;
	double fit_multi;
	double fit_spread;
	double fit_keep;
	double fit_keep_share;
	double fit_keep_multi;
} mu_muster_params_t;

void mu_muster_params_defaults(mu_muster_params_t *p);
/* Whether a and b are the same settings, field by field (never memcmp:
 * the struct has padding, whose bytes are indeterminate).  O(1). */
bool mu_muster_params_equal(const mu_muster_params_t *a, const mu_muster_params_t *b);
/* The settings as text, e.g. "mg auto, reserve 0.75 below 700, demand
 * auto, mem auto" (each of the thresholds mg_multi, demand_multi and
 * mem_multi "on" when <= 0, "off" above 1, "auto" between); returns
 * buf. */
const char *mu_muster_params_format(const mu_muster_params_t *p, char *buf,
				    size_t len);

/* One pod shape of a workload.  Memory and other resources are not part of
 * a shape: FGD's fragmentation is measured on CPU and GPUs.  A shape keeps
 * its pods' mean memory, which muster's measure may read (mem_multi). */
typedef struct mu_pod_type {
	int64_t cpu;        /* millicores */
	int64_t mem;        /* bytes: the mean of the shape's pods */
	int32_t gpus;       /* whole GPUs; 0 for a share or a CPU-only pod */
	int32_t gpu_milli;  /* share of one GPU (1..999) when gpus is 0 */
	uint64_t models;    /* allowed GPU models: bit i = models[i]; 0 = any */
	int64_t count;      /* pods of this shape */
	double weight;      /* popularity: count / pods, set by finish */
} mu_pod_type_t;

/* A workload's pod shapes and their popularity: the target workload that
 * GPU fragmentation is measured against.  Build it with init, add (once
 * per pod or shape), finish; then pass it as score_state. */
typedef struct mu_workload_mix {
	mu_pod_type_t *types;  /* after finish: unique, sorted by shape, cpu */
	int32_t ntypes, cap;
	char *models[MU_MIX_MAX_MODELS]; /* owned copies */
	int32_t nmodels;
	int64_t pods;
	/* Set before finish to keep only the most popular shapes that cover
	 * this share of the pods, as the FGD artifact's "typical pods" do
	 * (0.95 there); 0 keeps every shape. */
	double top;
	struct mu__mix_index *index; /* built by finish; owned */
	/* muster's settings, the caller's (it may be set after finish, and
	 * in a shallow copy of a finished mix, but not changed while an
	 * engine scores with the mix, unless mu_engine_rescore() follows:
	 * it keeps scores); NULL: the defaults. */
	const mu_muster_params_t *muster;
} mu_workload_mix_t;

/* The FGD artifact's typical pods: the most popular shapes covering 95% of
 * the pods (generate_config_and_run.py's --pod-popularity-threshold 95), a
 * mix's top for fgd in `muster eval openb` and the live scheduler. */
#define MU_MIX_TYPICAL 0.95

void mu_workload_mix_init(mu_workload_mix_t *m);
/* Tells a finished mix that the cluster has `devices` GPUs of `model`
 * (NULL or a model no shape names: counted as other devices); called once
 * per node or per model, it adds up.  The mix's per-model pressure
 * (muster's press_over) is computed again from the sums.  MU_EINVAL
 * without a finished mix or for negative devices.  O(types x models). */
int mu_workload_mix_supply(mu_workload_mix_t *m, const char *model,
			   int64_t devices);
void mu_workload_mix_release(mu_workload_mix_t *m);
/* Counts `count` pods with request req (request units) that may run on the
 * given GPU models (none: any).  MU_EINVAL for a negative count or a
 * finished mix, MU_ERANGE past MU_MIX_MAX_MODELS models, MU_ENOMEM. */
int mu_workload_mix_add(mu_workload_mix_t *m, const mu_res_t *req,
			const char *const *models, size_t nmodels,
			int64_t count);
/* Merges equal shapes, keeps the most popular ones covering m->top of the
 * pods when top is in (0, 1) (ties: larger CPU, share, GPUs first; the
 * weights are then shares of the kept pods), sets the weights and builds
 * the index the policies use.  O(types log types). */
int mu_workload_mix_finish(mu_workload_mix_t *m);
/* The FGD paper's expected fragmentation of one node (milli-GPU): the sum
 * over shapes of weight x the free GPU capacity that shape cannot use
 * there.  A NULL or empty mix is one whole-GPU shape.  O(shapes + GPUs). */
double mu_gpu_frag(const mu_workload_mix_t *m, const mu_node_view_t *node);

/* --- Choosing muster's settings by rollouts (score_rollout.c) ------------ */

/* A rollout: pods drawn from the mix by popularity (with the stream of
 * seed, never an evaluation's) arrive one at a time on a copy of the
 * nodes' free capacity and are placed by muster's score with one
 * candidate's settings, best node first, the lower index on ties, until
 * the GPU demand asked reaches fill x the copy's GPU capacity.  Its worth
 * is the milli-GPU allocated then. */
typedef struct mu_rollout_config {
	uint64_t seed;      /* the rollouts' randomness */
	double fill;        /* 0: 1.3 (the openb protocol's x = 130) */
	int32_t max_nodes;  /* nodes in a copy (a sample of them when there
	                     * are more); 0: 2048 */
	int32_t rollouts;   /* per candidate, each its own draw; 0: 8 */
	/* Receding horizon (the fourteenth round): the GPU demand already
	 * asked of the nodes, as a share of their GPU capacity (0: an empty
	 * cluster's start); a rollout draws only what is still to come, up
	 * to fill.  judge_at, when above asked and below fill, is a second
	 * point where the allocation counts too (the worth is the sum of the
	 * two), so that a setting good at fill but poor earlier loses. */
	double asked;
	double judge_at;
	/* Ties (the fifteenth round): candidates whose worths are equal are
	 * judged by what the rollouts predict of later allocation.  tie_fill
	 * above fill: the same draws go on to tie_fill x the copy's GPUs
	 * (for the tie only) and the most allocated then wins; then, and
	 * for tie_fill 0, the least fragmentation of the copy at the end
	 * (the sum over its nodes of mu_gpu_frag() against the mix: the
	 * free GPU capacity the demand to come cannot use), summed over the
	 * rollouts; the lower index last.  tie_fill below 0: the lower
	 * index only (the fourteenth round's rule). */
	double tie_fill;
	/* Memory (the sixteenth round): the memory requests of the mix's
	 * pods, per type (mu_rollout_mem_t, built for the same finished mix);
	 * NULL: neither memory nor the pod count is modelled (the rounds
	 * before).  With it each arrival draws its memory from its type's
	 * requests by count, and a node fits it only when its free memory
	 * and free pod slots hold it too, as the engine's fit says. */
	const struct mu_rollout_mem *mem;
} mu_rollout_config_t;

/* The memory requests of a finished mix's pods, per type: type t's are
 * mem[first[t] .. first[t + 1]), ascending, with their pods counted
 * cumulatively in cum (the type's pods up to and including that value).
 * Build it with init, add (once per pod or shape, with what was added to
 * the mix), finish; the mix must not change after. */
typedef struct mu_rollout_mem {
	int32_t *first;  /* [ntypes + 1] after finish */
	int64_t *mem;    /* bytes */
	int64_t *cum;
	int32_t n, cap, ntypes;
	struct mu__rmem_add *adds; /* before finish: (type, memory, count) */
	int32_t nadds, adds_cap;
	bool finished;
} mu_rollout_mem_t;

void mu_rollout_mem_init(mu_rollout_mem_t *m);
void mu_rollout_mem_release(mu_rollout_mem_t *m);
/* Counts `count` pods with request req on the given GPU models (as given
 * to mu_workload_mix_add of mix, which is finished) by their memory
 * request (negative: 0).  A shape the mix does not keep (its top) is not
 * drawn and not counted.  MU_EINVAL for a negative count, an unfinished
 * mix or a finished table, MU_ENOMEM.  O(log types + models). */
int mu_rollout_mem_add(mu_rollout_mem_t *m, const mu_workload_mix_t *mix,
		       const mu_res_t *req, const char *const *models,
		       size_t nmodels, int64_t count);
/* Merges equal (type, memory) counts and builds the per-type lists.
 * O(adds log adds + types). */
int mu_rollout_mem_finish(mu_rollout_mem_t *m, const mu_workload_mix_t *mix);

/* The candidate settings tried by default for a finished mix: the
 * large-share rule as the defaults give it for the mix and the other way
 * (never or always), times reserve 0.75 and 1.0 each for every share and
 * for shares below 700 only, and reserve 0; the defaults first.  Writes
 * up to cap of them and returns how many there are (10). */
size_t mu_muster_params_candidates(const mu_workload_mix_t *mix,
				   mu_muster_params_t *out, size_t cap);
/* The fifteenth round's candidates that place differently from those
 * when few whole devices are left: shares by best fit (the large-share
 * rule as the defaults give it, then the other way) and whole-GPU pods by
 * FGD's points, each on the defaults.  Writes up to cap of them and
 * returns how many there are (3). */
size_t mu_muster_params_late(const mu_workload_mix_t *mix,
			     mu_muster_params_t *out, size_t cap);

/* Runs cfg->rollouts rollouts for each of the ncands candidates on the
 * same draws (common random numbers) and sets *best to the candidate that
 * allocates the most over them (ties as cfg->tie_fill says); worth[i] (may be
 * NULL) gets candidate i's milli-GPU summed over the rollouts.  mix is
 * finished and read only; nodes are the caller's views (their free
 * capacity is copied).  Memory and pod slots are modelled when cfg->mem
 * is set (one compare per node and arrival more).  Deterministic for a seed.
 * Work: ncands x rollouts x arrivals (about fill x the copy's GPUs x the
 * mix's pods per GPU) x the copy's nodes, where a node's score is computed
 * again only after it changed (per pod shape); memory shapes x nodes
 * scores.  MU_EINVAL for bad arguments or an unfinished mix, MU_ENOMEM. */
int mu_rollout_choose(const mu_workload_mix_t *mix,
		      const mu_node_view_t *nodes, size_t nnodes,
		      const mu_muster_params_t *cands, size_t ncands,
		      const mu_rollout_config_t *cfg, int64_t *worth,
		      size_t *best);

/* Receding horizon (the fourteenth round): a harness that places pods one
 * at a time chooses muster's settings again at checkpoints of the GPU
 * demand asked, each time by mu_rollout_choose() from the free capacity
 * of that moment (cfg.asked the demand asked so far, cfg.judge_at the
 * second judgement), and places by the winner until the next checkpoint.
 * The checkpoints are at from, from + every, from + 2 x every, ... below
 * the rollouts' fill. */
typedef struct mu_rollout_horizon {
	double from;      /* the first checkpoint, a share of the GPUs asked;
	                   * 0: 0.5 */
	double every;     /* their spacing; 0: 0.1 */
	double judge_at;  /* the rollouts' second judgement; 0: 1.0 (the
	                   * openb protocol's x = 100); above fill: none */
} mu_rollout_horizon_t;

/* The index of the last checkpoint of h at or below asked (0 the first),
 * or -1 before the first and for a bad h (every or from negative);
 * checkpoints at or past fill do not count.  O(1). */
int32_t mu_rollout_checkpoint(const mu_rollout_horizon_t *h, double fill,
			      double asked);

/* --- muster-horizon outside the eval (horizon.c) --------------------------
 *
 * The simulator and the live scheduler re-choose muster's settings as the
 * cluster fills: at checkpoints of the GPU allocation (at.from, from +
 * every, ... of the cluster's GPUs allocated; a checkpoint passed again
 * after the allocation fell below it counts again), at most once per
 * min_interval of the caller's clock, by mu_rollout_choose() from the free
 * capacity then and the demand seen so far: the shapes of the pods that
 * arrived (mu_horizon_seen), weighted by count, never a trace's future.
 * A choice is three steps so that a daemon can run the rollouts on a
 * worker thread: mu_horizon_prepare() takes a snapshot (owned by the job),
 * mu_horizon_job_run() runs on it alone, mu_horizon_apply() records the
 * winner between cycles; the caller then calls mu_engine_rescore(). */
typedef struct mu_horizon_config {
	mu_rollout_horizon_t at;     /* from (0: 0.5), every (0: 0.1),
	                              * judge_at (0: 1.0) */
	mu_rollout_config_t rollout; /* seed, fill (0: 1.3), max_nodes,
	                              * rollouts; asked is set per choice */
	mu_time_t min_interval;      /* ms between choices; 0: none */
	/* The engine scores with h->mix, the seen demand at the last choice
	 * (the live scheduler, which has no other); false: the caller's mix,
	 * whose `muster` the caller points at h->params. */
	bool own_mix;
} mu_horizon_config_t;

/* One choice, as logged. */
typedef struct mu_horizon_choice {
	mu_time_t at;              /* the caller's clock at the snapshot */
	int32_t checkpoint;        /* 0 the first (at.from) */
	double share;              /* GPUs allocated / allocatable then */
	int32_t winner;            /* index among the candidates */
	int32_t ncands, top;       /* candidates; tied at the top */
	int64_t lead;              /* winner's worth over the next one below,
	                            * milli-GPU summed over the rollouts */
	mu_muster_params_t params; /* the winner */
	bool changed;              /* differs from the settings before */
	int32_t shapes, nodes;     /* the demand's shapes; nodes rolled */
	int64_t pods;              /* pods seen */
} mu_horizon_choice_t;

struct mu__hz_shape;
typedef struct mu_horizon {
	mu_horizon_config_t cfg;
	mu_muster_params_t params;  /* the settings now (defaults at first) */
	mu_workload_mix_t mix;      /* own_mix: the engine's score state */
	struct mu__hz_shape *seen;  /* the demand seen: unique shapes */
	int32_t nseen, seen_cap;
	struct mu__strmap *seen_ix; /* shape key -> index in seen; owned */
	int32_t *seen_free;         /* slots of shapes whose pods all left
	                             * (mu_horizon_unseen), reused first */
	int32_t nfree, free_cap;
	int64_t seen_pods;
	int32_t checkpoint;         /* the level of the last choice; -1 */
	mu_time_t last_at;          /* its snapshot time; MU_TIME_NONE */
	bool busy;                  /* a job is out (prepared, not applied) */
	int32_t choices, changes;
	mu_horizon_choice_t last;   /* valid when choices > 0 */
	/* mu_horizon_live_mix: the pods in h->mix at its last build, the
	 * pods counted in or out since (each one, not the net), and
	 * whether a shape came into the demand or left it since. */
	int64_t mix_pods;
	int64_t mix_moves;
	bool mix_reshaped;
} mu_horizon_t;

typedef struct mu_horizon_job mu_horizon_job_t;

/* MU_EINVAL (with why, when not NULL, saying which setting and what was
 * expected) for a negative or non-finite from, every, judge_at or
 * min_interval, from or every above 1, or a fill not above 1. */
int mu_horizon_init(mu_horizon_t *h, const mu_horizon_config_t *cfg,
		    char *why, size_t whylen);
void mu_horizon_release(mu_horizon_t *h);
/* Counts `count` arrived pods with request req that may run on the given
 * GPU models (none: any).  Pods without GPUs count too (they take CPU).
 * A shape is the CPU, memory, GPUs or share and the models, found by a
 * hash of them (the sixteenth round; a linear search before).
 * MU_ENOMEM, MU_EINVAL for a negative count.  O(models) expected. */
int mu_horizon_seen(mu_horizon_t *h, const mu_res_t *req,
		    const char *const *models, size_t nmodels, int64_t count);
/* As mu_horizon_seen, with *at (when not NULL) set to the index of the
 * shape counted, for mu_horizon_unseen, or -1 when none was (count 0, or
 * a request that fits no node of the rollouts' model). */
int mu_horizon_seen_at(mu_horizon_t *h, const mu_res_t *req,
		       const char *const *models, size_t nmodels, int64_t count,
		       int32_t *at);
/* Takes count pods off the shape at index `at` (from mu_horizon_seen_at):
 * pods that left, so that the demand is what is pending and running (the
 * live scheduler's plain muster; the horizon's demand only grows).  A
 * shape left without pods leaves the index and the mix, and its slot is
 * the next new shape's, so the shapes kept are at most the most alive at
 * once, not every shape ever seen (a cluster whose pods all differ).
 * MU_EINVAL for an unknown index or more pods than it has.  O(1), O(its
 * models) when it empties. */
int mu_horizon_unseen(mu_horizon_t *h, int32_t at, int64_t count);
/* Builds h->mix again from the demand now (the shapes with pods, every
 * one: no "typical pods" cut), for a caller whose engine scores with
 * h->mix between choices: when a shape came into the demand or left it,
 * or more than 1/16 of the last build's pods were counted in or out since
 * (each pod that came or went, not the net change: pods of one shape
 * replaced by pods of another that stays would leave the net count still;
 * so the mix's counts are off from the demand's by at most 1/16 of its
 * pods, where shapes were neither added nor emptied), so that a busy
 * cluster does not drop the engine's scores every cycle for a pod more or
 * less.  No pods: the unfinished empty mix, with which muster
 * places as it does without one.  The mix keeps h->mix.top (the caller's
 * typical-pods cut: fgd's MU_MIX_TYPICAL live) across builds.  Returns 1 when built (the caller then
 * calls mu_engine_rescore), 0 when not due, MU_ENOMEM (h->mix kept).
 * O(shapes log shapes) when built, O(1) otherwise. */
int mu_horizon_live_mix(mu_horizon_t *h);
/* Whether a choice is due now for e's GPU allocation (see above); sets
 * *cp to the checkpoint and *share to the allocation.  A fall below the
 * last choice's checkpoint lowers it, so that the checkpoint is passed
 * again.  Never due while a job is out or before any pod was seen.
 * O(1). */
bool mu_horizon_due(mu_horizon_t *h, const mu_engine_t *e, mu_time_t now,
		    int32_t *cp, double *share);
/* Takes the snapshot of a choice at checkpoint cp: every schedulable node
 * of e (its free capacity, copied), the seen demand as a finished mix (with
 * e's devices per model now, mu_engine_gpu_models, for press_over) and
 * its candidates (mu_muster_params_candidates).  *out is the caller's
 * until mu_horizon_job_free; h is busy until mu_horizon_apply or
 * mu_horizon_cancel.  MU_ENOMEM, MU_ESTATE when busy or nothing was seen,
 * MU_ENOENT without nodes with GPUs.  O(nodes x devices + shapes log). */
int mu_horizon_prepare(mu_horizon_t *h, const mu_engine_t *e, mu_time_t now,
		       int32_t cp, double share, mu_horizon_job_t **out);
/* Runs the job's rollouts; reads and writes only the job (safe on another
 * thread).  Returns mu_rollout_choose()'s result.  Work: that of
 * mu_rollout_choose for the snapshot (about 0.2 s of CPU with 256 nodes). */
int mu_horizon_job_run(mu_horizon_job_t *j);
/* The job's mix (the demand seen at its snapshot, with the devices per
 * model then), owned by the job.  O(1). */
const mu_workload_mix_t *mu_horizon_job_mix(const mu_horizon_job_t *j);
/* Records a run job's winner in h (h->params, h->last, and with own_mix
 * the job's mix becomes h->mix); *choice (may be NULL) gets the log
 * line's facts.  The caller calls mu_engine_rescore() before its next
 * cycle when choice->changed or own_mix.  MU_EINVAL for a job that did
 * not run or failed.  O(shapes). */
int mu_horizon_apply(mu_horizon_t *h, mu_horizon_job_t *j,
		     mu_horizon_choice_t *choice);
/* Gives up a prepared job (h is no longer busy); the job is still freed
 * by the caller. */
void mu_horizon_cancel(mu_horizon_t *h);
void mu_horizon_job_free(mu_horizon_job_t *j);
/* All of a choice at once, for a harness with nothing else to do (the
 * simulator and the scenario runner): when one is due, prepares, runs and
 * applies it and calls mu_engine_rescore(e) when it changed the settings
 * (always with own_mix).  Returns 1 with *choice (may be NULL) filled
 * when it chose, 0 when none was due (or no node has GPUs), or a negative
 * error.  O(one mu_rollout_choose) when due, O(1) otherwise. */
int mu_horizon_step(mu_horizon_t *h, mu_engine_t *e, mu_time_t now,
		    mu_horizon_choice_t *choice);
/* The choice as one line: "checkpoint 2 (70% of GPUs allocated): mg
 * auto, reserve 1.00 (candidate 3 of 10, lead 420 milli-GPU, changed)".
 * Returns buf. */
const char *mu_horizon_format(const mu_horizon_choice_t *c, char *buf,
			      size_t len);

/* Looks a policy up by name; NULL if unknown. */
const mu_score_ops_t *mu_score_find(const char *name);

/* --- Lifecycle ----------------------------------------------------------- */

typedef enum mu_backfill {
	MU_BACKFILL_GREEDY = 0,  /* anything that fits starts (no protection) */
	MU_BACKFILL_NONE = 1,    /* strict order: the first job that does not
	                          * fit stops the cycle (FIFO) */
	MU_BACKFILL_RESERVE = 2, /* the top blocked jobs hold reservations;
	                          * others start only where they cannot delay
	                          * them */
} mu_backfill_t;

typedef enum mu_order {
	MU_ORDER_PRIORITY = 0, /* priority, then submit time */
	MU_ORDER_SJF = 1,      /* priority, then shortest run-time estimate */
	MU_ORDER_LAS = 2,      /* Tiresias-style discretized least attained
	                        * service: jobs that have had less GPU time go
	                        * first and may preempt those that had more */
	MU_ORDER_JCT = 3,      /* the default: least attained service for
	                        * preemptible jobs, with guards against
	                        * thrashing (docs/policy.md): a minimum run
	                        * after every start that covers the restart
	                        * cost, gangs never victims of the order,
	                        * and an optional cap on preemptions */
} mu_order_t;

/* "priority", "sjf", "las", "jct"; NULL if out of range. */
const char *mu_order_name(mu_order_t o);
/* The order named s, or -1. */
int mu_order_find(const char *s);

typedef struct mu_engine_config {
	const mu_score_ops_t *score; /* NULL: mu_score_binpack */
	mu_order_t order;            /* job order inside a queue */
	double las_base_gpu_hours;   /* LAS levels start at 1x, 10x, 100x this
	                              * much attained GPU time (default 1) */
	/* MU_ORDER_JCT (docs/policy.md, "Job order inside a queue"). */
	double jct_base_gpu_hours;   /* levels at 1x, 10x, 100x this much
	                              * attained GPU time (100): the trade-off
	                              * knob, from JCT-first (10) to arrival
	                              * order (large) */
	mu_time_t jct_min_run;       /* after each start a job runs this long
	                              * before its level lets a job of the same
	                              * priority preempt it */
	mu_time_t restart_cost;      /* work a preempted job loses (its
	                              * checkpoint interval, say); the minimum
	                              * run is at least 20 times it, so a
	                              * preemption wastes at most 5% of a run */
	int32_t jct_max_preemptions; /* a job preempted this often is no longer
	                              * a victim of the order (0 = no cap) */
	int32_t jct_gang_pods;       /* jobs of more pods than this are not
	                              * victims of the order: a gang restarts
	                              * only where all its pods fit at once */
	const void *score_state;     /* passed to the policy as ctx->state */
	uint64_t seed;               /* for policies that draw random numbers */
	bool preemption;   /* in a queue, a higher priority evicts lower ones */
	bool reclaim;      /* a queue below its fair share takes back from
	                    * queues above theirs */
	mu_time_t min_runtime;      /* a job runs this long before it can be
	                             * a victim */
	mu_time_t reclaim_cooldown; /* a queue loses jobs to reclaim at most
	                             * once per this long */
	mu_time_t starvation_after; /* a queue's first job that has waited
	                             * this long blocks the jobs behind it;
	                             * 0 = never */
	int32_t max_victim_nodes;   /* nodes with candidate victims examined
	                             * per preempting pod, from a rotating
	                             * start; 0 = all */
	mu_backfill_t backfill;     /* what may start behind a blocked job */
	int32_t reservations;       /* MU_BACKFILL_RESERVE: blocked jobs that
	                             * get a reservation (1 = EASY) */
	mu_time_t default_runtime;  /* estimate when nothing else is known */
	bool consolidate;           /* move preemptible pods to fit a gang */
	double move_ratio;          /* GPUs moved per GPU gained, at most */
	int32_t move_pods_per_hour; /* disruption budget: pods moved */
	int32_t move_gpus_per_hour; /* ... GPUs moved (0 = no such cap) */
	double move_gpu_hours_per_hour; /* ... and GPU-hours of work moved */
	mu_time_t usage_half_life;  /* time-decayed fairness: a queue's usage
	                             * is averaged with this half-life and
	                             * lowers its over-quota weight (Slurm's
	                             * 2^(-usage/share)); 0 = off, only the
	                             * instantaneous share counts */
	mu_time_t interactive_max_wait; /* classes of service: the maximum
	                             * wait of an interactive job whose job
	                             * and queue name none (300 s); 0 = none */
	bool kube_ties;             /* among nodes of equal score, take the
	                             * one kube-scheduler v1.20 lists first:
	                             * its filter checks the nodes in chunks
	                             * of min(sqrt(n), n/16 + 1) on 16
	                             * workers and lists each feasible node as
	                             * it is found, so the earliest offset in
	                             * a chunk wins, then the earliest round
	                             * of 16 chunks, then the lower chunk (see
	                             * docs/evaluation.md, openb).  false =
	                             * the lower node id */
	bool scan_all;              /* score every node for every pod, never
	                             * from the heaps or fit trees, and count
	                             * every explanation afresh (for tests and
	                             * benches: the answers are the same) */
} mu_engine_config_t;

/* Defaults: binpack, preemption and reclaim on, 60 s minimum runtime, no
 * cool-down, no starvation guard (reservations protect big jobs), victims
 * sought on up to 100 workable nodes per pod, reservations for the top 4 blocked jobs, 1 hour default
 * runtime estimate, consolidation on (moves at most as many GPUs as they
 * free, 64 pods and 64 GPU-hours an hour). */
void mu_engine_config_defaults(mu_engine_config_t *cfg);

/* Creates an empty engine.  cfg may be NULL for the defaults.  The caller
 * frees it. */
int mu_engine_new(const mu_engine_config_t *cfg, mu_engine_t **out);
void mu_engine_free(mu_engine_t *e);

/* --- Events -------------------------------------------------------------- */

/* Adds a node, or changes one with the same name (pods on it stay). */
int mu_engine_node_upsert(mu_engine_t *e, const mu_node_spec_t *n, mu_id_t *id);
/* Removes a node.  Jobs with pods on it lose them: they are put back to
 * pending as a whole (a gang restarts together). */
int mu_engine_node_remove(mu_engine_t *e, const char *name, mu_time_t now);

/* Adds or changes a topology (levels as node label keys, outermost
 * first).  Jobs name it in their mu_topo_req_t; the first one added is
 * the default. */
int mu_engine_topology_upsert(mu_engine_t *e, const mu_topology_spec_t *t);

/* Adds or changes a queue.  A parent must exist before its children. */
int mu_engine_queue_upsert(mu_engine_t *e, const mu_queue_spec_t *q);

/* Submits a job; it waits in its queue.  MU_ENOENT if the queue is unknown,
 * MU_EEXIST if a job of that name exists. */
int mu_engine_job_submit(mu_engine_t *e, const mu_job_spec_t *j, mu_time_t now,
			 mu_id_t *id);
/* A job's pods all finished (or it was deleted): its resources are freed and
 * the job leaves the engine.  Its id is not reused unless the caller hands
 * it back with mu_engine_job_forget().  A running job's run time feeds its
 * queue's run-time history (the estimates of backfill). */
int mu_engine_job_finish(mu_engine_t *e, mu_id_t job, mu_time_t now);
/* The same for a job taken out to be submitted again (its spec or its
 * members changed): its run so far is not a run time, and the history is
 * left alone.  MU_ENOENT, MU_ESTATE as mu_engine_job_finish(). */
int mu_engine_job_withdraw(mu_engine_t *e, mu_id_t job, mu_time_t now);
/* Hands back a finished (or withdrawn) job: its pod sets and its name are
 * freed (the name may be submitted again), and its id is given to a later
 * submit, so the job records follow the live jobs rather than every job
 * ever submitted.  For callers that keep nothing by the id afterwards (the
 * scheduler daemon, the simulator unless cfg.keep_jobs, the fleet's cluster
 * engines).  Decisions do not change: where jobs tie, the earlier submitted
 * goes first, whatever their ids.  After it mu_engine_job_info() answers
 * MU_ENOENT for the id until it is reused.  MU_ENOENT when unknown or forgotten already,
 * MU_ESTATE when not finished, MU_ENOMEM.  O(1) plus the job's pod sets. */
int mu_engine_job_forget(mu_engine_t *e, mu_id_t job);

/* --- Scheduling ---------------------------------------------------------- */

typedef enum mu_dec_kind {
	MU_DEC_BIND = 0,    /* bind pod to node with devices */
	MU_DEC_PENDING = 1, /* the job still waits; see reason */
	MU_DEC_EVICT = 2,   /* evict the pod */
} mu_dec_kind_t;

typedef enum mu_why {
	MU_WHY_NONE = 0,
	MU_WHY_UNSCHEDULABLE = 1, /* a pod fits on no node */
	MU_WHY_GANG = 2,          /* some pods fit, fewer than minMember */
	MU_WHY_QUEUE_LIMIT = 3,   /* the queue or an ancestor is at its limit */
	MU_WHY_OVER_QUOTA = 4,    /* non-preemptible, and no in-quota room */
	MU_WHY_BLOCKED = 5,       /* behind a starving job of its queue */
	MU_WHY_PREEMPTED = 6,     /* suspended to make room for another job */
	MU_WHY_TOPOLOGY = 7,      /* no domain of the required level holds it */
	MU_WHY_COUNT
} mu_why_t;

/* Names used in explain output and scenario files ("Unschedulable"...). */
const char *mu_why_name(mu_why_t w);

/* The filters a node can fail, in the order they are checked. */
typedef enum mu_filter {
	MU_F_UNSCHEDULABLE = 0, /* node cordoned */
	MU_F_SELECTOR,          /* nodeSelector */
	MU_F_AFFINITY,          /* required node affinity */
	MU_F_TAINT,             /* untolerated taint */
	MU_F_GPU_MODEL,         /* GPU model not allowed */
	MU_F_CPU,
	MU_F_MEM,
	MU_F_GPU,               /* not enough free GPU devices or share */
	MU_F_PODS,
	MU_F_EXT,               /* a named extended resource */
	MU_F_ALIGN,             /* GPUs, NIC or CPUs cannot be aligned */
	MU_F_RESERVED,          /* held for a reserved job it would delay */
	MU_F_SPREAD_LABEL,      /* lacks a spread constraint's topology key */
	MU_F_SPREAD,            /* a DoNotSchedule spread would skew too much */
	MU_F_POD_AFFINITY,      /* required pod affinity not met */
	MU_F_POD_ANTI,          /* its required anti-affinity not met */
	MU_F_EXISTING_ANTI,     /* a bound pod's anti-affinity refuses it */
	MU_F_COUNT
} mu_filter_t;

/* The reclaim rule that refused (mu_reason_t.fs_rule). */
enum {
	MU_RULE_NONE = 0,
	MU_RULE_CLAIMANT_FAIR = 1, /* the job's queue would exceed its fair
	                            * share and its deserved quota */
	MU_RULE_VICTIM_QUOTA = 2,  /* the other queues hold only what their
	                            * deserved quota (or fair share) protects */
	MU_RULE_MIN_RUNTIME = 3    /* the victims have not run min_runtime
	                            * yet: fs_used is the minimum, fs_req the
	                            * time until one may go (ms) */
};

typedef struct mu_reason {
	mu_why_t why;
	int32_t podset;                /* the pod set that failed, or -1 */
	int32_t nodes_total;           /* nodes considered */
	int32_t fail[MU_F_COUNT];      /* nodes failing each filter (first failed) */
	int32_t pods_needed;           /* minMember */
	int32_t pods_fit;              /* most pods a placement found */
	int32_t limit_queue;           /* queue at its limit (QUEUE_LIMIT,
	                                * OVER_QUOTA), or -1 */
	int32_t limit_res;             /* resource slot at its limit */
	int64_t limit_used, limit_max, limit_req;
	/* Why reclaim could not help (fs_rule, MU_RULE_*): the queue and its
	 * numbers, or fs_queue -1. */
	int32_t fs_rule;
	int32_t fs_queue;
	int32_t fs_res;
	int64_t fs_used, fs_req, fs_fair, fs_deserved;
	mu_id_t blocked_by;            /* BLOCKED: the starving job;
	                                * PREEMPTED: the job it made room for */
	/* TOPOLOGY: the level, its domains, how many could be tried (had the
	 * room in aggregate), and the most pods any of them held. */
	int32_t topo_level;
	int32_t topo_domains, topo_tried, topo_best;
	int32_t topo_id;               /* the topology */
	/* GANG, when part_needed > 0: the pod set (index) that could not
	 * place its own minimum (a part of the gang), and the most of its
	 * pods that fit. */
	int32_t part, part_needed, part_fit;
	mu_id_t part_job;              /* the job, to name the pod set */
} mu_reason_t;

typedef struct mu_decision {
	mu_dec_kind_t kind;
	mu_id_t job;
	int32_t podset;     /* -1 for job-level decisions (pending) */
	int32_t pod;        /* index within the pod set */
	mu_id_t node;
	uint64_t gpus;      /* device mask of the bind */
	int32_t gpu_milli;  /* share taken on the one device in `gpus` */
	int8_t numa;        /* MU_DEC_BIND: NUMA node of the aligned devices,
	                     * or -1 */
	int8_t nic;         /* the NIC given to the pod, or -1 */
	mu_cpuset_t cpus;   /* exclusive CPUs, empty when not pinned */
	mu_id_t by;         /* MU_DEC_EVICT: the job it makes room for */
	bool suspend;       /* MU_DEC_EVICT: the whole job is suspended (else
	                     * the surplus pod of an elastic job) */
	bool move;          /* MU_DEC_EVICT: the pod is moved; a BIND of it
	                     * to its new node follows in the same cycle */
	mu_reason_t reason; /* for MU_DEC_PENDING */
} mu_decision_t;

/* A growable array of decisions, owned by the caller.  With sink set, the
 * cycle hands each decision to sink(sink_arg, d) instead of appending it
 * to v (n still counts them; a non-zero return, a negative mu_err_t, ends
 * the cycle with it): a caller that keeps decisions in a smaller form
 * need not hold a cycle's 320-byte records at once.  The sink must not
 * call the engine. */
typedef struct mu_decisions {
	mu_decision_t *v;
	size_t n, cap;
	int (*sink)(void *arg, const mu_decision_t *d);
	void *sink_arg;
} mu_decisions_t;

void mu_decisions_init(mu_decisions_t *d);
void mu_decisions_release(mu_decisions_t *d);


/*
 * Runs one scheduling cycle at time `now` and appends its decisions to out
 * (which it does not clear).  Binds are applied to the engine's state.  Every
 * job still pending after the cycle gets one MU_DEC_PENDING decision.
 * Work is bounded by (pending jobs tried) x (feasible nodes of their class);
 * a job that failed to fit is not retried until resources are released.
 */
int mu_engine_cycle(mu_engine_t *e, mu_time_t now, mu_decisions_t *out);

/* Makes the reservations the last cycle owes.  A cycle reserves nodes for
 * its first cfg.reservations blocked jobs, but makes each reservation only
 * when a later job is about to be tried (it holds nodes against later jobs
 * only), so the last blocked jobs of a cycle are not reserved yet.  Call
 * this before reading expected starts with mu_engine_job_info() to get the
 * reservation-based ones; if anything was bound, freed or changed since the
 * cycle, it does nothing (the aggregate estimate applies).  O(reservations
 * x (class nodes + running pods)). */
int mu_engine_settle(mu_engine_t *e);

/* The name of a topology's level, for messages; NULL if out of range. */
const char *mu_engine_topology_level(const mu_engine_t *e, int32_t topo,
				     int32_t level);

/* Writes a one-line explanation of r into buf (always NUL-terminated).
 * Returns the length it wanted, as snprintf does. */
int mu_reason_format(const mu_engine_t *e, const mu_reason_t *r, char *buf,
		     size_t len);

/* Writes one line on where job id stands in its queue's order and why
 * (always NUL-terminated): the order and the job's level (attained GPU
 * time); for a waiting job its place among the queue's waiting jobs and
 * why it is behind the one before it and ahead of the one after it; for a
 * running job whether the order may preempt it (minimum run, gangs).
 * Returns the length it wanted, as snprintf does, or MU_ENOENT.
 * O(pending jobs of its queue). */
int mu_engine_order_explain(const mu_engine_t *e, mu_id_t id, char *buf, size_t len);

/* --- Queries ------------------------------------------------------------- */

typedef enum mu_job_state {
	MU_JOB_PENDING = 0,
	MU_JOB_RUNNING = 1,  /* admitted: at least minMember pods bound */
	MU_JOB_FINISHED = 2,
} mu_job_state_t;

typedef enum mu_estimate_src {
	MU_EST_DECLARED = 0, /* the job's runtime_estimate */
	MU_EST_LIMIT = 1,    /* the job's runtime_limit */
	MU_EST_HISTORY = 2,  /* jobs of its queue and shape that finished */
	MU_EST_DEFAULT = 3,  /* nothing known: the configured default */
} mu_estimate_src_t;

/* "declared", "limit", "history", "default". */
const char *mu_estimate_src_name(mu_estimate_src_t s);

typedef struct mu_job_info {
	const char *name;
	const char *queue;
	mu_job_state_t state;
	int32_t pods, bound;
	int32_t min_member;
	mu_time_t submit, start; /* start: of the current run */
	int64_t gpu_milli;      /* accounting GPUs of all pods */
	int32_t priority;
	int32_t effective_priority; /* what ordering and preemption use */
	double attained_gpu_s;  /* GPU-seconds it has run */
	bool preemptible;
	int32_t preemptions;    /* times it was suspended */
	int32_t moves;          /* times it was moved to defragment */
	mu_time_t estimate;     /* expected run time */
	mu_estimate_src_t estimate_src;
	mu_time_t expected_start; /* pending: when it should start, or
	                           * MU_TIME_NONE when unknown */
	bool reserved;          /* expected_start comes from a reservation
	                         * (else from aggregate capacity); the last
	                         * blocked jobs of a cycle are reserved only
	                         * after mu_engine_settle() */
	mu_reason_t last;       /* last pending reason */
	const char *pool;       /* the pool it runs in (or, pending, its
	                         * preferred one); NULL when it names none */
	int32_t pool_rank;      /* that pool's place in its list (0 first) */
	int32_t npools;         /* pools it accepts */
	mu_time_t max_wait;     /* its class of service; 0 = none */
	bool escalated;         /* waited past max_wait (escalation says what
	                         * it got) */
	mu_escalation_t escalation; /* its rule: boost, reserve or preempt */
} mu_job_info_t;

/* What an escalated job's priority is raised by (docs/policy.md,
 * "Classes of service"). */
#define MU_ESCALATE_BOOST 1000000

typedef struct mu_queue_info {
	const char *name;
	mu_id_t parent;
	int depth;
	int32_t priority;
	mu_res_t deserved, limit, used; /* accounting units */
	mu_res_t fair;          /* fair share at the last cycle */
	mu_res_t demand;        /* used + pending requests, at the last cycle */
	int32_t pending_jobs, running_jobs;
	double decayed_gpu;     /* usage_half_life: its GPU usage averaged
	                         * with that half-life (milli-GPU) */
	double decay_factor;    /* what its over-quota weight is multiplied
	                         * by (1 when decay is off) */
	double decayed[MU_RES_MAX];       /* the same per resource (accounting
	                                   * units; CPU, memory and every
	                                   * resource the fair share divides) */
	double decay_factors[MU_RES_MAX]; /* the factor per resource */
} mu_queue_info_t;

int32_t mu_engine_njobs(const mu_engine_t *e);   /* ids given (forgotten ones are given again) */
int32_t mu_engine_nnodes(const mu_engine_t *e);
int32_t mu_engine_nqueues(const mu_engine_t *e);
int mu_engine_job_info(const mu_engine_t *e, mu_id_t job, mu_job_info_t *out);
int mu_engine_queue_info(const mu_engine_t *e, mu_id_t q, mu_queue_info_t *out);
const char *mu_engine_node_name(const mu_engine_t *e, mu_id_t node);
mu_id_t mu_engine_job_find(const mu_engine_t *e, const char *name);
mu_id_t mu_engine_node_find(const mu_engine_t *e, const char *name);
mu_id_t mu_engine_queue_find(const mu_engine_t *e, const char *name);
/* The node a pod is bound to, or -1. */
mu_id_t mu_engine_pod_node(const mu_engine_t *e, mu_id_t job, int32_t podset,
			   int32_t pod);
/* What one node holds (nodeinfo.c), for views of the cluster. */
typedef struct mu_node_info {
	const char *name;
	const char *gpu_model;  /* NULL when none */
	bool unschedulable;
	int ngpu;
	mu_res_t alloc, free;   /* as mu_node_view_t's */
	int16_t gpu_free[MU_MAX_GPUS]; /* free milli-GPU of each device */
	int32_t pods;           /* bound pods */
	int32_t reserved_gpus;  /* whole GPUs held by this cycle's backfill
	                         * reservations, 0 when none */
	mu_time_t reserved_at;  /* when the earliest is due, or MU_TIME_NONE */
} mu_node_info_t;

/* MU_ENOENT for an unknown or removed node.  O(devices). */
int mu_engine_node_info(const mu_engine_t *e, mu_id_t node, mu_node_info_t *out);

/* The cluster's GPU supply as the engine keeps it (owned by e, valid until
 * its next change), or NULL when the policy does not read it
 * (MU_SCORE_SUPPLY).  O(1). */
const mu_supply_t *mu_engine_supply(const mu_engine_t *e);
/* The cluster's GPU devices per model as the engine keeps them (owned by
 * e, valid until its next node change), with each model's pressure by the
 * policy's mix as of its last scoring (mu_gpu_models_t).  O(1). */
const mu_gpu_models_t *mu_engine_gpu_models(const mu_engine_t *e);
/* What a request of mib MiB of one GPU's memory (KAI's gpu-memory
 * annotation, mu_podset_spec_t.gpu_memory) asks as a GPU share, as the
 * engine resolves it at submission: ceil(mib x 1000 / S) milli-GPU of the
 * smallest GPU memory S among the live GPU nodes' (label
 * nvidia.com/gpu.memory) that holds mib, a whole GPU when that is all of
 * it, added to req.  MU_EINVAL for mib <= 0 or a req that already asks
 * GPUs, MU_ENOENT when no node's GPUs hold mib.  O(values of the label):
 * the engine keeps them at node changes (the twenty-first round). */
int mu_engine_gpu_memory_req(const mu_engine_t *e, int64_t mib, mu_res_t *req);

/* The first filter one pod of pod set `podset` of job would fail on node
 * as things stand now (static filters, resources, reservations, topology
 * spread, pod affinity and anti-affinity, bound pods' anti-affinity, in
 * that order), or MU_F_COUNT when it would pass, into *out.  MU_ENOENT:
 * unknown job or node (or a removed one); MU_EINVAL: podset out of range;
 * MU_ESTATE: the job finished.  O(terms) after the first call of a
 * cycle's state, O(nodes) when spread counts are refreshed. */
int mu_engine_node_check(mu_engine_t *e, mu_id_t job, int32_t podset,
			 mu_id_t node, mu_filter_t *out);

/* The filters between pods (topology spread, pod affinity and
 * anti-affinity, bound pods' anti-affinity) of a placed job run again as
 * things now stand: each bound pod of job whose pod set has terms of its
 * own, released for its check and bound back on its very devices, on its
 * node.  For a caller that places a job with pods counted as bound that
 * are not there (the fleet's reclaim nomination, round 23) and then asks,
 * with them gone or back, what kube-scheduler's two filter passes for a
 * pod beside nominated pods ask (RunFilterPluginsWithNominatedPods).
 * *out gets the first filter a pod fails and *pod its index in the job's
 * pods, or MU_F_COUNT and -1 when all pass.  MU_EINVAL for a NULL
 * argument, MU_ENOENT for an unknown job, MU_ESTATE for a finished one.
 * O(1) while no job uses pod terms; else O(its bound pods with terms x
 * (terms + spread counts)). */
int mu_engine_job_recheck(mu_engine_t *e, mu_id_t job, mu_filter_t *out, int32_t *pod);

/* Tells the engine that its policy's state (score_state) changed in a way
 * that moves scores, e.g. a mix's muster settings chosen again mid-run:
 * every score the engine keeps (nodeindex.c's heaps) is dropped and built
 * again when next needed.  O(classes x indexes). */
void mu_engine_rescore(mu_engine_t *e);

/* Cluster totals: allocatable and in use, accounting units. */
void mu_engine_totals(const mu_engine_t *e, mu_res_t *alloc, mu_res_t *used);

/* --- Node pools (pools.c) ------------------------------------------------ */

/* Adds or changes a node pool.  Its nodes are those whose labels match
 * p->match; a node matching two pools is refused: MU_EINVAL (nothing
 * changed), as is an empty selector or a bad name.  MU_ESTATE when the
 * change would move a node that has pods bound into or out of the pool,
 * MU_ELIMIT when the engine's named resource slots are used up (each pool
 * takes one: its GPUs, named "nvidia.com/gpu@POOL").  Queues get deserved
 * 0, no limit and their GPU weight there until they say otherwise.
 * O(nodes x labels). */
int mu_engine_pool_upsert(mu_engine_t *e, const mu_pool_spec_t *p);

typedef struct mu_pool_info {
	const char *name;
	int32_t slot;         /* its GPU slot in queue vectors */
	int32_t rslot[MU_POOL_NRES]; /* its slot per resource (mu_pool_res_t;
	                              * [MU_POOL_GPU] == slot), -1 when no
	                              * queue gives a quota of it there */
	int32_t nodes;        /* live nodes in it */
	int64_t gpus, used;   /* milli-GPU: allocatable and in use */
} mu_pool_info_t;

int32_t mu_engine_npools(const mu_engine_t *e);
/* Pool i (0 .. npools-1); MU_ENOENT out of range.  O(1). */
int mu_engine_pool_info(const mu_engine_t *e, int32_t i, mu_pool_info_t *out);
/* The pool of a node, or -1.  O(1). */
int32_t mu_engine_node_pool(const mu_engine_t *e, mu_id_t node);
/* Writes why pending job id is in none of its pools, one clause per pool
 * in its order ("pool a100: ...; pool h100: ..."), or "" for a job that
 * names no pools or was not tried yet.  Returns the length it wanted, as
 * snprintf does, or MU_ENOENT. */
int mu_engine_pool_explain(const mu_engine_t *e, mu_id_t id, char *buf, size_t len);
/* Writes job id's class of service: its maximum wait and rule, and, once
 * escalated, what the rule gave it ("escalated (reserve): waited more
 * than ..."); "" for a job without a maximum wait or finished.  Returns
 * the length it wanted, as snprintf; MU_ENOENT for an unknown id. */
int mu_engine_service_explain(const mu_engine_t *e, mu_id_t id, char *buf, size_t len);

/* --- What if (whatif.c) --------------------------------------------------- */

/* The answer to "would this job start here now?". */
typedef struct mu_whatif {
	bool fits;               /* its gang (minMember pods) is placed now */
	mu_reason_t reason;      /* when it does not: as a pending decision's */
	mu_time_t expected_start; /* when it does not and want_start: when
	                          * its reservation would be due, node by
	                          * node, as running pods end (the backfill's
	                          * replay; MU_TIME_NONE: never, or not
	                          * asked) */
} mu_whatif_t;

/* Places job spec s as a cycle would place it at now (its queue's limits,
 * then pod by pod, under its topology constraint), without preemption,
 * and takes every bind back: the engine is left as it was, and the job is
 * neither submitted nor named (s->name need not be unique).  s stays the
 * caller's.  MU_EINVAL / MU_ERANGE / MU_ENOENT for a spec that
 * mu_engine_job_submit() would refuse, MU_ENOMEM.  O(pods x class nodes),
 * plus O(running pods + class nodes) with want_start. */
int mu_engine_job_whatif(mu_engine_t *e, const mu_job_spec_t *s, mu_time_t now,
			 bool want_start, mu_whatif_t *out);
/* The same, as if the running jobs gone[0..ngone) had left first: their
 * pods are released for the dry run (as the preemption's evictions are,
 * logged) and bound back after on the very nodes and devices they held,
 * so the engine is left as it was (but for its release generation:
 * failures it cached before are tried again; one found with them gone
 * holds with them back).  For a caller that chooses victims
 * itself (the fleet's reclaim across clusters).  MU_ENOENT for a gone id
 * out of range; a job not running is skipped.  O(whatif + their pods). */
int mu_engine_job_whatif_without(mu_engine_t *e, const mu_job_spec_t *s, mu_time_t now,
				 const mu_id_t *gone, int32_t ngone, mu_whatif_t *out);
/* The same, as if only npods[i] of the bound pods of each gone[i] had left
 * (its last bound pods, in pod order; npods NULL, or an entry <= 0: all of
 * them): an elastic job shrunk towards its minimum instead of stopped, for
 * a caller that weighs surplus pods as victims (the fleet's reclaim, round
 * 16).  Everything else as mu_engine_job_whatif_without(), which is this
 * with npods NULL. */
int mu_engine_job_whatif_without_pods(mu_engine_t *e, const mu_job_spec_t *s, mu_time_t now,
				      const mu_id_t *gone, const int32_t *npods, int32_t ngone,
				      mu_whatif_t *out);
/* The same, and where: nodes[i] (i < nnodes) gets the node the dry run
 * put pod i of s on (pods in pod set order, each set's replicas in turn)
 * when it fits, or -1 (a pod it did not place: an elastic job's pods past
 * those that fit, i past s's pods, every pod when the job does not fit;
 * on an error nodes is left as it was or partly written).  For a caller
 * that holds a claimant's room node by node (the fleet's nomination,
 * round 22, as kube-scheduler's nominated node).  The caller owns nodes.
 * MU_EINVAL also for nnodes < 0, or nodes NULL with nnodes > 0.
 * Everything else as mu_engine_job_whatif_without_pods(). */
int mu_engine_job_whatif_where(mu_engine_t *e, const mu_job_spec_t *s, mu_time_t now,
			       const mu_id_t *gone, const int32_t *npods, int32_t ngone,
			       mu_id_t *nodes, int32_t nnodes, mu_whatif_t *out);

/* --- Pods bound outside the cycle (pods.c) ------------------------------- */

/* Records that pod `pod` of pod set `podset` of job is already bound to
 * node (after a restart, by an earlier leader, or by another scheduler).
 * devices gives the GPUs, NUMA node, NIC and pinned CPUs it holds (the
 * fields of a MU_DEC_BIND; gpu_milli comes from the request); they must be
 * exactly what one pod of the set takes and free on the node.  NULL, or a
 * value naming no device, lets the engine choose them as a cycle would.
 * The node's free resources need not cover the pod: the cluster says it
 * runs there.  A pending job that reaches minMember runs from `start`.
 * MU_ENOENT: unknown job or node (or a removed one).  MU_EINVAL: pod set
 * or pod out of range, or devices that cannot be this pod's (a GPU, NUMA
 * node, NIC or CPU the node lacks, the wrong GPU count, or a NUMA node,
 * NIC or CPUs the pod set does not ask for).  MU_ESTATE: the job finished,
 * the pod is bound already, or a named device is held by another pod.
 * On error nothing changed.  O(GPUs + CPU words + resources). */
int mu_engine_pod_bound(mu_engine_t *e, mu_id_t job, int32_t podset,
			int32_t pod, mu_id_t node, const mu_decision_t *devices,
			mu_time_t start);

/* Takes back a bind that did not go through: the pod's resources and
 * devices are freed and the pod waits to be placed again.  A running job
 * left with fewer than minMember pods bound is pending again (its other
 * pods stay bound).  MU_ENOENT: unknown job; MU_EINVAL: pod set or pod out
 * of range; MU_ESTATE: the job finished or the pod is not bound.  On error
 * nothing changed.  O(resources + pending jobs of its queue). */
int mu_engine_pod_unbind(mu_engine_t *e, mu_id_t job, int32_t podset,
			 int32_t pod, mu_time_t now);

/* How many of job's pods a disruption budget lets go now (a
 * PodDisruptionBudget's status.disruptionsAllowed for the pods it
 * covers), or -1 for no budget (the default).  Victims are then chosen
 * with the fewest budget violations first, as kube-scheduler picks its
 * preemption node: a victim violates when its eviction takes more pods
 * than allowed (a whole job: its bound pods; a surplus pod: one).  Such a
 * victim is still taken when nothing else makes room; the eviction itself
 * then meets the budget (a 429 the caller retries).  MU_ENOENT: unknown
 * job; MU_ERANGE: allowed < -1.  O(1). */
int mu_engine_job_disruptions(mu_engine_t *e, mu_id_t job, int32_t allowed);

/* --- Fair share as data (fairshare.c) -------------------------------------- */

/* One of the siblings whose parent's share mu_fairshare_divide() divides. */
typedef struct mu_fair_sib {
	int32_t key;            /* order among equal priorities (lower first;
	                         * the engine: the queue id) */
	int32_t priority;       /* the surplus goes to higher ones first */
	mu_res_t deserved;      /* accounting units */
	mu_res_t demand;        /* what it uses and waits for, capped by its
	                         * limit */
	double weight[MU_RES_MAX]; /* over-quota weights (the engine: times
	                         * its decay factors) */
	mu_res_t fair;          /* out: its share of every divided slot */
} mu_fair_sib_t;

/* Divides cap among sibs[0..n), slot by slot for every slot below nres
 * but pods and the GPU-share slot, as the engine divides a parent's fair
 * share among its children each cycle: each gets min(deserved, demand)
 * (water-filled by deserved when those pass cap), then the surplus by
 * priority groups, water-filled by over-quota weight, never past a
 * demand.  The other slots of fair are left as they were.  The caller
 * owns sibs.  MU_ENOMEM.  O(nres x n log n). */
int mu_fairshare_divide(mu_fair_sib_t *sibs, int32_t n, const mu_res_t *cap, int nres);

/* A queue's dominant share, the key siblings are served by (lower
 * first): usage over fair share, GPUs alone for a queue that uses or
 * wants GPUs, else the largest over the other slots below nres (not pods
 * or the GPU-share slot); a slot used with no fair share counts as 1e6 x
 * (1 + used / total).  O(nres). */
double mu_fairshare_ratio(const mu_res_t *used, const mu_res_t *demand,
			  const mu_res_t *fair, const mu_res_t *total, int nres);


/* --- Time-decayed usage as data (fairshare.c) ------------------------------
 * The engine's usage_half_life, on plain numbers, so that the fleet's hub
 * queues decay usage as the engine does (the engine calls these too). */

/* The part of decayed usage kept after dt ms at half-life h (> 0):
 * 2^(-dt/h).  O(1). */
double mu_fairshare_keep(double dt, mu_time_t half_life);
/* Decayed usage aged by keep with usage used meanwhile:
 * decayed x keep + used x (1 - keep).  O(1). */
double mu_fairshare_age(double decayed, int64_t used, double keep);
/* A queue's decay factor on one resource among its siblings (the factor
 * its over-quota weight is multiplied by): 2^(-u/s), u its share of the
 * siblings' decayed usage (decayed / decayed_sum; 0 when the sum is 0), s
 * its share of their weights (weight / weight_sum); 1 when s is 0.  O(1). */
double mu_fairshare_decay_factor(double decayed, double decayed_sum, double weight,
				 double weight_sum);

/* --- Quota and reclaim rules as data (queue.c, preempt.c) -----------------
 * One queue's side of the engine's rules, at one level of its path from
 * the job's queue up; the engine walks the path and calls these, and so
 * does the fleet on its hub queues. */

/* The slots a claim is judged on when no node pool names them: GPUs for a
 * claim that asks GPUs, else CPU and memory; a bit mask (1 << slot).
 * O(1). */
int mu_quota_dominant(const mu_res_t *claim);
/* A non-preemptible job's quota rule: the first slot r in mask dom that
 * claim asks where used_np (what the queue's non-preemptible jobs use) +
 * claim passes deserved, or -1 (within).  O(slots). */
int mu_quota_np_over(const mu_res_t *used_np, const mu_res_t *claim,
		     const mu_res_t *deserved, int dom);
/* The claimant's side of reclaim: whether used + claim stays within bound
 * (its deserved quota for KAI's strategy D, its fair share for F) on the
 * slots below nres in mask dom that claim asks.  O(nres). */
bool mu_reclaim_within(const mu_res_t *used, const mu_res_t *claim, const mu_res_t *bound,
		       int dom, int nres);
/* The victim's side: the first slot below nres in mask dom that unit
 * holds where used is not above deserved (with fair set: or not above
 * fair, strategy F), or -1 when it is above on every one (the victim may
 * go).  O(nres). */
int mu_reclaim_not_above(const mu_res_t *used, const mu_res_t *unit, const mu_res_t *deserved,
			 const mu_res_t *fair, int dom, int nres);

#endif
