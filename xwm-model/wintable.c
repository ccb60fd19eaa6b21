/* Window lookup by id: a chained hash table beside the stacking list.
 *
 * Every event names its window by id, and a busy client sends hundreds of
 * events a second (DamageNotify, PropertyNotify, ConfigureNotify): a walk
 * of the stacking list per event grows with the number of top-level
 * windows, override-redirect ones included (menus, tooltips, hidden
 * toolkit windows: a GTK or EFL desktop keeps dozens). The table keeps a
 * lookup constant; it doubles once it holds more windows than buckets,
 * and never shrinks (a few pointers per window a session has had at
 * once). Pure: no X calls, unit-tested in tests/xwm-unit. */
#include <stdlib.h>

#include "model.h"

#define INITIAL_BUCKETS 64u

/* Fibonacci hashing: X ids are allocated in runs of consecutive values
 * inside a client's id range, which this spreads over all buckets. */
static size_t bucket_of(const struct xwm_wintable *t, xcb_window_t id)
{
	return (size_t)(((uint64_t)id * 0x9e3779b97f4a7c15ull) >> 32) & (t->nbuckets - 1);
}

static bool grow(struct xwm_wintable *t)
{
	size_t n = t->nbuckets ? t->nbuckets * 2 : INITIAL_BUCKETS;
	struct xwm_window **b = calloc(n, sizeof(*b));
	if (!b)
		return false;
	struct xwm_wintable bigger = { .buckets = b, .nbuckets = n, .count = t->count };
	for (size_t i = 0; i < t->nbuckets; i++) {
		for (struct xwm_window *w = t->buckets[i], *next; w; w = next) {
			next = w->hash_next;
			size_t k = bucket_of(&bigger, w->id);
			w->hash_next = b[k];
			b[k] = w;
		}
	}
	free(t->buckets);
	*t = bigger;
	return true;
}

bool xwm_wintable_insert(struct xwm_wintable *t, struct xwm_window *w)
{
	/* Past one window per bucket on average, or the first insert. */
	if (t->count >= t->nbuckets && !grow(t) && !t->nbuckets)
		return false;
	size_t k = bucket_of(t, w->id);
	w->hash_next = t->buckets[k];
	t->buckets[k] = w;
	t->count++;
	return true;
}

void xwm_wintable_remove(struct xwm_wintable *t, struct xwm_window *w)
{
	if (!t->nbuckets)
		return;
	for (struct xwm_window **p = &t->buckets[bucket_of(t, w->id)]; *p; p = &(*p)->hash_next) {
		if (*p == w) {
			*p = w->hash_next;
			w->hash_next = NULL;
			t->count--;
			return;
		}
	}
}

struct xwm_window *xwm_wintable_lookup(const struct xwm_wintable *t, xcb_window_t id)
{
	if (!t->nbuckets)
		return NULL;
	for (struct xwm_window *w = t->buckets[bucket_of(t, id)]; w; w = w->hash_next)
		if (w->id == id)
			return w;
	return NULL;
}

void xwm_wintable_finish(struct xwm_wintable *t)
{
	free(t->buckets);
	*t = (struct xwm_wintable){ 0 };
}
