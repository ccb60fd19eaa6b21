/* Input devices on --backend drm (input-libinput.c): keyboards, mice,
 * touchpads and tablets through libinput, fed to the seat (seat.c).
 * Built where libinput and libudev are installed (DUET_HAVE_LIBINPUT). */
#ifndef DUET_INPUT_LIBINPUT_H
#define DUET_INPUT_LIBINPUT_H

struct comp_server;
struct drm_session;
struct comp_input;

/* The devices of seat0, opened through session (seatd, logind or
 * directly as root) and watched on the server's loop; hotplugged ones
 * come and go. NULL, logged, if libinput cannot start: the compositor
 * runs on without input devices. */
struct comp_input *comp_input_create(struct comp_server *server, struct drm_session *session);
void comp_input_destroy(struct comp_input *input);
/* The session paused: every device closed (their fds are revoked anyway). */
void comp_input_suspend(struct comp_input *input);
/* The session is ours again: the devices are opened again. */
void comp_input_resume(struct comp_input *input);

#endif
