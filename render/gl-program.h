/* A GLES2 program from the source of its two shaders, as render/'s GL
 * engine (gles2.c), its window targets' blit (target-window.c) and the
 * toolkit's GL engine (clients/toolkit/tk-draw-gl.c) each build theirs.
 * Its own small library, as the trace is: the toolkit links it without
 * the renderer. It logs nothing: each caller says in its own log what
 * failed. */
#ifndef DUET_RENDER_GL_PROGRAM_H
#define DUET_RENDER_GL_PROGRAM_H

#include <GLES2/gl2.h>
#include <stddef.h>

/* Compiles both shaders and links them, attribute i bound to attribs[i]
 * (a NULL-terminated list) first. Returns the program, or 0 with why
 * (why_size bytes) saying which step failed and what GL's log said. */
GLuint render_gl_program(const char *vertex_src, const char *fragment_src,
                         const char *const *attribs, char *why, size_t why_size);

#endif
