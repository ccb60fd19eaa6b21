/* GLSL ES 1.00 sources. Fragment shaders use mediump and sample with the
 * texture coordinate straight from a varying: Mali-400 class GPUs compute
 * fragment arithmetic in FP16 and only such direct reads keep full texel
 * precision (and avoid dependent texture reads). */
#include "render-private.h"

/* u_proj maps output pixels to clip space: xy * u_proj.xy + u_proj.zw,
 * which also folds in the target's y orientation. */
static const char vertex_source[] =
	"attribute vec2 a_pos;\n"
	"attribute vec2 a_texcoord;\n"
	"uniform vec4 u_proj;\n"
	"varying vec2 v_texcoord;\n"
	"void main() {\n"
	"	gl_Position = vec4(a_pos * u_proj.xy + u_proj.zw, 0.0, 1.0);\n"
	"	v_texcoord = a_texcoord;\n"
	"}\n";

/* The colour is premultiplied, as everything else here. */
static const char solid_source[] =
	"precision mediump float;\n"
	"uniform vec4 u_color;\n"
	"void main() {\n"
	"	gl_FragColor = u_color;\n"
	"}\n";

/* Premultiplied texels: the node alpha scales all four channels. */
static const char rgba_source[] =
	"precision mediump float;\n"
	"uniform sampler2D u_tex;\n"
	"uniform float u_alpha;\n"
	"varying vec2 v_texcoord;\n"
	"void main() {\n"
	"	gl_FragColor = texture2D(u_tex, v_texcoord) * u_alpha;\n"
	"}\n";

/* XRGB: whatever the X byte holds, the content is opaque. */
static const char rgbx_source[] =
	"precision mediump float;\n"
	"uniform sampler2D u_tex;\n"
	"uniform float u_alpha;\n"
	"varying vec2 v_texcoord;\n"
	"void main() {\n"
	"	gl_FragColor = vec4(texture2D(u_tex, v_texcoord).rgb, 1.0) * u_alpha;\n"
	"}\n";

/* The two above at node alpha 1, which is nearly every draw. */
static const char rgba_copy_source[] =
	"precision mediump float;\n"
	"uniform sampler2D u_tex;\n"
	"varying vec2 v_texcoord;\n"
	"void main() {\n"
	"	gl_FragColor = texture2D(u_tex, v_texcoord);\n"
	"}\n";

static const char rgbx_copy_source[] =
	"precision mediump float;\n"
	"uniform sampler2D u_tex;\n"
	"varying vec2 v_texcoord;\n"
	"void main() {\n"
	"	gl_FragColor = vec4(texture2D(u_tex, v_texcoord).rgb, 1.0);\n"
	"}\n";

const char *render_shader_vertex_source(void)
{
	return vertex_source;
}

const char *render_shader_fragment_source(enum render_shader_kind kind)
{
	switch (kind) {
	case RENDER_SHADER_SOLID: return solid_source;
	case RENDER_SHADER_RGBA: return rgba_source;
	case RENDER_SHADER_RGBX: return rgbx_source;
	case RENDER_SHADER_RGBA_COPY: return rgba_copy_source;
	case RENDER_SHADER_RGBX_COPY: return rgbx_copy_source;
	default: return NULL;
	}
}
