/* The GLES2 renderer: shader programs and immediate drawing of solid and
 * textured quads, clipped by scissoring each rectangle of a clip region. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gl-program.h"
#include "render-private.h"

static bool link_program(struct render_program *p, enum render_shader_kind kind)
{
	/* Listed at their RENDER_ATTR_* locations. */
	static const char *const attribs[] = { "a_pos", "a_texcoord", NULL };
	char why[1200];

	p->program = render_gl_program(render_shader_vertex_source(),
	                               render_shader_fragment_source(kind), attribs, why,
	                               sizeof(why));
	if (!p->program) {
		render_log("%s", why);
		return false;
	}
	p->u_proj = glGetUniformLocation(p->program, "u_proj");
	p->u_tex = glGetUniformLocation(p->program, "u_tex");
	p->u_alpha = glGetUniformLocation(p->program, "u_alpha");
	p->u_color = glGetUniformLocation(p->program, "u_color");
	glUseProgram(p->program);
	if (p->u_tex >= 0)
		glUniform1i(p->u_tex, 0);
	glUseProgram(0);
	return true;
}

struct renderer *renderer_create(struct render_egl *egl)
{
	struct renderer *r = render_renderer_alloc(&render_gl_engine, egl);

	if (!r)
		return NULL;
	/* Elsewhere the CPU swizzle path runs. */
	r->has_bgra = render_little_endian() &&
	              render_usable_extension(egl, "GL_EXT_texture_format_BGRA8888");
	r->has_unpack_subimage = render_usable_extension(egl, "GL_EXT_unpack_subimage");

	for (int i = 0; i < RENDER_SHADER_COUNT; i++) {
		if (!link_program(&r->programs[i], (enum render_shader_kind)i)) {
			renderer_destroy(r);
			return NULL;
		}
	}
	render_log("renderer: GLES2, BGRA8888 %s, unpack_subimage %s", r->has_bgra ? "yes" : "no",
	           r->has_unpack_subimage ? "yes" : "no");
	return r;
}

static void gl_destroy(struct renderer *r)
{
	for (int i = 0; i < RENDER_SHADER_COUNT; i++)
		if (r->programs[i].program)
			glDeleteProgram(r->programs[i].program);
}

