/* The GL engine's drawing: every primitive is a textured, vertex-coloured
 * quad (solids and gradients sample a 1x1 white texture), batched until the
 * texture or its filter changes. GLSL ES 1.00, premultiplied alpha. */
#include <stdio.h>
#include <stdlib.h>

#include "gl-program.h"
#include "tk-draw.h"

#define BATCH_QUADS 2048
#define FLOATS_PER_VERTEX 8 /* x y u v r g b a */

struct gl_draw {
	struct tk_draw base;
	GLuint program;
	GLint u_size, u_tex;
	GLuint white;
	GLuint bound;    /* texture of the current batch */
	GLint bound_filter;
	int nquads;
	GLfloat verts[BATCH_QUADS * 6 * FLOATS_PER_VERTEX];
};

static const char *vertex_src =
	"attribute vec2 a_pos;\n"
	"attribute vec2 a_uv;\n"
	"attribute vec4 a_color;\n"
	"uniform vec2 u_size;\n"
	"varying vec2 v_uv;\n"
	"varying vec4 v_color;\n"
	"void main() {\n"
	"  v_uv = a_uv;\n"
	"  v_color = a_color;\n"
	"  gl_Position = vec4(a_pos.x / u_size.x * 2.0 - 1.0, 1.0 - a_pos.y / u_size.y * 2.0, 0.0, 1.0);\n"
	"}\n";

/* Texture coordinates straight from the varying (FP16 fragment precision
 * on Mali-400 class GPUs). */
static const char *fragment_src =
	"precision mediump float;\n"
	"uniform sampler2D u_tex;\n"
	"varying vec2 v_uv;\n"
	"varying vec4 v_color;\n"
	"void main() {\n"
	"  gl_FragColor = texture2D(u_tex, v_uv) * v_color;\n"
	"}\n";

static struct gl_draw *gl(struct tk_draw *d)
{
	return (struct gl_draw *)d;
}

static void flush(struct tk_draw *d)
{
	struct gl_draw *g = gl(d);
	if (!g->nquads)
		return;
	const GLfloat *v = g->verts;
	GLsizei stride = FLOATS_PER_VERTEX * sizeof(GLfloat);
	glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, stride, v);
	glVertexAttribPointer(1, 2, GL_FLOAT, GL_FALSE, stride, v + 2);
	glVertexAttribPointer(2, 4, GL_FLOAT, GL_FALSE, stride, v + 4);
	glDrawArrays(GL_TRIANGLES, 0, g->nquads * 6);
	g->nquads = 0;
}

static void use_texture(struct gl_draw *g, GLuint tex, GLint filter, int *state)
{
	if (g->bound == tex && (!state || *state == filter))
		return;
	flush(&g->base);
	glBindTexture(GL_TEXTURE_2D, tex);
	if (state && *state != filter) {
		glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
		glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
		*state = filter;
	}
	g->bound = tex;
}

static void premul(struct tk_color c, GLfloat out[4])
{
	out[0] = c.r * c.a;
	out[1] = c.g * c.a;
	out[2] = c.b * c.a;
	out[3] = c.a;
}

/* Corners in order top-left, top-right, bottom-left, bottom-right. */
static void quad(struct gl_draw *g, float x, float y, float w, float h, float u0, float v0,
                 float u1, float v1, const GLfloat col[4][4])
{
	if (g->nquads == BATCH_QUADS)
		flush(&g->base);
	const float px[4] = { x, x + w, x, x + w }, py[4] = { y, y, y + h, y + h };
	const float pu[4] = { u0, u1, u0, u1 }, pv[4] = { v0, v0, v1, v1 };
	static const int order[6] = { 0, 1, 2, 2, 1, 3 };
	GLfloat *v = g->verts + (size_t)g->nquads * 6 * FLOATS_PER_VERTEX;
	for (int i = 0; i < 6; i++, v += FLOATS_PER_VERTEX) {
		int k = order[i];
		v[0] = px[k];
		v[1] = py[k];
		v[2] = pu[k];
		v[3] = pv[k];
		v[4] = col[k][0];
		v[5] = col[k][1];
		v[6] = col[k][2];
		v[7] = col[k][3];
	}
	g->nquads++;
}

static void gl_clear(struct tk_draw *d, struct tk_color c)
{
	flush(d);
	glClearColor(c.r * c.a, c.g * c.a, c.b * c.a, c.a);
	glClear(GL_COLOR_BUFFER_BIT);
}

static void gl_rect(struct tk_draw *d, float x, float y, float w, float h, struct tk_color c)
{
	struct gl_draw *g = gl(d);
	GLfloat col[4][4];
	use_texture(g, g->white, GL_NEAREST, NULL);
	for (int i = 0; i < 4; i++)
		premul(c, col[i]);
	quad(g, x, y, w, h, 0, 0, 1, 1, col);
}

