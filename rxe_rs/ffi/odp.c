// SPDX-License-Identifier: GPL-2.0
/*
 * On-demand paging (C's rxe_odp.c) for a data path that runs in softirq.
 *
 * The C driver faults pages in (ib_umem_odp_map_dma_and_lock, hmm_range_fault) and copies
 * under the umem's mutex, inside its data path, which runs on a workqueue. rxe-rs's data path
 * runs in softirq, where neither may be done. So the data path sees an ODP MR through a page
 * table of its own, `pages[]`, under a spinlock: an entry is the page of that part of the MR
 * (with RXE_RS_ODP_WRITABLE if it may be written), or 0 if it is not mapped. A copy checks
 * every entry it needs and copies under the lock, or copies nothing (-EAGAIN: the caller
 * faults the range in from process context with rxe_rs_odp_fault and tries again).
 *
 * The entries are set by a fault (under umem_mutex, from the pfn list the fault filled in)
 * and cleared by the MMU notifier's invalidation before it unmaps the pages (under umem_mutex
 * too, as C): once an entry is clear no copy uses its page, so the mm may free it when the
 * notifier returns. Release (deregistration) clears them all under the rwsem that every
 * fault holds, so no fault uses the umem after it.
 *
 * Kept in C: the notifier callback and the HMM pfn list are C structures used under the mm's
 * locks; the Rust side (rxe_rs/ib/odp.rs) holds a reference to this struct and calls these
 * functions only.
 */
#include <linux/hmm.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_umem_odp.h>
#include "rxe_rs_ffi.h"

#define RXE_RS_ODP_WRITABLE 1UL

struct rxe_rs_odp {
	refcount_t ref;
	/* Held for reading by a fault, for writing by release. */
	struct rw_semaphore rwsem;
	struct ib_umem_odp *umem_odp;	/* NULL once released */
	/* The data path's view: protects pages[]. */
	spinlock_t lock;
	unsigned long start;		/* ib_umem_start */
	unsigned long npages;
	unsigned int page_shift;
	unsigned long pages[];		/* struct page * | RXE_RS_ODP_WRITABLE, or 0 */
};

/* Clears the entries of [start, end) (user addresses, clamped to the umem). */
static void rxe_rs_odp_clear(struct rxe_rs_odp *odp, unsigned long start, unsigned long end)
{
	unsigned long first, last, i;

	if (end <= odp->start)
		return;
	start = max(start, odp->start);
	first = (start - odp->start) >> odp->page_shift;
	last = min((end - 1 - odp->start) >> odp->page_shift, odp->npages - 1);
	spin_lock_bh(&odp->lock);
	for (i = first; i <= last && i < odp->npages; i++)
		odp->pages[i] = 0;
	spin_unlock_bh(&odp->lock);
}

