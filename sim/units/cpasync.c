#include "cpasync.h"

#include "simint.h"

static struct cpa_thread *thread_of(struct sim *s, const struct warp *w, int lane)
{
	return &s->blocks[w->block].cpa[w->in_block * 32 + (uint32_t)lane];
}

static struct cpa_open *open_of(struct sim *s, const struct warp *w, int lane)
{
	return &s->blocks[w->block].cpa_open[w->in_block * 32 + (uint32_t)lane];
}

/* The lane's open batch takes a copy issued at issue that lands at land. */
static inline void open_takes(struct cpa_open *t, uint64_t issue, uint64_t land)
{
	if (issue < t->first)
		t->first = issue;
	if (land > t->land)
		t->land = land;
	if (land > t->last_land)
		t->last_land = land;
}

/*
 * A copy of every lane is kept once for the warp (struct cpa_whole) until
 * something reads the lanes' open batches: open_takes keeps a minimum and
 * maxima, so taking the copies merged is taking them one by one.  Four
 * copies to a commit in the GEMM cost four 32-lane walks, and a block-scope
 * commit after a group copy a walk to find what one record says.
 */
void cpa_copy(struct sim *s, struct warp *w, uint32_t lanes, uint64_t issue, uint64_t land)
{
	struct cpa_whole *whole = &s->cpa_whole[w->id];
	if (lanes == 0xffffffffu) {
		open_takes(&whole->kept, issue, land);
		return;
	}
	whole->lanes_open = true;
	struct cpa_open *t0 = open_of(s, w, 0);
	for (uint32_t m = lanes; m; m &= m - 1)
		open_takes(t0 + __builtin_ctz(m), issue, land);
}

/* The lanes' last landings leave out the whole-warp copies: cpa_last_land adds them. */
static void settle_lanes(struct sim *s, struct warp *w, struct cpa_whole *whole)
{
	struct cpa_open *o = open_of(s, w, 0);
	for (int lane = 0; lane < 32; lane++, o++) {
		if (whole->kept.first < o->first)
			o->first = whole->kept.first;
		if (whole->kept.land > o->land)
			o->land = whole->kept.land;
	}
	whole->kept.first = NEVER;
	whole->kept.land = 0;
	whole->lanes_open = true;
}

static inline void settle(struct sim *s, struct warp *w)
{
	struct cpa_whole *whole = &s->cpa_whole[w->id];
	if (whole->kept.first != NEVER || whole->kept.land)
		settle_lanes(s, w, whole);
}

void cpa_settle(struct sim *s, struct warp *w) { settle(s, w); }

bool cpa_take_whole(struct sim *s, struct warp *w, uint64_t *first, uint64_t land[32])
{
	struct cpa_whole *whole = &s->cpa_whole[w->id];
	uint64_t wf = whole->kept.first, wl = whole->kept.land;
	whole->kept.first = NEVER;
	whole->kept.land = 0;
	*first = wf;
	if (!whole->lanes_open) { /* every lane's open batch is empty: the kept copies are all of it */
		land[0] = wl;
		return true;
	}
	whole->lanes_open = false;
	struct cpa_open *o = open_of(s, w, 0);
	for (int lane = 0; lane < 32; lane++, o++) {
		uint64_t of = o->first < wf ? o->first : wf;
		*first = of < *first ? of : *first;
		land[lane] = o->land > wl ? o->land : wl;
		o->first = NEVER;
		o->land = 0;
	}
	return false;
}

uint32_t cpa_epoch(struct sim *s, const struct warp *w, int lane) { return thread_of(s, w, lane)->commits; }

uint64_t cpa_last_land(struct sim *s, const struct warp *w, int lane)
{
	uint64_t own = open_of(s, w, lane)->last_land, whole = s->cpa_whole[w->id].kept.last_land;
	return whole > own ? whole : own;
}

