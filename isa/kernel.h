/*
 * kernel: a kernel description, loaded from JSON and flattened to code.
 *
 * The JSON mirrors the CUDA source (loops, ifs, calls in the same order);
 * the loader resolves parameters and launch constants, compiles every
 * expression once, and flattens structured control flow into a linear
 * array of instructions with explicit branch and reconvergence targets,
 * which is what the SM's SIMT stack executes.
 */
#ifndef SMSIM_KERNEL_H
#define SMSIM_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"
#include "expr.h"
#include "lower.h"
#include "jdoc.h"
#include "ops.h"

/* Register slots every thread has, before the kernel's own variables. */
enum builtin_slot { SLOT_TID, SLOT_LANE, SLOT_WARP, SLOT_BLOCK, SLOT_BUILTINS };

enum space { SPACE_SHARED, SPACE_GLOBAL };

struct buffer {
	char name[48];
	enum space space;
	uint32_t elem_bytes;
	uint64_t elems;
	uint64_t base; /* byte address in its space (per block for shared) */
};

enum pipe_scope { PIPE_SCOPE_BLOCK, PIPE_SCOPE_THREAD };

struct pipeline_decl {
	char name[48];
	enum pipe_scope scope;
	uint32_t stages;
	bool warp_group; /* block scope over a tile of 32: make_pipeline(tiled_partition<32>(block), &state[warp]) */
};

/* cuda::barrier<thread_scope_block> objects in shared memory: name[count]. */
struct barrier_decl {
	char name[48];
	uint32_t count;
};

/* buf[index]: an element of a named buffer; index counts elements. */
struct memref {
	int16_t buf; /* -1: none */
	struct expr index;
};
enum { FROM_OUT = -1, FROM_OFF = -2 }; /* insn.from.buf when no buffer is named */

enum copy_group { GROUP_THREAD, GROUP_BLOCK };

/* How make_pipeline splits the group: all both, the first P produce, or a role per thread. */
enum pipe_split { SPLIT_UNIFIED, SPLIT_COUNT, SPLIT_ROLE };

#define FMA_MAX_CHAINS 8
#define BULK_MAX_PRIOR 63 /* cp.async.bulk.wait_group N: the newest groups a thread's ring remembers (sim/units/bulk.c) */
#define MMA_MAX_INSNS 24 /* an mma op's LDSMs and one round of HMMAs (a lowered form holds 32 at most) */

struct insn {
	enum op op;
	uint32_t where;  /* index into kernel.paths: the JSON path, for messages */
	int32_t target;  /* BRZ/JMP destination */
	int32_t reconv;  /* BRZ: where the split paths meet again */
	uint16_t slot;   /* LET/SET: variable */
	int16_t obj;     /* pipeline index (-1: none) */
	int16_t bar;     /* barrier index (-1: none); element bar_index */
	uint8_t group;   /* MEMCPY_ASYNC: enum copy_group; SYNCTHREADS: GROUP_BLOCK when written block.sync() */
	uint8_t split;   /* MAKE_PIPELINE: enum pipe_split, e[0] the count or role */
	bool parity;     /* BARRIER_TRY_WAIT/TEST_WAIT: e[0] is a phase parity, not an arrival token */
	bool complete_tx; /* MEMCPY_ASYNC bulk: completes bytes only; a barrier_arrive's expect_tx announced them */
	uint32_t align;  /* MEMCPY_ASYNC: bytes, as the pointers' alignment promises */
	bool sized;      /* MEMCPY_ASYNC: "align" given, i.e. cuda::aligned_size_t<align>: bytes a multiple of it */
	bool zfill;      /* PIPELINE_MEMCPY_ASYNC: e[1] is the zero-filled tail (__pipeline_memcpy_async's zfill) */
	bool chained;    /* PIPELINE_MEMCPY_ASYNC: continues a run, its address a run-time step from the last copy's register */
	bool own_register; /* PIPELINE_MEMCPY_ASYNC: its shared address in a register of its own, computed before (its SASS);
			      MEMCPY_ASYNC: its shared destination's base in a register computed before the loop */
	bool tx_only;    /* MEMCPY_ASYNC: cuda::device::memcpy_async_tx, a bulk copy whose bytes the caller expect_tx'd */
	bool read_only;  /* BULK_WAIT_GROUP: .read, the groups' shared reads only (e[0]: N) */
	bool narrow;     /* LET/SET/BRZ: reads and writes only 32-bit variables and builtins */
	bool unrolled;   /* the control of a loop nvcc unrolls whole ("unroll": true): it issues nothing */
	bool remat;      /* JMP of a for with "remat": the compiled loop re-reads the special registers its ops use (isa/lower.c) */
	bool reload;     /* BRZ of a loop with "reload": each test reloads a bound from the constant bank (ULDC, isa/lower.c) */
	uint8_t chains;  /* FMA: independent dependent chains it interleaves (ilp), 1..FMA_MAX_CHAINS */
	uint64_t reads;  /* variables (not builtins) its expressions read: bit i is slot i, 63 stands for 63 on */
	struct expr e[2]; /* LET/SET/BRZ: e[0]; MEMCPY: bytes; COMPUTE: k, per-thread element; N, n, count;
			     NANOSLEEP: ns; BARRIER_TRY/TEST_WAIT: token or parity, try_wait's suspend_ns */
	struct expr bar_index;
	struct memref dst, src;
	struct memref src2; /* COMPUTE: the second input (a dot product's other tile); buf -1: none */
	/*
	 * COMPUTE: where the input's words are expected to come from, the global
	 * pointer the provenance check follows (+ the thread's element); buf
	 * FROM_OUT: out's index, the documented examples' identity map; FROM_OFF:
	 * "from": false, no check.  Read by the check alone: it issues nothing.
	 */
	struct memref from;
	/*
	 * MMA: one k-step of 16 over a warp tile of tm x tn fragments: A at src
	 * (row-major, e[0] elements per row), B at dst (read, not written; e[1]
	 * elements per row; b_col: stored n-major, ldmatrix without .trans).
	 * n8: mma.sync m16n8k16 (tn counts 8-wide tiles), else wmma m16n16k16.
	 * rep: each HMMA repeated (the R knob).
	 */
	struct {
		uint8_t tm, tn, rep;
		bool n8, b_col, bf16;
		/*
		 * wmma: its sequence's first instruction reads SR_LANEID and the lane_n
		 * from lane_at on compute each lane's fragment row offsets from it
		 * (isa/lower.c).  Within a #pragma unroll loop (lane_slot its variable,
		 * lane_first its first value) only the first trip computes them;
		 * lane_slot -1: every execution does.
		 */
		uint8_t lane_n, lane_at;
		int16_t lane_slot;
		int64_t lane_first;
		uint8_t ldsm_at; /* its first LDSM's place in its sequence (each HMMA waits for its two fragments' LDSMs) */
	} mma;
};

