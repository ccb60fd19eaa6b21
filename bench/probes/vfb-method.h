/* The ways duet-vfb-reader finds what changed in a framebuffer, behind one
 * small interface: open (usable here? else why not), detect (mark the
 * strips changed since the last call), close. One file per method. */
#ifndef DUET_VFB_METHOD_H
#define DUET_VFB_METHOD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vfb-marks.h"
#include "vfb-source.h"

struct vfb_method;

struct vfb_method_ops {
	const char *name;
	/* 0 when it works on src here (writer: the writing process, 0 if
	 * unknown), else -1 with why: what the kernel or the setup lacks. */
	int (*open)(struct vfb_method *m, const struct vfb_source *src, pid_t writer, char *why,
	            size_t len);
	/* Marks what changed since the last call (or open); frames seen..now
	 * are the writer's frames since then. Returns the bytes it read. */
	uint64_t (*detect)(struct vfb_method *m, const struct vfb_source *src, struct vfb_marks *k,
	                   uint64_t seen, uint64_t now);
	void (*close)(struct vfb_method *m);
};

struct vfb_method {
	const struct vfb_method_ops *ops;
	void *priv;
	uint64_t lost; /* damage: writer frames whose record was overwritten */
};

extern const struct vfb_method_ops vfb_compare_ops, vfb_softdirty_ops, vfb_uffd_wp_ops,
	vfb_damage_ops;

/* The method called name, or NULL. */
const struct vfb_method_ops *vfb_method_find(const char *name);

/* Marks the compositor's own damage of writer frames (seen, now]; returns
 * the frames whose record was already overwritten (their damage unknown),
 * and adds the bytes read to *bytes. */
uint64_t vfb_damage_marks(const struct vfb_source *src, struct vfb_marks *k, uint64_t seen,
                          uint64_t now, uint64_t *bytes);

#endif
