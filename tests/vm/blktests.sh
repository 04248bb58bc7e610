#!/bin/bash
# Guest test: blktests (tests/third-party/blktests, unmodified) over the loaded rxe driver, run
# as upstream runs soft-RoCE (USE_RXE=1, NVMET_TRTYPES=rdma). One case per blktests test: ok,
# FAIL (with its output, tail of its .full log and dmesg) or skip ("not run", with blktests'
# reasons); then "N passed, M failed". Each argument is run by its own ./check under a
# timeout, so a hang ends that run only.
#   blktests.sh [-T SEC] [-b TYPES] [-t SEC] CHECK_ARGS [[-t SEC] CHECK_ARGS]...
# -T SEC sets blktests' own TIMEOUT (the runtime of each fio run, for slow kernels: KASAN).
# -b TYPES sets NVMET_BLKDEV_TYPES, the nvme targets' backends ("device file" by default; each
# type repeats the tests that use one).
# Each CHECK_ARGS is one ./check run, under the last -t given (5400 s by default): a group or
# tests, with ./check's own options, e.g. nvme, "srp/001 srp/002", "nvme -x nvme/044".
# blktests loads and unloads the driver by the name rdma_rxe. With DRIVER=rs that name is
# mapped in a scratch copy (/tmp/blktests): every rdma_rxe becomes rdma_rxe_rs but the
# `_have_module rdma_rxe` checks, which only look for a soft-RoCE module file under
# /lib/modules/*/kernel (ours is in extra/). The committed copy stays pristine.
# Results (blktests' results/ directory) are copied to .build/blktests/$DRIVER-$VARIANT/.
set -u
. "$(dirname "$0")/lib.sh"
group_timeout=5400
fio_timeout= blkdev_types=
[ "${1:-}" = -T ] && { fio_timeout=$2; shift 2; }
[ "${1:-}" = -b ] && { blkdev_types=$2; shift 2; }
[ $# -gt 0 ] || { echo "usage: blktests.sh [-T SEC] [-b TYPES] [-t SEC] CHECK_ARGS..."; exit 2; }
case "$DRIVER" in
c) mod=rdma_rxe ;;
rs) mod=rdma_rxe_rs ;;
*) echo "blktests.sh needs an rxe driver loaded (vm-run --driver rs|c), not '$DRIVER'"; exit 2 ;;
esac
src=/src/rxe-rs/tests/third-party/blktests
work=/tmp/blktests
keep=/src/rxe-rs/.build/blktests/$DRIVER-$VARIANT
rm -rf "$keep"
skipped=0

check "driver under test is $mod, the other not loaded" sh -ec "
	test -d /sys/module/$mod
	test ! -d /sys/module/$([ "$DRIVER" = rs ] && echo rdma_rxe || echo rdma_rxe_rs)"

rm -rf "$work"; cp -a "$src" "$work"
if [ "$DRIVER" = rs ]; then
	grep -rlw rdma_rxe "$work/common" "$work/tests" | xargs sed -i '/_have_module/!s/\brdma_rxe\b/rdma_rxe_rs/g'
fi
# Outside comments, every remaining rdma_rxe is a `_have_module` check: an upstream change that
# names the module some other way shows up here.
names_only_mod() {
	local left
	left=$(grep -rnw rdma_rxe "$work/common" "$work/tests" | grep -v -e '_have_module rdma_rxe' -e ':[[:space:]]*#')
	[ "$DRIVER" = c ] || [ -z "$left" ] || { echo "$left"; return 1; }
	[ "$DRIVER" = c ] || grep -rqw rdma_rxe_rs "$work/common/nvme"
}
check "blktests loads and unloads $mod (scratch copy)" names_only_mod

