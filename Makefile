# rxe-rs top-level Makefile. Kbuild (make -C $KDIR M=$PWD) reads ./Kbuild, not this file.
#
#   make demo        set up, build, boot Debian's stock kernel in a VM, show the module working
#   make check       set up, build, run every test (host + VM); DEBUG=1 adds the debug kernel
#   make setup       only the cached toolchain / kernels / guest (see scripts/setup)
#   make module      only build .build/stock/rdma_rxe_rs.ko (DEBUG=1: .build/debug too)
#   make host-test   only cargo test
#   make check-consumers  UCX, MPI, libfabric, NFS, iSER, rsockets over rxe0 on both drivers
#   make check-faults     every allocation of every control operation failing in turn (debug kernel)
#
# Everything heavy is cached outside the repo in ~/.cache/rxe-rs (RXE_CACHE to move it).

DEBUG ?= 0
debug_flag := $(if $(filter 1 yes y,$(DEBUG)),--debug,)

.PHONY: all setup module demo check check-consumers check-faults host-test clean bench

all: module

setup:
	scripts/setup $(debug_flag)

module: setup
	scripts/build-module
	$(if $(debug_flag),scripts/build-module --debug)

demo: module
	scripts/demo $(debug_flag)

check:
	tests/run $(debug_flag)

check-consumers: module
	scripts/check-consumers $(debug_flag)

check-faults:
	scripts/setup --debug
	scripts/build-module --debug
	scripts/check-faults

host-test:
	cargo test

bench: module
	scripts/bench

clean:
	rm -rf .build target
