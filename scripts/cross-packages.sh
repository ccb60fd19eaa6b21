#!/bin/sh
# The Debian bookworm packages to cross-build duet for ARM, and the one way
# to install them. Sourced by scripts/test and scripts/test-aarch64, or run:
#
#   scripts/cross-packages.sh [arm64] [armhf]      (default: both)
#
# As root it adds the foreign architecture (dpkg --add-architecture), runs
# apt-get update and installs what is missing; as another user it prints the
# exact commands and exits 1. The :ARCH -dev packages install beside the
# amd64 ones (multi-arch); apt may upgrade a few amd64 libraries to the same
# version as their :ARCH twins, which multi-arch requires. Nothing is ever
# removed: if apt would remove a package, the install stops.
#
# arm64 gets what its tests need too (Mesa's llvmpipe for arm64 and
# qemu-user-static, see scripts/test-aarch64); armhf is built only.
#
# The other way, which installs nothing on the host but the cross compiler:
# duet_cross_sysroot downloads ARCH's packages into a sysroot directory and
# duet_cross_sysroot_file writes a cross file for it; scripts/test builds
# armhf so. docs/cross.md describes both.

# DUET_BUILD_PACKAGES, from the same list the native build installs. Who
# sources this file runs in the repository's root, as scripts/test does.
case "$0" in
*cross-packages.sh) cd "$(dirname "$0")/.." || exit 1 ;;
esac
# shellcheck source=scripts/packages.sh
. scripts/packages.sh

# duet_cross_triplet ARCH: the GNU triplet of a Debian architecture.
duet_cross_triplet() {
	case "$1" in
	arm64) echo aarch64-linux-gnu ;;
	armhf) echo arm-linux-gnueabihf ;;
	*) return 1 ;;
	esac
}

# duet_cross_packages ARCH: the packages, one per word: the cross compiler
# (native), and every library package of DUET_BUILD_PACKAGES as ARCH's
# (native tools such as meson, wayland-scanner and the arch-independent
# wayland-protocols and xkb-data come from the native list), plus the
# target's libc headers, which the cross compiler does not bring.
duet_cross_packages() {
	arch=$1
	triplet=$(duet_cross_triplet "$arch") || return 1
	list="gcc-$triplet libc6-dev:$arch"
	for pkg in $DUET_BUILD_PACKAGES; do
		case "$pkg" in
		libegl-mesa0 | libgl1-mesa-dri)
			# Mesa's EGL and llvmpipe: only to run tests.
			[ "$arch" = arm64 ] && list="$list $pkg:$arch"
			;;
		libefl-all-dev)
			# EFL's -dev packages are not co-installable across
			# architectures (apt would remove the native ones and
			# python3 with them); duet-launch-efl is optional and the
			# cross builds go without it.
			;;
		libseat-dev)
			# libseat1 depends on seatd | logind, whose :ARCH
			# twins are daemons, not co-installable libraries; the
			# cross builds go without sessions (the card opened
			# directly, as root).
			;;
		libinput-dev | libudev-dev)
			# The KMS backend's input devices: optional like the
			# sessions, and libinput's udev quirks (libinput-bin) and
			# udev itself are the host's; the cross builds go without
			# input devices.
			;;
		lib*) list="$list $pkg:$arch" ;;
		esac
	done
	[ "$arch" = arm64 ] && list="$list qemu-user-static"
	echo "$list"
}

