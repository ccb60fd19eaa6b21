/* damage: the compositor's own damage, published beside each frame in the
 * header page (vfb-layout.h). Exact by construction: it is what the
 * compositor repainted and wrote, so the other methods are measured
 * against it. On Xvfb, X's own damage: the Damage extension's events on
 * the root window (vfb-xdamage.c), where built. */
#include <stdio.h>
#include <string.h>

#include "vfb-method.h"
#ifdef DUET_HAVE_XDAMAGE
#include "vfb-xdamage.h"
#endif

uint64_t vfb_damage_marks(const struct vfb_source *src, struct vfb_marks *k, uint64_t seen,
                          uint64_t now, uint64_t *bytes)
{
	uint64_t lost = 0;
	for (uint64_t f = seen + 1; f <= now; f++) {
		const struct vfb_damage *d = &src->hdr->damage[f % VFB_DAMAGE_SLOTS];
		struct vfb_damage copy;
		if (__atomic_load_n(&d->frame, __ATOMIC_ACQUIRE) != f) {
			lost++;
			continue;
		}
		memcpy(&copy, d, sizeof(copy));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		/* Rewritten for a later frame while copied: unknown. */
		if (__atomic_load_n(&d->frame, __ATOMIC_RELAXED) != f || copy.n > VFB_DAMAGE_RECTS) {
			lost++;
			continue;
		}
		*bytes += 16 + copy.n * sizeof(copy.rects[0]);
		for (uint32_t i = 0; i < copy.n; i++)
			vfb_marks_rect(k, copy.rects[i].x1, copy.rects[i].y1, copy.rects[i].x2,
			               copy.rects[i].y2);
	}
	return lost;
}

static int damage_open(struct vfb_method *m, const struct vfb_source *src, pid_t writer,
                       char *why, size_t len)
{
	(void)writer;
	if (src->hdr)
		return 0;
#ifdef DUET_HAVE_XDAMAGE
	/* Xvfb publishes no damage beside its framebuffer: X's own comes as
	 * events, to the clients that ask for it. */
	m->priv = vfb_xdamage_open(src->display, why, len);
	return m->priv ? 0 : -1;
#else
	(void)m;
	snprintf(why, len, "Xvfb publishes no damage beside its -shmem framebuffer, and this "
	         "duet-vfb-reader was built without xcb-damage to read X's own (Damage events)");
	return -1;
#endif
}

static uint64_t damage_detect(struct vfb_method *m, const struct vfb_source *src,
                              struct vfb_marks *k, uint64_t seen, uint64_t now)
{
	uint64_t bytes = 0;
#ifdef DUET_HAVE_XDAMAGE
	if (!src->hdr)
		return vfb_xdamage_drain(m->priv, k);
#endif
	uint64_t lost = vfb_damage_marks(src, k, seen, now, &bytes);
	if (lost) {
		/* A viewer that missed a record must take the whole screen. */
		m->lost += lost;
		vfb_marks_rect(k, 0, 0, (int32_t)src->geom.width, (int32_t)src->geom.height);
	}
	return bytes;
}

static void damage_close(struct vfb_method *m)
{
#ifdef DUET_HAVE_XDAMAGE
	vfb_xdamage_close(m->priv);
	m->priv = NULL;
#else
	(void)m;
#endif
}

const struct vfb_method_ops vfb_damage_ops = {
	.name = "damage",
	.open = damage_open,
	.detect = damage_detect,
	.close = damage_close,
};

const struct vfb_method_ops *vfb_method_find(const char *name)
{
	static const struct vfb_method_ops *all[] = { &vfb_compare_ops, &vfb_softdirty_ops,
	                                              &vfb_uffd_wp_ops, &vfb_damage_ops };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(all[i]->name, name) == 0)
			return all[i];
	return NULL;
}