/* The lane's thread commits its open batch o into actual batch m. */
static inline void close_open(struct cpa_thread *t, struct cpa_open *o, uint32_t m)
{
	uint32_t n = t->commits++;
	uint64_t own = o->land;
	if (n > 0 && t->own_land[(n - 1) % CPA_RING] > own)
		own = t->own_land[(n - 1) % CPA_RING];
	t->own_land[n % CPA_RING] = own;
	t->actual[n % CPA_RING] = m;
	o->first = NEVER;
	o->land = 0;
}

/*
 * A whole warp's commit while its threads have committed together (each as
 * often: one ring position for them all): the lanes' open batches taken as
 * they close (cpa_take_whole) and the threads' records in one pass.  The
 * lowest first issue and the latest landing come back.
 */
static void commit_whole(struct sim *s, struct warp *w, uint32_t m, uint64_t *first, uint64_t *land)
{
	uint64_t ol[32];
	if (cpa_take_whole(s, w, first, ol))
		for (int lane = 1; lane < 32; lane++)
			ol[lane] = ol[0];
	struct cpa_thread *t = thread_of(s, w, 0);
	uint32_t n = t->commits, at = n % CPA_RING, before = (n - 1) % CPA_RING;
	uint64_t hi = 0;
	for (int lane = 0; lane < 32; lane++, t++) {
		hi = ol[lane] > hi ? ol[lane] : hi;
		t->commits = n + 1;
		t->own_land[at] = n > 0 && t->own_land[before] > ol[lane] ? t->own_land[before] : ol[lane];
		t->actual[at] = m;
	}
	*land = hi;
}

/* The warp's actual batch m closes: its first copy's issue, and its landing as the prefix maximum. */
static void warp_batch(struct warp *w, uint32_t m, uint64_t first, uint64_t land)
{
	w->cpa.first[m % CPA_WARP_RING] = first;
	if (m > 0 && w->cpa.land[(m - 1) % CPA_WARP_RING] > land)
		land = w->cpa.land[(m - 1) % CPA_WARP_RING];
	w->cpa.land[m % CPA_WARP_RING] = land;
}

void cpa_commit(struct sim *s, struct warp *w, uint32_t mask)
{
	uint32_t m = w->cpa.batches++;
	uint64_t land = 0, first = NEVER;
	s->rep->cp_async_batches++;
	s->rep->cp_async_commits += (uint64_t)__builtin_popcount(mask);
	if (mask == 0xffffffffu && !s->cpa_apart[w->id]) {
		commit_whole(s, w, m, &first, &land);
		warp_batch(w, m, first, land);
		return;
	}
	settle(s, w);
	struct cpa_open *o0 = open_of(s, w, 0); /* lane l's at o0 + l, t0 + l: found once, not per lane */
	struct cpa_thread *t0 = thread_of(s, w, 0);
	for (uint32_t mm = mask; mm; mm &= mm - 1) {
		struct cpa_open *o = o0 + __builtin_ctz(mm);
		if (o->land > land)
			land = o->land;
		if (o->first < first)
			first = o->first;
	}
	warp_batch(w, m, first, land);
	if (mask == 0xffffffffu) {
		for (int lane = 0; lane < 32; lane++)
			close_open(t0 + lane, o0 + lane, m);
	} else {
		s->cpa_apart[w->id] = 1; /* the threads' perceived batches part */
		for (uint32_t mm = mask; mm; mm &= mm - 1)
			close_open(t0 + __builtin_ctz(mm), o0 + __builtin_ctz(mm), m);
	}
}

/*
 * What a thread's wait_prior(n) finds, the warp's release being on actual
 * batch need_actual: its over-wait in cycles (returned) and in batches
 * (*extra) against its own batch TL - n; what the release covers becomes
 * visible to it.
 */
