/* Which rectangles of a damaged region to transfer: the window contents
 * a frame fetches (fetch.c) and the output rectangles a frame puts
 * (output.c) are planned alike. Pure: pixman only. */
#include <string.h>

#include "xwm.h"

/* Above this many rectangles to fetch, one bounding box is cheaper. */
#define MAX_RECTS XWM_MAX_RECTS
/* Regions with more rectangles than this are fetched as their bounding
 * box without trying to merge (the merge below is quadratic or worse). */
#define MAX_MERGE_INPUT XWM_MAX_MERGE_INPUT
/* Merging two rectangles into their bounding box is worth it while it
 * fetches at most this many pixels that are not damaged, plus a quarter
 * of the damaged ones: a separate ShmGetImage costs a request, a reply and
 * a glTexSubImage2D call, which outweigh copying a few KiB twice. */
#define MERGE_SLACK_PIXELS 1024

int64_t xwm_box_area(const pixman_box32_t *b)
{
	return (int64_t)(b->x2 - b->x1) * (b->y2 - b->y1);
}

static bool boxes_overlap(const pixman_box32_t *a, const pixman_box32_t *b)
{
	return a->x1 < b->x2 && b->x1 < a->x2 && a->y1 < b->y2 && b->y1 < a->y2;
}

static void box_extend(pixman_box32_t *a, const pixman_box32_t *b)
{
	a->x1 = a->x1 < b->x1 ? a->x1 : b->x1;
	a->y1 = a->y1 < b->y1 ? a->y1 : b->y1;
	a->x2 = a->x2 > b->x2 ? a->x2 : b->x2;
	a->y2 = a->y2 > b->y2 ? a->y2 : b->y2;
}

/* The bounding box of boxes i and j grown until it overlaps no other box
 * partly; *members gets the bit set of the boxes it covers, the return
 * value their damaged area. Boxes stay pairwise disjoint, so no pixel is
 * fetched twice. */
static int64_t merged_box(const pixman_box32_t *box, const int64_t *covered, int n,
                          int i, int j, pixman_box32_t *m, uint32_t *members)
{
	int64_t sum = covered[i] + covered[j];
	bool grew = true;

	*m = box[i];
	box_extend(m, &box[j]);
	*members = 1u << i | 1u << j;
	while (grew) {
		grew = false;
		for (int k = 0; k < n; k++)
			if (!(*members & 1u << k) && boxes_overlap(m, &box[k])) {
				box_extend(m, &box[k]);
				*members |= 1u << k;
				sum += covered[k];
				grew = true;
			}
	}
	return sum;
}

/* The rectangles to fetch for region (pixmap coordinates): its own boxes,
 * pairs merged greedily (least waste first) while their bounding box
 * wastes little, and one bounding box if that still leaves too many.
 * pixman splits an L-shaped damage (a cursor and its underline) into
 * bands; this puts them back together. Returns how many, <= MAX_RECTS. */
int xwm_plan_rects(const pixman_region32_t *region, pixman_box32_t *out)
{
	pixman_box32_t box[MAX_MERGE_INPUT];
	int64_t covered[MAX_MERGE_INPUT];
	int n;
	const pixman_box32_t *rects = pixman_region32_rectangles(region, &n);

	if (n == 0)
		return 0;
	if (n > MAX_MERGE_INPUT) {
		out[0] = *pixman_region32_extents(region);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		box[i] = rects[i];
		covered[i] = xwm_box_area(&rects[i]);
	}
	for (;;) {
		int64_t best_waste = -1, best_sum = 0;
		pixman_box32_t best_box = { 0, 0, 0, 0 };
		uint32_t best_members = 0;

		for (int i = 0; i < n; i++)
			for (int j = i + 1; j < n; j++) {
				pixman_box32_t m;
				uint32_t members;
				int64_t sum = merged_box(box, covered, n, i, j, &m, &members);
				int64_t waste = xwm_box_area(&m) - sum;
				if (waste > MERGE_SLACK_PIXELS + sum / 4)
					continue;
				if (best_waste < 0 || waste < best_waste) {
					best_waste = waste;
					best_sum = sum;
					best_box = m;
					best_members = members;
				}
			}
		if (best_waste < 0)
			break;
		/* Replace the members by the merged box, keeping the rest. */
		int kept = 0;
		for (int k = 0; k < n; k++)
			if (!(best_members & 1u << k)) {
				box[kept] = box[k];
				covered[kept] = covered[k];
				kept++;
			}
		box[kept] = best_box;
		covered[kept] = best_sum;
		n = kept + 1;
	}
	if (n > MAX_RECTS) {
		out[0] = *pixman_region32_extents(region);
		return 1;
	}
	memcpy(out, box, (size_t)n * sizeof(*box));
	return n;
}