# duet_ensure_cross_packages WHO ARCH...: installs what is missing (as root),
# or prints the commands and returns 1.
duet_ensure_cross_packages() {
	who=$1
	shift
	if ! command -v dpkg >/dev/null 2>&1; then
		echo "$who: no dpkg (not Debian?); assuming the cross packages are installed" >&2
		return 0
	fi
	foreign=$(dpkg --print-foreign-architectures)
	add_arch=
	missing=
	for arch in "$@"; do
		duet_cross_triplet "$arch" >/dev/null || {
			echo "$who: unknown architecture '$arch' (arm64 or armhf)" >&2
			return 1
		}
		case " $(echo $foreign) " in
		*" $arch "*) ;;
		*) add_arch="$add_arch $arch" ;;
		esac
		for pkg in $(duet_cross_packages "$arch"); do
			case "$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null)" in
			ii*) ;;
			*) missing="$missing $pkg" ;;
			esac
		done
	done
	missing=${missing# }
	[ -z "$missing" ] && [ -z "$add_arch" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "$who: missing cross packages; install them with:"
		for arch in $add_arch; do
			echo "sudo dpkg --add-architecture $arch"
		done
		echo "sudo apt-get update"
		echo "sudo apt-get install --no-install-recommends $missing"
		return 1
	fi
	for arch in $add_arch; do
		echo "$who: dpkg --add-architecture $arch"
		dpkg --add-architecture "$arch" || return 1
	done
	echo "$who: installing: $missing"
	export DEBIAN_FRONTEND=noninteractive
	# An architecture added here whose indexes cannot be fetched (an
	# out-of-sync mirror) would make every later apt-get update fail, on a
	# machine others use too: take it back out. (duet_cross_sysroot needs
	# no foreign architecture.)
	apt-get update || {
		echo "$who: apt-get update failed" >&2
		for arch in $add_arch; do
			dpkg --remove-architecture "$arch" &&
				echo "$who: removed the architecture $arch again" >&2
		done
		return 1
	}
	# Multi-arch may upgrade amd64 libraries; it must never remove one (other
	# work on this machine relies on what is installed).
	# shellcheck disable=SC2086 # one word per package
	removals=$(apt-get install -s -y --no-install-recommends $missing | sed -n 's/^Remv \([^ ]*\).*/\1/p')
	if [ -n "$removals" ]; then
		echo "$who: installing the cross packages would remove:" $removals "; not installing" >&2
		return 1
	fi
	# shellcheck disable=SC2086
	apt-get install -y --no-install-recommends $missing || {
		echo "$who: apt-get failed" >&2
		return 1
	}
}

# duet_cross_sysroot WHO ARCH DIR: a sysroot for ARCH in DIR, without
# touching the host's packages: apt, with a private state of its own and the
# host's sources, downloads ARCH's library packages (the same list as
# duet_cross_packages, without the compiler) and dpkg-deb unpacks them into
# DIR/root. Needs no root, only the cross compiler. Kept while the package
# list is unchanged. For build-only targets (armhf in scripts/test), and for
# machines where the multi-arch install cannot be done (a mirror whose
# security index for ARCH is out of sync; apt then uses what it could fetch,
# which is enough to build).
duet_cross_sysroot() {
	who=$1 arch=$2 dir=$3
	# The libraries, and the architecture-independent XML they are built from.
	want=$( (duet_cross_packages "$arch" | tr ' ' '\n' | sed -n 's/:'"$arch"'$//p'
		echo wayland-protocols) | sort | tr '\n' ' ')
	if [ -f "$dir/root/.duet-packages" ] && [ "$(cat "$dir/root/.duet-packages")" = "$want" ]; then
		return 0
	fi
	echo "$who: building an $arch sysroot in $dir/root"
	# apt takes absolute directories only.
	mkdir -p "$dir" && dir=$(cd "$dir" && pwd) || return 1
	rm -rf "$dir/root" "$dir/apt"
	mkdir -p "$dir/apt/lists/partial" "$dir/apt/archives/partial" "$dir/root" || return 1
	: >"$dir/apt/status"
	set -- -o "APT::Architecture=$arch" -o "APT::Architectures::=$arch" \
		-o "Dir::State=$dir/apt" -o "Dir::State::Lists=$dir/apt/lists" \
		-o "Dir::State::status=$dir/apt/status" -o "Dir::Cache=$dir/apt" \
		-o "Dir::Cache::archives=$dir/apt/archives" -o "Debug::NoLocking=1" \
		-o "APT::Sandbox::User=$(id -un)"
	# An index that fails (an out-of-sync mirror) leaves the others usable.
	apt-get "$@" -q update || echo "$who: apt-get update of the $arch sysroot had errors; going on with the indexes it got" >&2
	# shellcheck disable=SC2086 # one word per package
	apt-get "$@" -q -y --no-install-recommends --download-only install $want || {
		echo "$who: apt-get could not download the $arch packages" >&2
		return 1
	}
	for deb in "$dir"/apt/archives/*.deb; do
		dpkg-deb -x "$deb" "$dir/root" || return 1
	done
	# Absolute symbolic links (lib.so -> /lib/...) must point into the sysroot.
	find "$dir/root" -type l | while read -r link; do
		target=$(readlink "$link")
		case "$target" in
		/*) ln -sfn "$dir/root$target" "$link" ;;
		esac
	done
	rm -rf "$dir/apt/archives" "$dir/root/usr/share/doc" "$dir/root/usr/share/man" \
		"$dir/root/usr/share/locale"
	echo "$want" >"$dir/root/.duet-packages"
}

# duet_cross_sysroot_file ARCH DIR: writes DIR/sysroot.ini, a meson cross file
# to give after cross/TRIPLET.ini that builds against DIR/root (and runs its
# programs, if at all, with qemu-user's -L DIR/root).
duet_cross_sysroot_file() {
	arch=$1 dir=$2
	triplet=$(duet_cross_triplet "$arch") || return 1
	root=$(cd "$dir/root" && pwd) || return 1
	qemu=qemu-$(echo "$triplet" | sed 's/-.*//')-static
	cat >"$dir/sysroot.ini" <<SYSROOT
# Written by scripts/cross-packages.sh (duet_cross_sysroot_file): the $arch
# sysroot in $root, layered over cross/$triplet.ini.
[binaries]
exe_wrapper = ['$qemu', '-L', '$root']

[properties]
sys_root = '$root'
pkg_config_libdir = ['$root/usr/lib/$triplet/pkgconfig', '$root/usr/share/pkgconfig']

[built-in options]
c_args = ['--sysroot=$root']
c_link_args = ['--sysroot=$root']
SYSROOT
}

# Run as a command (not sourced).
case "$0" in
*cross-packages.sh)
	[ $# -eq 0 ] && set -- arm64 armhf
	duet_ensure_cross_packages scripts/cross-packages.sh "$@"
	;;
esac