# NVME_IMG_SIZE: the nvme targets' backing files live in the guest's /tmp, a tmpfs of half its
# 2 GiB; blktests' default 1G fills it. 350m is the most any nvme test requires (nvme/035).
cat >"$work/config" <<EOF
USE_RXE=1
NVMET_TRTYPES=rdma
NVME_IMG_SIZE=350m
EOF
[ -z "$fio_timeout" ] || echo "TIMEOUT=$fio_timeout" >>"$work/config"
[ -z "$blkdev_types" ] || echo "NVMET_BLKDEV_TYPES=\"$blkdev_types\"" >>"$work/config"

# The guest root is a read-only 9p mount. The srp tests write /etc (multipath.conf, target),
# the nvme ones mount a file system on /mnt/blktests: a writable copy of /etc, and a tmpfs
# directory on /mnt that keeps vm-run's /mnt/run. blktests reads the kernel's configuration
# from /boot/config-\$(uname -r).
if [ ! -w /etc ]; then
	cp -a /etc /tmp/etc-rw && mount --bind /tmp/etc-rw /etc
fi
if [ ! -w /mnt ]; then
	mkdir -p /tmp/mnt-rw/run && mount --bind /mnt/run /tmp/mnt-rw/run && mount --rbind /tmp/mnt-rw /mnt
fi
mount -t tmpfs tmpfs /boot && cp "/lib/modules/$(uname -r)/config" "/boot/config-$(uname -r)"
# udev: multipath (srp) takes device identities from udev's database; the tests settle on it.
/usr/lib/systemd/systemd-udevd --daemon 2>/dev/null && udevadm settle
# Debian 13's `udevadm settle` can lose a race on udevd's control socket ("Failed to wait for
# daemon to reply: Broken pipe", seen once in nvme/019 under CI's load), and blktests puts that
# message into the test's output. A wrapper first on PATH retries settle (restarting udevd if it
# is gone) and logs each retry to /tmp/udevadm-retries; every other udevadm call is passed on.
mkdir -p /tmp/blktests-bin
cat >/tmp/blktests-bin/udevadm <<'WRAP'
#!/bin/bash
[ "${1:-}" = settle ] || exec /usr/bin/udevadm "$@"
for try in 1 2 3; do
	err=$(/usr/bin/udevadm "$@" 2>&1) && exit 0
	echo "udevadm $* (try $try): $err" >>/tmp/udevadm-retries
	pgrep -x systemd-udevd >/dev/null || /usr/lib/systemd/systemd-udevd --daemon 2>/dev/null
	sleep 1
done
echo "$err" >&2
exit 1
WRAP
chmod +x /tmp/blktests-bin/udevadm
export PATH=/tmp/blktests-bin:$PATH
# The one compiled helper these groups use (srp: discontiguous-io).
if printf '%s\n' "$@" | grep -q '\bsrp'; then
	check "build blktests src/discontiguous-io" make -C "$work/src" discontiguous-io
fi

