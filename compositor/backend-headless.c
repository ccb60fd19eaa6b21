/* The headless backend: frames go to an offscreen framebuffer that nobody
 * scans out. "Presenting" means waiting until the GPU (llvmpipe here) has
 * finished the frame, so the timestamp reported to clients is when the
 * pixels really exist, as it would be after a page flip. */
#include "comp.h"

static struct render_target *headless_create_target(struct comp_output *output)
{
	return render_target_create_offscreen(output->server->egl, output->width, output->height);
}

static uint64_t headless_present(struct comp_output *output, const pixman_region32_t *damage)
{
	render_target_present(output->target, damage);
	return render_now_ns();
}

static void headless_destroy(struct comp_output *output)
{
	if (output->target)
		render_target_destroy(output->target);
	output->target = NULL;
}

const struct comp_backend comp_backend_headless = {
	.name = "headless",
	.create_target = headless_create_target,
	.present = headless_present,
	.destroy = headless_destroy,
};
