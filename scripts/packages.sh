# Sourced by scripts/test and scripts/bench: the Debian bookworm packages duet
# needs, and the one way both commands install them. One package per word.

# To build duet (libefl-all-dev: duet-launch-efl, built only where it is found;
# libseat-dev: the KMS backend's sessions, likewise; libinput-dev and
# libudev-dev: its input devices, likewise; libwlroots-dev: the wlroots
# output tracer preloaded into sway, bench/probes/wlr-trace.c, likewise).
DUET_BUILD_PACKAGES="
	meson ninja-build pkg-config gcc python3
	libwayland-dev wayland-protocols libwayland-egl-backend-dev
	libegl-dev libgles-dev libegl-mesa0 libgl1-mesa-dri
	libpixman-1-dev libxkbcommon-dev libpng-dev xkb-data
	libxcb1-dev libxcb-composite0-dev libxcb-damage0-dev libxcb-xfixes0-dev
	libxcb-shm0-dev libxcb-present-dev libxcb-dri3-dev libxcb-randr0-dev
	libxcb-shape0-dev libxcb-sync-dev libxcb-icccm4-dev libxcb-ewmh-dev
	libxcb-xtest0-dev libxcb-res0-dev libx11-xcb-dev
	libdrm-dev libgbm-dev libseat-dev libinput-dev libudev-dev
	libefl-all-dev libwlroots-dev
"
# To run the comparison: the X server, the peer stacks, the counters, the plots,
# and the third-party clients of the thirdparty experiment (glmark2's Wayland
# and X11 builds; elementary_test with EFL's Wayland and X11 engines and a font),
# and Enlightenment for the e-x11 / e-wayland stacks (eet makes their profile),
# and the peers people switch between: GNOME's mutter (its Wayland and X11
# stacks), sway, i3 with picom (passwd: useradd, for the user sway runs as);
# linux-perf: the scheduler's switches in the traced operations' records
# (bench/duet_bench/trace_sched.py; without it they are traced without).
DUET_BENCH_PACKAGES="
	xvfb x11-utils weston openbox xcompmgr strace xtrace gnuplot-nox linux-perf
	glmark2-es2-wayland glmark2-es2-x11
	libelementary-bin libevas1-engines-wayland libevas1-engines-x fonts-dejavu-core
	enlightenment libeet-bin dbus
	mutter sway i3-wm picom passwd
"
# The KMS tests' guest (scripts/test-kms): qemu, depmod and a static
# busybox for the initramfs virtme-ng builds, and a virtualenv for
# virtme-ng from PyPI (Debian's python3 needs python3-venv for it); the guest
# runs weston's clients and util-linux's unshare from the host's root, and
# Xorg (its modesetting driver and glamor are in xserver-xorg-core) with
# openbox and xcompmgr; vkms, which Debian's kernels lack, is built from
# linux-source with the kernel's headers, fetched with apt-get download into
# the cache (never installed); udev: virtme-ng starts systemd-udevd in the
# guest, which tags the input devices libinput reads (tests/kms/test_input.py).
DUET_KMS_PACKAGES="
	qemu-system-x86 kmod busybox-static python3-venv weston util-linux seatd udev
	xserver-xorg-core openbox xcompmgr x11-utils make gcc-12 xz-utils
"
# Third-party clients the tests run on both stacks (glmark2 and EFL come with
# the bench's packages), wlcs with Mir's module beside it (tests/wlcs), and
# Xwayland for duet-compositor --xwayland (tests/integration/test_xwayland*.py;
# x11-apps: its xeyes, a shaped X client),
# xclip and wl-clipboard for the clipboard between X and Wayland clients
# (tests/integration/test_xwayland_clipboard.py), and the X11 conformance
# check's client library and its tiling peer, i3 (tests/x11-conformance);
# gdb: a timeout's reason shows the frames of a server asleep in a lock or
# busy (bench/duet_launch/hang.py), which a CI log otherwise lacks;
# chromium: bench-trace opens the report in a headless browser and checks
# that every hop diagram is drawn and painted as its trace says
# (bench/tests/browser.py).
DUET_TEST_PACKAGES="
	wayland-utils foot xterm gtk-3-examples gtk-4-examples xwayland x11-apps
	xclip wl-clipboard
	python3-jsonschema lava-common
	wlcs mir-wlcs-integration
	python3-xlib i3-wm
	gdb chromium
"
# The client matrix (scripts/client-matrix, docs/clients.md): real toolkit
# apps from Debian on all four stacks (the test packages' gtk3-demo, foot,
# xterm and the bench's glmark2 and EFL are in it too).
DUET_CLIENT_MATRIX_PACKAGES="
	gtk-4-examples qtbase5-examples qtwayland5 libsdl2-tests
	mpv alacritty kitty imv grim
"
# scripts/board-vm: an arm64 Debian root file system (debootstrap, run
# through qemu-user and binfmt_misc), qemu-system-aarch64, and a venv for
# virtme-ng from PyPI.
DUET_BOARD_VM_PACKAGES="
	debootstrap qemu-system-arm qemu-user-static python3-venv
"

# duet_ensure_packages WHO PACKAGES...: installs what is missing with apt-get
# when run as root; otherwise prints the exact command and returns 1.
duet_ensure_packages() {
	who=$1
	shift
	if ! command -v dpkg-query >/dev/null 2>&1; then
		echo "$who: no dpkg-query (not Debian?); assuming dependencies are installed" >&2
		return 0
	fi
	missing=
	for pkg in "$@"; do
		case "$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null)" in
		ii*) ;;
		*) missing="$missing $pkg" ;;
		esac
	done
	missing=${missing# }
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "$who: missing Debian packages; install them with:"
		echo "sudo apt-get install --no-install-recommends $missing"
		return 1
	fi
	echo "$who: installing: $missing"
	# shellcheck disable=SC2086 # one word per package
	DEBIAN_FRONTEND=noninteractive apt-get update &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing || {
		echo "$who: apt-get failed" >&2
		return 1
	}
}
