/* Unit tests of xwm-model/wintable.c: duet-xwm's window lookup by id. Ids come
 * in runs inside a client's range (as the X server allocates them), the
 * table grows through several sizes, and windows go away in any order:
 * every window must stay findable and every removed one gone. */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "model.h"

#define N 1000

/* Two clients' ranges, as Xvfb hands them out (client index << 21). */
static xcb_window_t id_of(int i)
{
	return (i % 2 ? 0x00400000u : 0x00600000u) + (xcb_window_t)(i / 2) * 3u + 1u;
}

static void test_lookup(void)
{
	struct xwm_wintable t = { 0 };
	static struct xwm_window w[N];

	CHECK(xwm_wintable_lookup(&t, 42) == NULL); /* empty: no buckets yet */
	xwm_wintable_remove(&t, &w[0]);             /* harmless on empty */
	for (int i = 0; i < N; i++) {
		w[i].id = id_of(i);
		CHECK(xwm_wintable_insert(&t, &w[i]));
	}
	CHECK(t.count == N);
	CHECK(t.nbuckets >= N / 2 && (t.nbuckets & (t.nbuckets - 1)) == 0);
	for (int i = 0; i < N; i++)
		CHECK(xwm_wintable_lookup(&t, id_of(i)) == &w[i]);
	CHECK(xwm_wintable_lookup(&t, 0x00400000u) == NULL);
	CHECK(xwm_wintable_lookup(&t, 0xdeadbeefu) == NULL);

	/* Remove every third window, then check all of them. */
	for (int i = 0; i < N; i += 3)
		xwm_wintable_remove(&t, &w[i]);
	for (int i = 0; i < N; i++)
		CHECK(xwm_wintable_lookup(&t, id_of(i)) == (i % 3 ? &w[i] : NULL));
	/* Removing a window that is not in the table changes nothing. */
	size_t count = t.count;
	xwm_wintable_remove(&t, &w[0]);
	CHECK(t.count == count);
	/* A removed window can come back (a window reparented back to the
	 * root gets a new struct, but the id is the same). */
	CHECK(xwm_wintable_insert(&t, &w[0]));
	CHECK(xwm_wintable_lookup(&t, id_of(0)) == &w[0]);

	/* Chains stay short: no bucket holds a large share of the windows. */
	size_t longest = 0;
	for (size_t b = 0; b < t.nbuckets; b++) {
		size_t len = 0;
		for (struct xwm_window *p = t.buckets[b]; p; p = p->hash_next)
			len++;
		longest = len > longest ? len : longest;
	}
	CHECK(longest <= 8);
	xwm_wintable_finish(&t);
	CHECK(t.buckets == NULL && t.count == 0 && xwm_wintable_lookup(&t, id_of(1)) == NULL);
}

int main(void)
{
	test_lookup();
	return check_finish("wintable: all checks passed");
}
