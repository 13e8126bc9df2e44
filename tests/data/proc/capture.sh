#!/bin/sh
# Capture /proc snapshots under disk I/O, and iostat's own answer for each consecutive pair.
#
#   sudo tests/data/proc/capture.sh OUTDIR [LOADDIR] [N]
#
# Writes OUTDIR/{uptime,diskstats,meminfo,vmstat,pressure_io}.K for K = 0..N-1, taken 1 s apart
# while dd reads and writes (O_DIRECT, plus buffered writes for Dirty/Writeback) in a scratch
# directory under LOADDIR (default /var/tmp; removed afterwards), then OUTDIR/iostat.K-L.json:
# `iostat -x -d -k -o JSON 1 2` run so that its two reads see exactly snapshot K and then L.
#
# How: in a private mount namespace, the captured uptime.K and the per-disk lines of diskstats.K
# are bind-mounted over /proc/uptime and /sys/block/<disk>/stat (sysstat 12 reads disk stats from
# /sys, not /proc/diskstats; same counters, without major/minor/name); iostat starts, and 0.5 s
# later snapshot L is mounted on top, before iostat's second read. Needs root, util-linux unshare
# and sysstat's iostat.
set -eu

if [ "${1:-}" = "--iostat-pair" ]; then  # inside the private namespace: $2=OUTDIR $3=K $4=L $5=TMPDIR
    out=$2; k=$3; l=$4; stat=$5
    for snap in "$k" "$l"; do
        for dev in $(ls /sys/block); do
            awk -v d="$dev" '$3 == d { for (i = 4; i <= NF; i++) printf "%s ", $i; print "" }' \
                "$out/diskstats.$snap" > "$stat/$snap.$dev"
        done
    done
    bind() {
        mount --bind "$out/uptime.$1" /proc/uptime
        for dev in $(ls /sys/block); do
            mount --bind "$stat/$1.$dev" "/sys/block/$dev/stat"
        done
    }
    bind "$k"
    iostat -x -d -k -o JSON 1 2 > "$out/iostat.$k-$l.json" &
    sleep 0.5
    bind "$l"
    wait
    exit 0  # the namespace and its mounts end here; the caller removes $stat
fi

out=$1; loaddir=${2:-/var/tmp}; n=${3:-4}
mkdir -p "$out"
scratch=$(mktemp -d "$loaddir/pgio-capture.XXXXXX")
trap 'touch "$scratch/stop"; wait; rm -rf "$scratch"' EXIT

dd if=/dev/zero of="$scratch/seed" bs=1M count=64 oflag=direct status=none
(while [ ! -e "$scratch/stop" ]; do
    dd if=/dev/zero of="$scratch/direct" bs=64k count=400 oflag=direct status=none; done) &
(while [ ! -e "$scratch/stop" ]; do
    dd if="$scratch/seed" of=/dev/null bs=16k iflag=direct status=none; done) &
(while [ ! -e "$scratch/stop" ]; do
    dd if=/dev/zero of="$scratch/buffered" bs=1M count=200 conv=notrunc status=none; sleep 1; sync; done) &
sleep 2

k=0
while [ "$k" -lt "$n" ]; do
    cat /proc/uptime > "$out/uptime.$k"
    cat /proc/diskstats > "$out/diskstats.$k"
    cat /proc/meminfo > "$out/meminfo.$k"
    cat /proc/vmstat > "$out/vmstat.$k"
    cat /proc/pressure/io > "$out/pressure_io.$k" 2>/dev/null || rm -f "$out/pressure_io.$k"
    k=$((k + 1))
    if [ "$k" -lt "$n" ]; then sleep 1; fi
done
touch "$scratch/stop"; wait

k=0
while [ $((k + 1)) -lt "$n" ]; do
    stat=$(mktemp -d)
    unshare -m --propagation private "$0" --iostat-pair "$out" "$k" $((k + 1)) "$stat"
    rm -rf "$stat"
    k=$((k + 1))
done
uname -r > "$out/kernel"
iostat -V 2>&1 | head -1 > "$out/sysstat"
