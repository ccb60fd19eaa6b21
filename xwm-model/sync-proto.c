/* The wire side of _NET_WM_SYNC_REQUEST and _NET_WM_FRAME_DRAWN /
 * _NET_WM_FRAME_TIMINGS, shared by the model's two hosts: duet-xwm's
 * sync.c, whose frames are Damage fetched into its own repaint, and
 * duet-compositor's xwayland-sync.c, whose frames are Xwayland's
 * wl_surface commits presented by its outputs. What differs between them
 * is when a frame counts as shown, which stays each host's; what a WM says
 * to the client and how it hears the counters is the same, and lives here. */
#include "model.h"

int64_t xwm_sync_value(xcb_sync_int64_t v)
{
	return (int64_t)((uint64_t)(uint32_t)v.hi << 32 | v.lo);
}

static xcb_sync_int64_t int64_of(int64_t v)
{
	xcb_sync_int64_t r = { .hi = (int32_t)((uint64_t)v >> 32), .lo = (uint32_t)v };
	return r;
}

/* An alarm that fires when counter grows: test "counter >= current + 1".
 * With delta 1 the test value then steps past each new value (an event
 * per change); with delta 0 it fires once and turns inactive until
 * xwm_sync_alarm_arm. */
xcb_sync_alarm_t xwm_sync_alarm_create(struct xwm *xwm, xcb_sync_counter_t counter,
                                       bool one_shot)
{
	xcb_sync_alarm_t alarm = xcb_generate_id(xwm->conn);
	xcb_sync_create_alarm_value_list_t v = {
		.counter = counter,
		.valueType = XCB_SYNC_VALUETYPE_RELATIVE,
		.value = int64_of(1),
		.testType = XCB_SYNC_TESTTYPE_POSITIVE_COMPARISON,
		.delta = int64_of(one_shot ? 0 : 1),
		.events = 1,
	};
	xcb_sync_create_alarm_aux(xwm->conn, alarm,
	                          XCB_SYNC_CA_COUNTER | XCB_SYNC_CA_VALUE_TYPE |
	                          XCB_SYNC_CA_VALUE | XCB_SYNC_CA_TEST_TYPE |
	                          XCB_SYNC_CA_DELTA | XCB_SYNC_CA_EVENTS, &v);
	return alarm;
}

/* A one-shot alarm active again, firing once at counter >= value (at once
 * if it is there already: the server checks on the change). */
void xwm_sync_alarm_arm(struct xwm *xwm, xcb_sync_alarm_t alarm, int64_t value)
{
	xcb_sync_change_alarm_value_list_t v = {
		.valueType = XCB_SYNC_VALUETYPE_ABSOLUTE,
		.value = int64_of(value),
		.delta = int64_of(0),
	};
	xcb_sync_change_alarm_aux(xwm->conn, alarm,
	                          XCB_SYNC_CA_VALUE_TYPE | XCB_SYNC_CA_VALUE | XCB_SYNC_CA_DELTA,
	                          &v);
}

int64_t xwm_sync_next_serial(int64_t last, int64_t latest_frame, bool ext)
{
	if (!ext)
		return last + 1;
	/* Extended: an even serial well past any frame the client may
	 * number meanwhile (mutter leaves the same headroom). */
	int64_t base = last > latest_frame ? last : latest_frame;
	return (base + 240) & ~(int64_t)1;
}

void xwm_sync_send_request(struct xwm_window *w, int64_t serial, bool ext)
{
	struct xwm *xwm = w->xwm;
	const uint32_t data[5] = {
		xwm->ewmh._NET_WM_SYNC_REQUEST, xwm->last_time, (uint32_t)serial,
		(uint32_t)((uint64_t)serial >> 32), ext ? 1 : 0,
	};
	xwm_window_send_message(w, xwm->atoms.WM_PROTOCOLS, data);
}

void xwm_sync_send_frame_drawn(struct xwm_window *w, int64_t serial, uint64_t drawn_us,
                               int32_t offset_us, uint32_t refresh_us, uint32_t delay_ms)
{
	struct xwm *xwm = w->xwm;
	uint32_t drawn[5] = {
		(uint32_t)serial, (uint32_t)((uint64_t)serial >> 32),
		(uint32_t)drawn_us, (uint32_t)(drawn_us >> 32), 0,
	};
	xwm_window_send_message(w, xwm->atoms._NET_WM_FRAME_DRAWN, drawn);
	uint32_t timings[5] = {
		(uint32_t)serial, (uint32_t)((uint64_t)serial >> 32),
		(uint32_t)offset_us, refresh_us, delay_ms & 0x7fffffffu,
	};
	xwm_window_send_message(w, xwm->atoms._NET_WM_FRAME_TIMINGS, timings);
}
