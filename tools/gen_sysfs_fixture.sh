#!/bin/sh
# gen_sysfs_fixture.sh - writes the recorded sysfs trees the node agent's
# tests read (docs/agent.md).  POSIX sh; plain files, directories and
# relative symlinks, laid out as on a live host:
#
#   devices/system/node/nodeN/{cpulist,meminfo,distance}
#   devices/system/cpu/online
#   devices/pciD:BB/ROOTPORT/.../ADDR/{class,vendor,device,numa_node}
#   devices/pciD:BB/.../ADDR/net/IFNAME/address          NICs
#   devices/pciD:BB/.../ADDR/nvlink_peers                 muster's NVLink list
#   bus/pci/devices/ADDR -> ../../../devices/pciD:BB/.../ADDR
#
# Trees:
#   dgx8   a DGX-like server: 2 sockets (NUMA nodes 0 and 1, 64 CPUs and
#          512 GiB each, distances 10/21), 4 PCIe switches (2 per socket),
#          each with 2 NVIDIA GPUs (class 0x030200) and 2 Mellanox NICs
#          (class 0x020000, net/ibpNs0); NVLink all-to-all between the 8
#          GPUs; and the BMC's ASPEED VGA, which is not a GPU.
#   pcie4  a PCIe-only single-socket server: NUMA node 0 (64 CPUs, 256 GiB),
#          every numa_node -1, 2 switches with 2 GPUs each (one pair VGA
#          class 0x030000, one pair 3D 0x030200), no nvlink_peers, and a
#          dual-port Intel NIC straight on a root port.
#
# Usage: sh tools/gen_sysfs_fixture.sh [OUTDIR]   (default tests/data/sysfs)
# Replaces OUTDIR/dgx8 and OUTDIR/pcie4.
set -eu
OUT=${1:-tests/data/sysfs}

# put FILE TEXT: writes TEXT and a newline to FILE, creating directories.
put() {
	mkdir -p "$(dirname "$1")"
	printf '%s\n' "$2" >"$1"
}

# node T ID CPULIST KB DISTANCE: one NUMA node of tree T.
node() {
	d=$1/devices/system/node/node$2
	put "$d/cpulist" "$3"
	printf 'Node %s MemTotal:       %s kB\nNode %s MemFree:        %s kB\nNode %s MemUsed:        %s kB\n' \
		"$2" "$4" "$2" $(($4 - 1048576)) "$2" 1048576 >"$d/meminfo"
	put "$d/distance" "$5"
}

# dev T HB PATH CLASS VENDOR DEVICE [NUMA]: a PCI function at
# devices/pciHB/PATH (PATH ends in its address) and its bus/pci/devices
# symlink.  Without NUMA only class and vendor are written (bridges).
dev() {
	d=$1/devices/pci$2/$3
	put "$d/class" "$4"
	put "$d/vendor" "$5"
	if [ $# -ge 7 ]; then
		put "$d/device" "$6"
		put "$d/numa_node" "$7"
	fi
	mkdir -p "$1/bus/pci/devices"
	ln -s "../../../devices/pci$2/$3" "$1/bus/pci/devices/${3##*/}"
}

# addr D BUS SLOT: prints "D:BB:SS.0" with BUS and SLOT in hex.
addr() {
	printf '%s:%02x:%02x.0' "$1" "$2" "$3"
}

# switch T D HB RP BASE NUMA NIC: a PCIe switch under root port RP of host
# bridge D:HB with buses BASE+1.. : 2 GPUs, and 2 NICs when NIC is 1.
# Sets GPUS to the GPUs' addresses.
switch() {
	t=$1 dom=$2 hb=$3 rp=$4 base=$5 numa=$6 nic=$7
	hbn=$dom:$hb
	up=$rp/$(addr "$dom" $((base + 1)) 0)
	dev "$t" "$hbn" "$rp" 0x060400 0x1022
	dev "$t" "$hbn" "$up" 0x060400 0x1000
	GPUS=
	for i in 0 1 2 3; do
		[ "$i" -ge 2 ] && [ "$nic" = 0 ] && break
		dp=$up/$(addr "$dom" $((base + 2)) "$i")
		ep=$dp/$(addr "$dom" $((base + 3 + i)) 0)
		dev "$t" "$hbn" "$dp" 0x060400 0x1000
		if [ "$i" -lt 2 ]; then
			dev "$t" "$hbn" "$ep" 0x030200 0x10de 0x20b0 "$numa"
			GPUS="$GPUS ${ep##*/}"
		else
			dev "$t" "$hbn" "$ep" 0x020000 0x15b3 0x101b "$numa"
			n=$((base + 3 + i))
			put "$t/devices/pci$hbn/$ep/net/ibp${n}s0/address" \
				"$(printf '00:00:00:00:%02x:00' "$n")"
		fi
	done
}

gen_dgx8() {
	t=$OUT/dgx8
	rm -rf "$t"
	node "$t" 0 0-31,64-95 536870912 "10 21"
	node "$t" 1 32-63,96-127 536870912 "21 10"
	put "$t/devices/system/cpu/online" 0-127
	all=
	for k in 0 1 2 3; do
		hb=$(printf '%02x' $((k * 64)))
		switch "$t" 0000 "$hb" "0000:$hb:01.1" $((k * 64)) $((k / 2)) 1
		all="$all$GPUS"
	done
	# NVLink all-to-all: each GPU lists the seven others.
	for g in $all; do
		peers=
		for p in $all; do
			[ "$p" = "$g" ] || peers="$peers $p"
		done
		put "$t/bus/pci/devices/$g/nvlink_peers" "${peers# }"
	done
	# The BMC's VGA: a display controller, but not a GPU.
	dev "$t" 0000:00 0000:00:07.1 0x060400 0x1022
	dev "$t" 0000:00 0000:00:07.1/0000:08:00.0 0x030000 0x1a03 0x2000 0
}

gen_pcie4() {
	t=$OUT/pcie4
	rm -rf "$t"
	node "$t" 0 0-63 268435456 10
	put "$t/devices/system/cpu/online" 0-63
	switch "$t" 0000 00 0000:00:01.1 0 -1 0
	switch "$t" 0000 00 0000:00:03.1 16 -1 0
	# The first switch's GPUs are VGA-class boards.
	for g in 0000:00:01.1/0000:01:00.0/0000:02:00.0/0000:03:00.0 \
		0000:00:01.1/0000:01:00.0/0000:02:01.0/0000:04:00.0; do
		put "$t/devices/pci0000:00/$g/class" 0x030000
		put "$t/devices/pci0000:00/$g/device" 0x2230
	done
	dev "$t" 0000:00 0000:00:05.1 0x060400 0x1022
	for f in 0 1; do
		p=0000:00:05.1/0000:21:00.$f
		dev "$t" 0000:00 "$p" 0x020000 0x8086 0x1593 -1
		put "$t/devices/pci0000:00/$p/net/enp33s0f$f/address" "00:00:00:00:21:0$f"
	done
}

gen_dgx8
gen_pcie4