# report LOG GROUP_OR_TEST: one case per test line of ./check's output LOG: a test that passed
# or failed is a check; "not run" is printed with blktests' reasons and counted apart.
report() {
	local name status runtime details
	while IFS=$'\t' read -r name status runtime details; do
		case "$status" in
		"not run")
			echo "skip $name: not run: ${details//$'\037'/; }"
			echo skip >>/tmp/blktests-skips ;;
		*)
			printf '%s\n' "${details//$'\037'/$'\n'}" >/tmp/blktests-details
			check "$name ($runtime)" blk_result "$name" "$status" ;;
		esac
	done < <(awk '
	# One record per test: name (with its conditions, e.g. "(tr=rdma)") \t status \t runtime
	# ("-" if none) \t the indented lines below its status line, \x1f-joined.
	function flush() { if (name != "") printf "%s\t%s\t%s\t%s\n", name, status, runtime == "" ? "-" : runtime, details; name = "" }
	/\[(passed|failed|not run)\][[:space:]]*$/ {
		flush()
		match($0, /\[(passed|failed|not run)\][[:space:]]*$/)
		status = substr($0, RSTART + 1, RLENGTH - 1); sub(/\][[:space:]]*$/, "", status)
		name = $1; rest = substr($0, length($1) + 2)
		if (match(rest, /^\(([a-z_]+=[^ )]+ ?)+\)/)) name = name " " substr(rest, RSTART, RLENGTH)
		runtime = ""; details = ""; next
	}
	name != "" && /^    / {
		line = $0; sub(/^    /, "", line)
		if (line ~ /^runtime[[:space:]]/) { n = split(line, f, /[[:space:]]+/); runtime = f[n]; next }
		details = details (details == "" ? "" : "\037") line; next
	}
	name != "" { flush() }
	END { flush() }' "$1")
	# ./check lists no line for a device test (test_device, no fallback_device) when there is
	# no TEST_DEVS: those need a real device of the kind tested (an NVMe PCI drive, ...).
	local t w x=0 tests=() excluded=" "
	for w in $2; do
		if [ "$x" = 1 ]; then excluded+="$w "; x=0; continue; fi
		case "$w" in
		-x) x=1 ;;
		*/*) tests+=("$work/tests/$w") ;;
		*) tests+=("$work/tests/$w"/[0-9][0-9][0-9]) ;;
		esac
	done
	for t in "${tests[@]}"; do
		[ -f "$t" ] || continue
		t=${t#"$work"/tests/}
		[[ $excluded != *" $t "* ]] || continue
		grep -q "^$t[ (]" "$1" && continue
		if grep -q '^test_device()' "$work/tests/$t" && ! grep -q '^fallback_device()' "$work/tests/$t"; then
			echo "skip $t: not run: not listed by ./check: a device test (test_device), and TEST_DEVS is empty"
		else
			echo "skip $t: not run: not listed by ./check"
		fi
		echo skip >>/tmp/blktests-skips
	done
}
# blk_result NAME STATUS: succeeds if passed; otherwise prints why, and the test's logs.
blk_result() {
	local base f
	[ "$2" = passed ] && return 0
	cat /tmp/blktests-details
	base=${1%% *}
	for f in "$work"/results/*/"$base".out.bad "$work"/results/*/"$base".full "$work"/results/*/"$base".dmesg; do
		[ -f "$f" ] || continue
		echo "--- ${f#"$work"/} (last 15 lines)"
		tail -n 15 "$f"
	done
	return 1
}

: >/tmp/blktests-skips
for g in "$@"; do
	[ "$g" = -t ] && { shift_timeout=1; continue; }
	[ -n "${shift_timeout:-}" ] && { group_timeout=$g; shift_timeout=""; continue; }
	t0=$SECONDS
	glog=/tmp/check-$(tr -c 'a-z0-9' _ <<<"$g").log
	echo "=== ./check $g ($mod; $(echo $(cat "$work/config")); timeout ${group_timeout}s)"
	# shellcheck disable=SC2086  # $g: ./check's arguments, e.g. "nvme -x nvme/044"
	(cd "$work" && timeout -k 60 "$group_timeout" ./check $g) </dev/null 2>&1 | tee "$glog" | sed -u 's/^/  | /'
	rc=${PIPESTATUS[0]}
	echo "--- ./check $g: exit $rc, $((SECONDS - t0)) s"
	report "$glog" "$g"
	check "./check $g finished within ${group_timeout}s (exit $rc, $((SECONDS - t0)) s)" test "$rc" != 124 -a "$rc" != 137
	[ "$rc" != 124 ] && [ "$rc" != 137 ] || tail -n 20 "$glog"
	mkdir -p "$keep" && cp -a "$work/results/." "$keep/" 2>/dev/null
	cp "$glog" "$keep/" 2>/dev/null
done
# The C module must never have stood in for ours (and the other way round).
check "after the run: $mod the only rxe driver loaded" sh -ec "
	test ! -d /sys/module/$([ "$DRIVER" = rs ] && echo rdma_rxe || echo rdma_rxe_rs)"
[ ! -s /tmp/udevadm-retries ] || { echo "udevadm settle retried:"; cat /tmp/udevadm-retries; }
echo "$(wc -l </tmp/blktests-skips) not run (skipped; reasons above)"
tally