static uint64_t thread_over(struct warp *w, struct cpa_thread *t, uint32_t n, int64_t need_actual, uint64_t release,
			    uint64_t now, uint64_t *extra)
{
	int64_t own = (int64_t)t->commits - 1 - (int64_t)n; /* its own batch TL - N */
	uint64_t own_ready = now;
	if (own >= 0) {
		/* It needed the actual batches up to the one its own batch TL - N went into. */
		int64_t mine = (int64_t)t->actual[own % CPA_RING];
		uint64_t mine_land = need_actual - mine < CPA_WARP_RING ? w->cpa.land[mine % CPA_WARP_RING] : 0;
		if (mine_land > own_ready)
			own_ready = mine_land;
		*extra = need_actual > mine ? (uint64_t)(need_actual - mine) : 0;
		/*
		 * Visible to it now: every own batch that went into an actual
		 * batch up to PL - N (the release covers them all), at least
		 * its batches up to TL - N.
		 */
		uint32_t seen = (uint32_t)own + 1;
		while (seen < t->commits && seen + CPA_RING > t->commits &&
		       (int64_t)t->actual[seen % CPA_RING] <= need_actual)
			seen++;
		if (seen > t->waited)
			t->waited = seen;
	} else {
		*extra = need_actual >= 0 ? (uint64_t)need_actual + 1 : 0;
	}
	return release > own_ready ? release - own_ready : 0;
}

uint64_t cpa_wait_prior(struct sim *s, struct warp *w, uint32_t mask, uint32_t n, uint64_t now, bool batches)
{
	if (n > CPA_MAX_PRIOR)
		n = CPA_MAX_PRIOR; /* the hardware's wait_group takes at most 8 */
	int64_t pl = (int64_t)w->cpa.batches - 1;
	int64_t need_actual = pl - (int64_t)n;
	uint64_t release = now;
	if (need_actual >= 0 && w->cpa.land[need_actual % CPA_WARP_RING] > release)
		release = w->cpa.land[need_actual % CPA_WARP_RING];
	/*
	 * The batches this wait covers count in the latency-hiding figures, each once: the one
	 * the wait releases on exposes what the warp waits for it, the older ones nothing more.
	 */
	for (int64_t b = w->cpa.reported; batches && b <= need_actual; b++) {
		if (need_actual - b >= CPA_WARP_RING)
			continue;
		struct batch_rec rec = {.seq = (uint64_t)b, .first_issue = w->cpa.first[b % CPA_WARP_RING],
					.last_land = w->cpa.land[b % CPA_WARP_RING],
					.exposed = b == need_actual ? release - now : 0};
		stats_batch(s, &rec, STATS_NO_TRACK, 0);
	}
	if (batches && need_actual >= (int64_t)w->cpa.reported)
		w->cpa.reported = (uint32_t)need_actual + 1;
	struct sim_report *r = s->rep;
	struct cpa_thread *t0 = thread_of(s, w, 0);
	if (mask == 0xffffffffu && !s->cpa_apart[w->id]) {
		/*
		 * Every thread of the warp committed and waited together so far: each finds
		 * what thread 0 does, and only thread 0 can be a new worst (a later equal is not).
		 */
		uint64_t extra, over = thread_over(w, t0, n, need_actual, release, now, &extra);
		for (int lane = 1; lane < 32; lane++)
			t0[lane].waited = t0->waited;
		r->overwait_waits += 32;
		r->overwait_cycles += 32 * over;
		r->overwait_extra_batches += 32 * extra;
		if (over > r->overwait_worst_cycles) {
			r->overwait_worst_cycles = over;
			r->overwait_worst_block = w->block;
			r->overwait_worst_thread = w->in_block * 32;
		}
		return release;
	}
	if (mask != 0xffffffffu)
		s->cpa_apart[w->id] = 1; /* what the threads waited for parts */
	for (uint32_t mm = mask; mm; mm &= mm - 1) {
		int lane = __builtin_ctz(mm);
		uint64_t extra, over = thread_over(w, t0 + lane, n, need_actual, release, now, &extra);
		r->overwait_waits++;
		r->overwait_cycles += over;
		r->overwait_extra_batches += extra;
		if (over > r->overwait_worst_cycles) {
			r->overwait_worst_cycles = over;
			r->overwait_worst_block = w->block;
			r->overwait_worst_thread = w->in_block * 32 + (uint32_t)lane;
		}
	}
	return release;
}
