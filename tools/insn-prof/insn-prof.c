// SPDX-License-Identifier: GPL-2.0
/*
 * insn-prof: a QEMU TCG plugin that counts the guest instructions executed per translation
 * block start address, for `scripts/vm-run --profile`. Under `-icount` a guest's time is its
 * instruction count, so this is a profile of exactly what the instruction-counting measure
 * weighs (a rep-string iteration is its own block execution, so it counts one per iteration
 * too).
 *
 * Controlled through a file the guest writes over 9p (plugin argument ctl=PATH), polled every
 * 100 ms: "reset" zeroes every count; "dump NAME" writes "vaddr insns_per_exec execs" lines to
 * NAME in the control file's directory. The file is removed once the command is done, which is
 * how the guest knows.
 *
 * Declares only the plugin API it uses (stable since QEMU 4.2; QEMU_PLUGIN_VERSION 1 is what
 * Debian's 7.2 accepts), so it builds without QEMU's headers.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define SLOT_BITS 21
#define SLOTS (1u << SLOT_BITS)
struct slot {
	uint64_t vaddr;
	uint64_t execs;
	uint32_t insns;
	uint32_t used;
};
static struct slot *table;
static const char *ctl_path;
static char out_dir[4096];

/* Blocks with the same start share a slot (a retranslation, or the same address in another
 * process); a block of another length at the same start keeps the first length. */
static struct slot *slot_for(uint64_t vaddr, uint32_t insns)
{
	uint64_t h = (vaddr * 0x9E3779B97F4A7C15ull) >> (64 - SLOT_BITS);
	for (uint32_t i = 0; i < SLOTS; i++) {
		struct slot *s = &table[(h + i) & (SLOTS - 1)];
		if (s->used && s->vaddr == vaddr)
			return s;
		if (!s->used) {
			s->vaddr = vaddr;
			s->insns = insns;
			s->used = 1;
			return s;
		}
	}
	return NULL;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct slot *s = slot_for(qemu_plugin_tb_vaddr(tb), qemu_plugin_tb_n_insns(tb));

	(void)id;
	if (s)
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &s->execs, 1);
}

/* Writes every block executed since the last reset to NAME beside the control file. */
static void dump(const char *name)
{
	char path[8192];
	FILE *out;

	if (strchr(name, '/'))
		return; /* a name, not a path */
	snprintf(path, sizeof(path), "%s/%s", out_dir, name);
	out = fopen(path, "w");
	if (!out)
		return;
	for (uint32_t i = 0; i < SLOTS; i++)
		if (table[i].used && table[i].execs)
			fprintf(out, "%lx %u %lu\n", (unsigned long)table[i].vaddr, table[i].insns,
				(unsigned long)table[i].execs);
	fclose(out);
}

static void *control(void *arg)
{
	char cmd[4096];

	(void)arg;
	for (;;) {
		usleep(100000);
		FILE *f = fopen(ctl_path, "r");
		if (!f)
			continue;
		size_t n = fread(cmd, 1, sizeof(cmd) - 1, f);
		fclose(f);
		cmd[n] = 0;
		while (n && (cmd[n - 1] == '\n' || cmd[n - 1] == ' '))
			cmd[--n] = 0;
		if (!strcmp(cmd, "reset")) {
			for (uint32_t i = 0; i < SLOTS; i++)
				table[i].execs = 0;
		} else if (!strncmp(cmd, "dump ", 5)) {
			dump(cmd + 5);
		} else if (n == 0) {
			continue; /* written but not yet filled */
		}
		unlink(ctl_path);
	}
	return NULL;
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
							     const qemu_info_t *info, int argc,
							     char **argv)
{
	pthread_t t;

	(void)info;
	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "ctl=", 4))
			ctl_path = argv[i] + 4;
	if (!ctl_path || !strrchr(ctl_path, '/')) {
		fprintf(stderr, "insn-prof: needs ctl=/DIR/FILE\n");
		return -1;
	}
	snprintf(out_dir, sizeof(out_dir), "%.*s", (int)(strrchr(ctl_path, '/') - ctl_path), ctl_path);
	table = calloc(SLOTS, sizeof(*table));
	if (!table)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	return pthread_create(&t, NULL, control, NULL);
}
