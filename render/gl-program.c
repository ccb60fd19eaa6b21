/* See gl-program.h. */
#include <stdbool.h>
#include <stdio.h>

#include "gl-program.h"

/* Compiling a shader and linking a program end alike: ask GL for the
 * status, and on failure keep its log and delete the object. These are
 * the calls and words of each. */
struct gl_step {
	PFNGLGETSHADERIVPROC get;
	PFNGLGETSHADERINFOLOGPROC get_log;
	PFNGLDELETESHADERPROC destroy;
	GLenum status;
	const char *failed;
};

static const struct gl_step compile_step = {
	glGetShaderiv, glGetShaderInfoLog, glDeleteShader, GL_COMPILE_STATUS,
	"shader compile failed",
};
static const struct gl_step link_step = {
	glGetProgramiv, glGetProgramInfoLog, glDeleteProgram, GL_LINK_STATUS,
	"program link failed",
};

/* False, with why said and obj deleted, if step failed on obj. */
static bool step_ok(const struct gl_step *step, GLuint obj, char *why, size_t why_size)
{
	GLint ok = GL_FALSE;
	char log[1024] = "";

	step->get(obj, step->status, &ok);
	if (ok)
		return true;
	step->get_log(obj, sizeof(log), NULL, log);
	snprintf(why, why_size, "%s: %s", step->failed, log);
	step->destroy(obj);
	return false;
}

static GLuint compile(GLenum type, const char *src, char *why, size_t why_size)
{
	GLuint shader = glCreateShader(type);

	glShaderSource(shader, 1, &src, NULL);
	glCompileShader(shader);
	return step_ok(&compile_step, shader, why, why_size) ? shader : 0;
}

GLuint render_gl_program(const char *vertex_src, const char *fragment_src,
                         const char *const *attribs, char *why, size_t why_size)
{
	GLuint vs = compile(GL_VERTEX_SHADER, vertex_src, why, why_size);
	GLuint fs = vs ? compile(GL_FRAGMENT_SHADER, fragment_src, why, why_size) : 0;

	if (!vs || !fs) {
		glDeleteShader(vs);
		return 0;
	}
	GLuint program = glCreateProgram();
	glAttachShader(program, vs);
	glAttachShader(program, fs);
	for (GLuint i = 0; attribs[i]; i++)
		glBindAttribLocation(program, i, attribs[i]);
	glLinkProgram(program);
	/* The program keeps the shaders; flag them for deletion with it. */
	glDeleteShader(vs);
	glDeleteShader(fs);
	return step_ok(&link_step, program, why, why_size) ? program : 0;
}