static void gl_begin(struct renderer *r, struct render_target *t)
{
	render_target_bind(t);
	glEnable(GL_SCISSOR_TEST);
	glDisable(GL_BLEND);
	glBlendFunc(GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
	r->blending = false;
	r->program = -1;
	glActiveTexture(GL_TEXTURE0);
	glEnableVertexAttribArray(RENDER_ATTR_POS);
	glEnableVertexAttribArray(RENDER_ATTR_TEXCOORD);
}

static void gl_end(struct renderer *r)
{
	glDisableVertexAttribArray(RENDER_ATTR_POS);
	glDisableVertexAttribArray(RENDER_ATTR_TEXCOORD);
	glDisable(GL_SCISSOR_TEST);
	glDisable(GL_BLEND);
	glBindTexture(GL_TEXTURE_2D, 0);
	glUseProgram(0);
	r->program = -1;
}

static void use_program(struct renderer *r, enum render_shader_kind kind)
{
	struct render_target *t = r->target;
	struct render_program *p = &r->programs[kind];
	float sy = t->y_up ? -2.0f / t->height : 2.0f / t->height;

	if (r->program != (int)kind) {
		glUseProgram(p->program);
		r->program = (int)kind;
	}
	/* Cheap enough to set every draw, and always right for the target. */
	glUniform4f(p->u_proj, 2.0f / t->width, sy, -1.0f, t->y_up ? 1.0f : -1.0f);
}

static void set_blending(struct renderer *r, bool blend)
{
	if (blend == r->blending)
		return;
	if (blend)
		glEnable(GL_BLEND);
	else
		glDisable(GL_BLEND);
	r->blending = blend;
}

/* Draws the quad dst with texcoord for its corners (top-left, top-right,
 * bottom-left, bottom-right) once per rectangle of clip ∩ dst; the current
 * program and state must be set. */
static void draw_clipped(struct renderer *r, const pixman_box32_t *dst, const GLfloat texcoord[8])
{
	const GLfloat pos[8] = {
		(GLfloat)dst->x1, (GLfloat)dst->y1, (GLfloat)dst->x2, (GLfloat)dst->y1,
		(GLfloat)dst->x1, (GLfloat)dst->y2, (GLfloat)dst->x2, (GLfloat)dst->y2,
	};
	pixman_region32_t region;
	const pixman_box32_t *rects;
	int n;

	pixman_region32_init_rect(&region, dst->x1, dst->y1,
	                          (unsigned)(dst->x2 - dst->x1), (unsigned)(dst->y2 - dst->y1));
	pixman_region32_intersect(&region, &region, &r->clip);
	rects = pixman_region32_rectangles(&region, &n);
	if (n > 0) {
		glVertexAttribPointer(RENDER_ATTR_POS, 2, GL_FLOAT, GL_FALSE, 0, pos);
		glVertexAttribPointer(RENDER_ATTR_TEXCOORD, 2, GL_FLOAT, GL_FALSE, 0, texcoord);
	}
	for (int i = 0; i < n; i++) {
		const pixman_box32_t *b = &rects[i];
		int h = b->y2 - b->y1;
		glScissor(b->x1, render_target_gl_y(r->target, b->y1, h), b->x2 - b->x1, h);
		glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
		r->stats.quads++;
		if (r->program == RENDER_SHADER_RGBA_COPY || r->program == RENDER_SHADER_RGBX_COPY)
			r->stats.copy_quads++;
	}
	pixman_region32_fini(&region);
}

static void gl_fill(struct renderer *r, const pixman_box32_t *box, uint32_t argb, bool blend)
{
	static const GLfloat tc[8] = { 0 };
	struct render_program *p = &r->programs[RENDER_SHADER_SOLID];

	use_program(r, RENDER_SHADER_SOLID);
	glUniform4f(p->u_color, ((argb >> 16) & 0xff) / 255.0f, ((argb >> 8) & 0xff) / 255.0f,
	            (argb & 0xff) / 255.0f, (argb >> 24) / 255.0f);
	set_blending(r, blend);
	draw_clipped(r, box, tc);
}

/* The texture coordinate u,v (0..1) shown at s,t (0..1) of a quad whose
 * content was drawn with transform (render_quad.transform): the texture
 * is the quad's image flipped (4-7) then turned counter-clockwise, so a
 * point goes where that flip and turn take it (weston draws the same). */
static void transform_coord(int transform, GLfloat s, GLfloat t, GLfloat *uv)
{
	GLfloat u = s, v = t;
	switch (transform & 7) {
	case 1: u = t; v = 1 - s; break;     /* 90 */
	case 2: u = 1 - s; v = 1 - t; break; /* 180 */
	case 3: u = 1 - t; v = s; break;     /* 270 */
	case 4: u = 1 - s; break;            /* flipped */
	case 5: u = t; v = s; break;         /* flipped 90 */
	case 6: v = 1 - t; break;            /* flipped 180 */
	case 7: u = 1 - t; v = 1 - s; break; /* flipped 270 */
	}
	uv[0] = u;
	uv[1] = v;
}

static void gl_draw_texture(struct renderer *r, struct render_texture *tex,
                            const struct render_draw *d)
{
	bool xrgb = tex->format == RENDER_FORMAT_XRGB8888;
	enum render_shader_kind kind;
	GLfloat tc[8];
	GLint filter = d->nearest ? GL_NEAREST : GL_LINEAR;

	/* Texture row 0 is the image's top row, and output y grows downwards:
	 * the y flip of a target lives only in the projection. */
	GLfloat s1 = d->sx / d->tw, t1 = d->sy / d->th;
	GLfloat s2 = (d->sx + d->sw) / d->tw, t2 = (d->sy + d->sh) / d->th;
	transform_coord(d->transform, s1, t1, &tc[0]);
	transform_coord(d->transform, s2, t1, &tc[2]);
	transform_coord(d->transform, s1, t2, &tc[4]);
	transform_coord(d->transform, s2, t2, &tc[6]);

	/* At alpha 1 the multiply would change nothing but costs every
	 * fragment: on a software rasteriser (llvmpipe) a composite is mostly
	 * this shader, and a GPU's fragment stage is where Mali-400 class
	 * hardware is short. */
	if (d->alpha >= 1.0f)
		kind = xrgb ? RENDER_SHADER_RGBX_COPY : RENDER_SHADER_RGBA_COPY;
	else
		kind = xrgb ? RENDER_SHADER_RGBX : RENDER_SHADER_RGBA;
	use_program(r, kind);
	if (d->alpha < 1.0f)
		glUniform1f(r->programs[kind].u_alpha, d->alpha);
	glBindTexture(GL_TEXTURE_2D, tex->id);
	if (tex->filter != filter) {
		glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
		glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
		tex->filter = filter;
	}
	set_blending(r, !d->opaque);
	draw_clipped(r, &d->dst, tc);
}

const struct render_engine render_gl_engine = {
	.name = "gl",
	.destroy = gl_destroy,
	.begin = gl_begin,
	.end = gl_end,
	.fill = gl_fill,
	.draw_texture = gl_draw_texture,
	.texture_init = render_gl_texture_init,
	.texture_fini = render_gl_texture_fini,
	.upload_begin = render_gl_upload_begin,
	.upload_box = render_gl_upload_box,
	.upload_end = render_gl_upload_end,
};
