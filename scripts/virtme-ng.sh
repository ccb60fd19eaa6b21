# Sourced by the scripts that boot a guest with virtme-ng (scripts/test-kms,
# scripts/board-vm): POSIX sh. One pinned version from PyPI, in a venv.
#
# duet_virtme_ng DIR
#   Makes DIR/venv hold virtme-ng $DUET_VIRTME_NG_VERSION (installed from
#   PyPI when it is missing or another version; pip's output in
#   DIR/venv.log) and returns 0; on failure it prints why on stdout (the
#   caller says it its own way: a skip line or an error) and returns 1.
#   The guest is then started with DIR/venv/bin/vng, with DIR/venv/bin
#   on PATH (vng runs virtme-run from PATH).
DUET_VIRTME_NG_VERSION=1.42
duet_virtme_ng() {
	if "$1/venv/bin/vng" --version 2>/dev/null | grep -q " $DUET_VIRTME_NG_VERSION"; then
		return 0
	fi
	echo "installing virtme-ng $DUET_VIRTME_NG_VERSION from PyPI into $1/venv" >&2
	rm -rf "$1/venv"
	if python3 -m venv "$1/venv" >"$1/venv.log" 2>&1 &&
		"$1/venv/bin/pip" install -q "virtme-ng==$DUET_VIRTME_NG_VERSION" >>"$1/venv.log" 2>&1; then
		return 0
	fi
	echo "cannot install virtme-ng $DUET_VIRTME_NG_VERSION from PyPI: $(tail -n 1 "$1/venv.log")"
	return 1
}