static bool rxe_rs_odp_invalidate(struct mmu_interval_notifier *mni,
				  const struct mmu_notifier_range *range,
				  unsigned long cur_seq)
{
	struct ib_umem_odp *umem_odp = container_of(mni, struct ib_umem_odp, notifier);
	struct rxe_rs_odp *odp;
	unsigned long start, end;

	if (!mmu_notifier_range_blockable(range))
		return false;

	mutex_lock(&umem_odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = max_t(u64, ib_umem_start(umem_odp), range->start);
	end = min_t(u64, ib_umem_end(umem_odp), range->end);
	odp = umem_odp->private;
	/* No copy uses these pages after this. */
	if (odp && start < end)
		rxe_rs_odp_clear(odp, start, end);
	ib_umem_odp_unmap_dma_pages(umem_odp, start, end);
	mutex_unlock(&umem_odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops rxe_rs_odp_mn_ops = {
	.invalidate = rxe_rs_odp_invalidate,
};

/*
 * Maps what the pfn list says of [va, va + len) into pages[]; umem_mutex held (the list is
 * stable under it).
 */
static void rxe_rs_odp_fill(struct rxe_rs_odp *odp, u64 va, u64 len)
{
	struct ib_umem_odp *umem_odp = odp->umem_odp;
	unsigned long first = (va - odp->start) >> odp->page_shift;
	unsigned long last = (va + len - 1 - odp->start) >> odp->page_shift;
	unsigned long i;

	spin_lock_bh(&odp->lock);
	for (i = first; i <= last && i < odp->npages; i++) {
		unsigned long pfn = umem_odp->map.pfn_list[i];

		if (!(pfn & HMM_PFN_VALID)) {
			odp->pages[i] = 0;
			continue;
		}
		odp->pages[i] = (unsigned long)hmm_pfn_to_page(pfn) |
				((pfn & HMM_PFN_WRITE) ? RXE_RS_ODP_WRITABLE : 0);
	}
	spin_unlock_bh(&odp->lock);
}

/* Whether [va, va + len) lies in the umem; then its first page index. */
static bool rxe_rs_odp_in(struct rxe_rs_odp *odp, u64 va, u64 len, unsigned long *first)
{
	u64 off;

	if (len == 0 || va < odp->start)
		return false;
	off = va - odp->start;
	if (off >= ((u64)odp->npages << odp->page_shift) ||
	    len > ((u64)odp->npages << odp->page_shift) - off)
		return false;
	*first = off >> odp->page_shift;
	return true;
}

int rxe_rs_odp_fault(struct rxe_rs_odp *odp, u64 va, u64 len, bool write, bool fault)
{
	struct ib_umem_odp *umem_odp;
	unsigned long first;
	u64 access_mask = 0;
	int np;

	might_sleep();
	if (!rxe_rs_odp_in(odp, va, len, &first))
		return -EFAULT;
	down_read(&odp->rwsem);
	umem_odp = odp->umem_odp;
	if (!umem_odp) {
		up_read(&odp->rwsem);
		return -EFAULT;
	}
	if (write && !umem_odp->umem.writable) {
		up_read(&odp->rwsem);
		return -EPERM;
	}
	if (umem_odp->umem.writable && write)
		access_mask |= HMM_PFN_WRITE;
	/* Locks umem_mutex on success. */
	np = ib_umem_odp_map_dma_and_lock(umem_odp, va, len, access_mask, fault);
	if (np < 0) {
		up_read(&odp->rwsem);
		return np;
	}
	rxe_rs_odp_fill(odp, va, len);
	mutex_unlock(&umem_odp->umem_mutex);
	up_read(&odp->rwsem);
	return 0;
}

struct rxe_rs_odp *rxe_rs_odp_get(struct ib_device *ibdev, u64 start, u64 length, int access)
{
	struct ib_umem_odp *umem_odp;
	struct rxe_rs_odp *odp;
	unsigned long npages;

	umem_odp = ib_umem_odp_get(ibdev, start, length, access, &rxe_rs_odp_mn_ops);
	if (IS_ERR(umem_odp))
		return ERR_CAST(umem_odp);
	npages = ib_umem_odp_num_pages(umem_odp);
	odp = kvzalloc(struct_size(odp, pages, npages), GFP_KERNEL);
	if (!odp) {
		ib_umem_odp_release(umem_odp);
		return ERR_PTR(-ENOMEM);
	}
	refcount_set(&odp->ref, 1);
	init_rwsem(&odp->rwsem);
	spin_lock_init(&odp->lock);
	odp->umem_odp = umem_odp;
	odp->start = ib_umem_start(umem_odp);
	odp->npages = npages;
	odp->page_shift = umem_odp->page_shift;
	mutex_lock(&umem_odp->umem_mutex);
	umem_odp->private = odp;
	mutex_unlock(&umem_odp->umem_mutex);
	/* As C rxe_odp_init_pages: what is mapped already, without faulting. */
	if (length)
		rxe_rs_odp_fault(odp, start, length, umem_odp->umem.writable, false);
	return odp;
}

void rxe_rs_odp_release(struct rxe_rs_odp *odp)
{
	struct ib_umem_odp *umem_odp;

	down_write(&odp->rwsem);
	umem_odp = odp->umem_odp;
	odp->umem_odp = NULL;
	if (umem_odp) {
		mutex_lock(&umem_odp->umem_mutex);
		umem_odp->private = NULL;
		mutex_unlock(&umem_odp->umem_mutex);
	}
	spin_lock_bh(&odp->lock);
	memset(odp->pages, 0, odp->npages * sizeof(odp->pages[0]));
	spin_unlock_bh(&odp->lock);
	up_write(&odp->rwsem);
	if (umem_odp)
		ib_umem_odp_release(umem_odp);
}

void rxe_rs_odp_get_ref(struct rxe_rs_odp *odp)
{
	refcount_inc(&odp->ref);
}

void rxe_rs_odp_put(struct rxe_rs_odp *odp)
{
	if (refcount_dec_and_test(&odp->ref)) {
		/* Released by its owner before its last reference goes (rxe_rs/ib/odp.rs). */
		WARN_ON_ONCE(odp->umem_odp);
		kvfree(odp);
	}
}

bool rxe_rs_odp_writable(struct rxe_rs_odp *odp)
{
	struct ib_umem_odp *umem_odp;
	bool writable;

	down_read(&odp->rwsem);
	umem_odp = odp->umem_odp;
	writable = umem_odp && umem_odp->umem.writable;
	up_read(&odp->rwsem);
	return writable;
}

/* Whether every page of [first, first + n) is mapped (and writable, for `write`); lock held. */
static bool rxe_rs_odp_present(struct rxe_rs_odp *odp, unsigned long first, unsigned long n,
			       bool write)
{
	unsigned long i;

	for (i = first; i < first + n; i++) {
		unsigned long e = odp->pages[i];

		if (!e || (write && !(e & RXE_RS_ODP_WRITABLE)))
			return false;
	}
	return true;
}

int rxe_rs_odp_copy(struct rxe_rs_odp *odp, u64 va, void *buf, unsigned int len, bool to_mr)
{
	unsigned long first, n, idx;
	unsigned int done = 0;
	size_t page_size = 1UL << odp->page_shift;
	size_t offset;

	if (len == 0)
		return 0;
	if (!rxe_rs_odp_in(odp, va, len, &first))
		return -EFAULT;
	offset = (va - odp->start) & (page_size - 1);
	n = (offset + len + page_size - 1) >> odp->page_shift;
	spin_lock_bh(&odp->lock);
	if (!rxe_rs_odp_present(odp, first, n, to_mr)) {
		spin_unlock_bh(&odp->lock);
		return -EAGAIN;
	}
	for (idx = first; done < len; idx++) {
		struct page *page = (struct page *)(odp->pages[idx] & ~RXE_RS_ODP_WRITABLE);
		size_t bytes = min_t(size_t, page_size - offset, len - done);
		u8 *kva;

		/* page_shift is PAGE_SHIFT for a umem that is not huge-page mapped. */
		kva = kmap_local_page(page);
		if (to_mr)
			memcpy(kva + offset, (u8 *)buf + done, bytes);
		else
			memcpy((u8 *)buf + done, kva + offset, bytes);
		kunmap_local(kva);
		done += bytes;
		offset = 0;
	}
	spin_unlock_bh(&odp->lock);
	return 0;
}

int rxe_rs_odp_atomic(struct rxe_rs_odp *odp, u64 va, bool cas, u64 cmp, u64 val, u64 *orig)
{
	unsigned long first;
	size_t offset;
	u64 *kva;

	if (!rxe_rs_odp_in(odp, va, 8, &first))
		return -EFAULT;
	if (va & 7)
		return -EINVAL;
	offset = (va - odp->start) & ((1UL << odp->page_shift) - 1);
	spin_lock_bh(&odp->lock);
	if (!rxe_rs_odp_present(odp, first, 1, true)) {
		spin_unlock_bh(&odp->lock);
		return -EAGAIN;
	}
	kva = kmap_local_page((struct page *)(odp->pages[first] & ~RXE_RS_ODP_WRITABLE));
	if (cas)
		*orig = cmpxchg(kva + offset / 8, cmp, val);
	else
		*orig = atomic64_fetch_add(val, (atomic64_t *)(kva + offset / 8));
	kunmap_local(kva);
	spin_unlock_bh(&odp->lock);
	return 0;
}
