/*
 * smem: the shared-memory bank model.
 *
 * 32 banks of 4 bytes.  A warp access costs one wavefront per distinct
 * 4-byte word in its busiest bank; lanes reading the same word share it
 * (broadcast).  8- and 16-byte accesses are served in half- and quarter-warp
 * phases, each phase costing as above.
 */
#ifndef SMSIM_SMEM_H
#define SMSIM_SMEM_H

#include <stdint.h>

#define SMEM_BANKS 32

struct smem_cost {
	uint32_t wavefronts; /* total, all phases */
	uint32_t ways;       /* the worst bank's distinct words in one phase */
	uint32_t phases;     /* phases with a lane in them: the wavefronts even without a conflict */
};

/*
 * Cost of one warp access: addr[lane] is the byte address of each lane
 * whose bit is set in mask; width is 4, 8 or 16 bytes per lane.
 */
struct smem_cost smem_access_cost(const uint64_t addr[32], uint32_t mask, uint32_t width);
/*
 * smem_access_cost where lane l's address is the lowest lane's plus (l - lowest) * width, width 4, 8
 * or 16: each phase's lanes touch consecutive words, one per bank, and cost one wavefront.
 */
struct smem_cost smem_consecutive_cost(uint32_t mask, uint32_t width);

/*
 * The costs of recent access shapes: a warp access's cost depends only on
 * its lanes' addresses relative to each other and the first one's place
 * among the banks, and a kernel's loops repeat a few shapes at moving
 * bases (a copy's or a load's rows, stage after stage).
 */
#define SMEM_MEMO_SLOTS 256
struct smem_memo {
	struct smem_shape {
		uint32_t mask, width, bank_base; /* width 0: an empty slot */
		int64_t rel[32];                 /* the lanes in mask: addr - the lowest lane's */
		struct smem_cost cost;
	} slot[SMEM_MEMO_SLOTS];
};
/* smem_access_cost, looked up by shape first. */
struct smem_cost smem_access_cost_memo(struct smem_memo *memo, const uint64_t addr[32], uint32_t mask, uint32_t width);

#endif