static void upload(struct tk_image *img)
{
	/* ARGB32 words to RGBA bytes, the one format GLES2 always takes. */
	size_t n = (size_t)img->width * (size_t)img->height;
	unsigned char *rgba = malloc(n * 4);
	if (!rgba)
		return;
	for (size_t i = 0; i < n; i++) {
		uint32_t p = img->pixels[i];
		rgba[4 * i + 0] = (unsigned char)(p >> 16);
		rgba[4 * i + 1] = (unsigned char)(p >> 8);
		rgba[4 * i + 2] = (unsigned char)p;
		rgba[4 * i + 3] = (unsigned char)(p >> 24);
	}
	glGenTextures(1, &img->texture);
	glBindTexture(GL_TEXTURE_2D, img->texture);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
	glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
	glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, img->width, img->height, 0, GL_RGBA,
	             GL_UNSIGNED_BYTE, rgba);
	img->gl_filter = 0;
	free(rgba);
}

static void gl_image(struct tk_draw *d, struct tk_image *img, float sx, float sy, float sw,
                     float sh, float x, float y, float w, float h, enum tk_filter filter,
                     struct tk_color tint)
{
	struct gl_draw *g = gl(d);
	GLfloat col[4][4];
	if (!img->texture) {
		flush(d);
		upload(img);
		g->bound = 0;
		if (!img->texture)
			return;
	}
	use_texture(g, img->texture, filter == TK_FILTER_SMOOTH ? GL_LINEAR : GL_NEAREST,
	            &img->gl_filter);
	for (int i = 0; i < 4; i++)
		premul(tint, col[i]);
	quad(g, x, y, w, h, sx / (float)img->width, sy / (float)img->height,
	     (sx + sw) / (float)img->width, (sy + sh) / (float)img->height, col);
}

static void gl_gradient(struct tk_draw *d, float x, float y, float w, float h, struct tk_color c0,
                        struct tk_color c1, bool vertical)
{
	struct gl_draw *g = gl(d);
	GLfloat col[4][4];
	use_texture(g, g->white, GL_NEAREST, NULL);
	premul(c0, col[0]);
	premul(vertical ? c0 : c1, col[1]);
	premul(vertical ? c1 : c0, col[2]);
	premul(c1, col[3]);
	quad(g, x, y, w, h, 0, 0, 1, 1, col);
}

static void gl_image_release(struct tk_draw *d, struct tk_image *img)
{
	struct gl_draw *g = gl(d);
	if (!img->texture)
		return;
	flush(d);
	if (g->bound == img->texture)
		g->bound = 0;
	glDeleteTextures(1, &img->texture);
	img->texture = 0;
}

static void gl_destroy(struct tk_draw *d)
{
	struct gl_draw *g = gl(d);
	glDeleteTextures(1, &g->white);
	glDeleteProgram(g->program);
	free(g);
}

static const struct tk_draw_ops gl_ops = {
	.clear = gl_clear,
	.rect = gl_rect,
	.image = gl_image,
	.gradient = gl_gradient,
	.flush = flush,
	.destroy = gl_destroy,
	.image_release = gl_image_release,
};

struct tk_draw *tk_draw_gl_create(void)
{
	struct gl_draw *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->base.ops = &gl_ops;
	static const char *const attribs[] = { "a_pos", "a_uv", "a_color", NULL };
	char why[1200];
	g->program = render_gl_program(vertex_src, fragment_src, attribs, why, sizeof(why));
	if (!g->program) {
		fprintf(stderr, "%s\n", why);
		free(g);
		return NULL;
	}
	g->u_size = glGetUniformLocation(g->program, "u_size");
	g->u_tex = glGetUniformLocation(g->program, "u_tex");
	static const unsigned char white[4] = { 255, 255, 255, 255 };
	glGenTextures(1, &g->white);
	glBindTexture(GL_TEXTURE_2D, g->white);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
	glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, 1, 1, 0, GL_RGBA, GL_UNSIGNED_BYTE, white);
	g->bound = g->white;
	return &g->base;
}

void tk_draw_gl_begin(struct tk_draw *d, int width, int height)
{
	struct gl_draw *g = gl(d);
	d->width = width;
	d->height = height;
	g->nquads = 0;
	glViewport(0, 0, width, height);
	glUseProgram(g->program);
	glUniform2f(g->u_size, (GLfloat)width, (GLfloat)height);
	glUniform1i(g->u_tex, 0);
	glActiveTexture(GL_TEXTURE0);
	glBindTexture(GL_TEXTURE_2D, g->bound);
	glEnableVertexAttribArray(0);
	glEnableVertexAttribArray(1);
	glEnableVertexAttribArray(2);
	glEnable(GL_BLEND);
	glBlendFunc(GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
	glDisable(GL_DEPTH_TEST);
}
