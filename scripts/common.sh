# shellcheck shell=bash
# Shared settings for every rxe-rs script. Source it; do not run it.
# The one place where the kernel version is pinned.

set -euo pipefail

# Debian's stock kernel we build against and boot (trixie-backports).
KVER_DEB="7.3.4+deb13"            # package version stem
KREL="${KVER_DEB}-amd64"           # uname -r of the stock kernel
KSRC_PKG="linux-source-7.3"        # source package (same version as the binaries)
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE="trixie"

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${RXE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rxe-rs}"
BUILDROOT="$CACHE/buildroot-$SUITE"    # Debian's kernel toolchain, used via chroot
GUESTROOT="$CACHE/guestroot-$SUITE"    # the VM's root filesystem (9p)
DEBS="$CACHE/debs-$KVER_DEB"           # downloaded kernel packages
STOCK_KDIR="$CACHE/kernel-stock-$KREL" # configured linux-source tree for the stock kernel
STOCK_VMLINUZ="$CACHE/stock-$KREL/vmlinuz"
STOCK_MODDIR="$CACHE/stock-$KREL/modules/usr/lib/modules/$KREL"  # Debian's /lib/modules/$KREL

# Our debug kernel: same source, trimmed config + KASAN/lockdep/kmemleak, keyed by config hash.
DEBUG_FRAGMENT="$REPO/scripts/kernel-debug.config"
DEBUG_KREL="7.3.4-rxe-debug"
DEBUG_HASH=$( (echo "$KVER_DEB"; cat "$DEBUG_FRAGMENT") | sha256sum | cut -c1-12)
DEBUG_KDIR="$CACHE/kernel-debug-$KVER_DEB-$DEBUG_HASH"
DEBUG_VMLINUZ="$DEBUG_KDIR/arch/x86/boot/bzImage"
DEBUG_MODDIR="$DEBUG_KDIR/modinst/lib/modules/$DEBUG_KREL"
# Rust with KASAN needs a clang-built kernel (init/Kconfig: RUST depends on !KASAN || CC_IS_CLANG).
DEBUG_MAKEFLAGS="CC=clang"

# scripts/build-module's module tree (kernel modules + ours) for the VM, one per checkout so
# worktrees and clones never boot each other's module.
REPO_TAG=$(printf %s "$REPO" | sha256sum | cut -c1-8)
modtree() { echo "$CACHE/modtree-$1-$REPO_TAG"; }

# Paths as seen inside the build root (bind mounts).
CH_REPO=/src/rxe-rs
CH_CACHE=/cache

log() { printf '\033[1m[rxe-rs]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[rxe-rs] error:\033[0m %s\n' "$*" >&2; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, bind mounts)"; }

# Run a command chrooted into tree $1, with the repo and the cache bind-mounted at
# $CH_REPO and $CH_CACHE. Mounts live in a private mount namespace and vanish with the command.
chroot_run() {
	need_root
	local tree=$1; shift
	mkdir -p "$tree$CH_REPO" "$tree$CH_CACHE"
	unshare -m -- bash -c '
		set -e
		tree=$1; repo=$2; cache=$3; chrepo=$4; chcache=$5; shift 5
		mount --make-rprivate /
		mount --bind "$repo" "$tree$chrepo"
		mount --bind "$cache" "$tree$chcache"
		mount -t proc proc "$tree/proc"
		mount --rbind /dev "$tree/dev"
		exec chroot "$tree" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"
	' _ "$tree" "$REPO" "$CACHE" "$CH_REPO" "$CH_CACHE" "$@"
}

# Run a command inside the build root (Debian's kernel toolchain).
in_buildroot() {
	[ -f "$BUILDROOT/.rxe-rs-ready" ] || die "build root missing: run scripts/setup-buildroot"
	chroot_run "$BUILDROOT" "$@"
}

# The machine's lock. `machine_lock` (exclusive): whatever rewrites the trees a VM reads (the guest
# root, the module tree) or times something (a bench, a counted or profiled VM, two VMs, MTTCG)
# runs alone. `machine_lock shared`: a single-threaded VM, one host thread, boots from the
# read-only trees beside others of its kind (tests/run runs up to `nproc` of them). Nested
# callers inherit the lock their parent holds.
machine_lock() {
	[ -n "${RXE_MACHINE_LOCKED:-}" ] && return 0
	exec 9>"${TMPDIR:-/tmp}/rxe-rs-machine.lock"
	if [ "${1:-}" = shared ]; then flock -s 9; else flock 9; fi
	export RXE_MACHINE_LOCKED=1
}
