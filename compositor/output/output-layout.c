/* The layout: every output side by side, left to right, in one coordinate
 * space that surfaces, windows and the pointer use. The server has one
 * scene in these coordinates and each output paints its own rectangle of
 * it through a view (render_scene_view), so a change repaints only the
 * outputs it falls on, and a surface across two outputs is drawn on both.
 *
 * Each surface knows the outputs it overlaps (wl_surface.enter/leave) and
 * one frame output: the output it is most on, whose frames answer its
 * frame callbacks and presentation feedback (sync_output is that output).
 * weston does the same (a surface's output is the one with the largest
 * overlap); a surface on no output keeps being answered by the first one,
 * as with one output, so a window moved off every output is not frozen.
 */
#include <stdlib.h>
#include <string.h>

#include "comp.h"

struct comp_output *comp_layout_first_output(struct comp_server *server)
{
	struct comp_output *output;
	if (wl_list_empty(&server->outputs))
		return NULL;
	return wl_container_of(server->outputs.next, output, link);
}

struct comp_output *comp_layout_find_output(struct comp_server *server, const char *name)
{
	struct comp_output *output;
	char *end;
	long index = strtol(name, &end, 10);
	bool by_index = *name && !*end;
	wl_list_for_each(output, &server->outputs, link) {
		if (by_index ? output->index == index : strcmp(output->name, name) == 0)
			return output;
	}
	return NULL;
}

static int64_t overlap(const struct comp_output *o, int x, int y, int w, int h)
{
	int64_t x1 = x > o->x ? x : o->x, y1 = y > o->y ? y : o->y;
	int64_t x2 = (int64_t)x + w, y2 = (int64_t)y + h;
	if (x2 > (int64_t)o->x + o->width)
		x2 = (int64_t)o->x + o->width;
	if (y2 > (int64_t)o->y + o->height)
		y2 = (int64_t)o->y + o->height;
	return x2 > x1 && y2 > y1 ? (x2 - x1) * (y2 - y1) : 0;
}

struct comp_output *comp_layout_output_at(struct comp_server *server, double x, double y)
{
	struct comp_output *output;
	wl_list_for_each(output, &server->outputs, link) {
		if (x >= output->x && x < output->x + output->width && y >= output->y &&
		    y < output->y + output->height)
			return output;
	}
	return NULL;
}

struct comp_output *comp_layout_output_for_box(struct comp_server *server, int x, int y,
                                               int width, int height)
{
	struct comp_output *output, *best = NULL;
	int64_t best_area = 0;
	/* Unplugged outputs (no global) hold no surfaces. */
	wl_list_for_each(output, &server->outputs, link) {
		int64_t area = output->global ? overlap(output, x, y, width, height) : 0;
		if (area > best_area) {
			best = output;
			best_area = area;
		}
	}
	if (best)
		return best;
	wl_list_for_each(output, &server->outputs, link) {
		if (output->global)
			return output;
	}
	return comp_layout_first_output(server);
}

void comp_layout_bounds(struct comp_server *server, int *x, int *y, int *width, int *height)
{
	int x1 = 0, y1 = 0, x2 = 0, y2 = 0;
	bool first = true;
	struct comp_output *o;
	wl_list_for_each(o, &server->outputs, link) {
		if (first || o->x < x1)
			x1 = o->x;
		if (first || o->y < y1)
			y1 = o->y;
		if (first || o->x + o->width > x2)
			x2 = o->x + o->width;
		if (first || o->y + o->height > y2)
			y2 = o->y + o->height;
		first = false;
	}
	*x = x1;
	*y = y1;
	*width = x2 - x1;
	*height = y2 - y1;
}

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void comp_layout_clamp(struct comp_server *server, double *x, double *y)
{
	if (comp_layout_output_at(server, *x, *y))
		return;
	/* Outside every output: to the nearest point of the nearest one (the
	 * last pixel in, not its edge: the edge belongs to no output). */
	struct comp_output *o;
	double best_x = *x, best_y = *y, best_d = -1;
	wl_list_for_each(o, &server->outputs, link) {
		double cx = clamp(*x, o->x, o->x + o->width - 1);
		double cy = clamp(*y, o->y, o->y + o->height - 1);
		double d = (cx - *x) * (cx - *x) + (cy - *y) * (cy - *y);
		if (best_d < 0 || d < best_d) {
			best_x = cx;
			best_y = cy;
			best_d = d;
		}
	}
	*x = best_x;
	*y = best_y;
}

void comp_layout_repaint_damaged(struct comp_server *server)
{
	struct comp_output *output;
	wl_list_for_each(output, &server->outputs, link) {
		if (render_scene_view_has_damage(output->view))
			comp_output_schedule_repaint(output);
	}
}

void comp_layout_update_surface(struct comp_surface *surface)
{
	struct comp_server *server = surface->server;
	uint32_t now = 0;
	struct comp_output *output;
	if (surface->mapped) {
		wl_list_for_each(output, &server->outputs, link) {
			if (output->global && overlap(output, surface->x, surface->y,
			                              surface->width, surface->height) > 0)
				now |= 1u << output->index;
		}
	}
	uint32_t changed = now ^ surface->outputs;
	surface->outputs = now;
	wl_list_for_each(output, &server->outputs, link) {
		if (changed & (1u << output->index))
			comp_output_surface_enter(output, surface, now & (1u << output->index));
	}
	struct comp_output *was = surface->frame_output;
	surface->frame_output = surface->mapped ?
		comp_layout_output_for_box(server, surface->x, surface->y, surface->width,
		                           surface->height) : NULL;
	/* Callbacks waiting go with the surface to its new output. */
	if (surface->frame_output && surface->frame_output != was &&
	    (!wl_list_empty(&surface->current.frame_callbacks) ||
	     !wl_list_empty(&surface->current.feedbacks)))
		comp_output_schedule_repaint(surface->frame_output);
}

void comp_layout_update_surfaces(struct comp_server *server)
{
	struct comp_surface *surface;
	wl_list_for_each(surface, &server->surfaces, link)
		comp_layout_update_surface(surface);
}