/* An mma's LDSMs: one per A fragment and one per 16 columns of B (isa/lower.c, sim/engine/exec.c). */
static inline int mma_ldsm_count(const struct insn *in)
{
	int n8 = in->mma.n8 ? in->mma.tn : 2 * in->mma.tn;
	return in->mma.tm + (n8 + 1) / 2;
}

struct param {
	char name[48];
	int64_t value;
};

#define KERNEL_MAX_ROLES 8

struct kernel {
	char name[64];
	char source[512];
	struct param *params;
	int nparams;
	struct buffer *bufs;
	int nbufs;
	struct pipeline_decl *pipes;
	int npipes;
	struct barrier_decl *bars;
	int nbars;
	struct insn *code;
	int ncode;
	int nslots;              /* builtins + variables */
	uint64_t wide_slots;     /* variables declared 64-bit (size_t); bit 63 stands for slots 63 on */
	uint64_t unrolled_slots; /* variables of unrolled loops: immediates in the compiled code */
	uint64_t const_slots;    /* variables that only ever hold one constant: immediates in the compiled code */
	struct lform *lowered;   /* per op: the instruction sequence it issues (isa/lower.c) */
	/*
	 * The operands of the local-array loads the lowering emitted (an LDL's
	 * LI_LOCAL_SITE): what names the element, evaluated when the LDL issues.
	 */
	struct expr *local_reads;
	int nlocal_reads;
	char (*slot_names)[48];  /* nslots names */
	char **paths;            /* JSON paths of statements, for messages */
	int *path_line, *path_col; /* ... and where each is in the file (1-based; 0 when unknown) */
	int npaths;
	struct expr_pool pool;
	char role_names[KERNEL_MAX_ROLES][32]; /* "roles": what a kernel calls its warps (producer, consumer, ...) */
	int nroles;
	int8_t *warp_role;       /* per warp index in the block: its role_names index, -1: none; NULL: no "roles" */
	int nwarp_roles;         /* warps warp_role covers */
	uint64_t shared_bytes;   /* per block */
	uint64_t global_bytes;
	char file[512];
};

/* The launch a kernel is compiled for: these fold into expressions. */
struct launch {
	int64_t block_size; /* threads per block */
	int64_t blocks;     /* resident on the simulated SM */
	int64_t grid_blocks; /* blocks in the whole grid (nblocks); >= blocks */
};

/* A parameter override: name=value, from an experiment or --set. */
struct param_override {
	char name[48];
	int64_t value;
	bool used;
	char from[96]; /* where the value came from, for messages ("--set stages=0"); "": the experiment's params */
};

/*
 * Loads and compiles a kernel description.  Overrides replace parameter
 * defaults (an override naming no parameter is left unused for the caller
 * to report).  On failure d names file, JSON path, line:column.
 */
int kernel_load(const char *file, struct param_override *ov, int nov, const struct launch *launch,
		struct kernel *out, struct diag *d);
/*
 * As kernel_load, but an error does not stop it: it goes on with the next
 * statement or declaration and adds every error to errs, in file order
 * (smsim check).  *out is what was compiled, errors or not, for the caller
 * to describe and kernel_free (zeroed when the file could not be parsed).
 * Returns 0 when there was no error.
 */
int kernel_check(const char *file, struct param_override *ov, int nov, const struct launch *launch,
		 struct kernel *out, struct diag_list *errs);
void kernel_free(struct kernel *k);

/* The role of warp index w of a block ("producer"), or NULL when the kernel gives it none. */
const char *kernel_warp_role(const struct kernel *k, uint32_t w);

/* Reads only the parameter names and defaults (for `smsim list` and --set checks). */
/* The variables that only ever hold one constant (a bit per slot below 63): what the compiler propagates. */
uint64_t constant_variables(const struct kernel *k);
int kernel_param_value(const struct kernel *k, const char *name, int64_t *value);

#endif
