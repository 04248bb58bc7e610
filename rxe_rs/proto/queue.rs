// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Index arithmetic of the rings the C driver shares with its clients (`rxe_queue.h`,
//! `rxe_queue.c`): CQs, SQs, RQs and SRQs.
//!
//! A queue is one buffer: the 384-byte header `struct rxe_queue_buf` (element size and index
//! mask for user space, then the producer and the consumer index, each in its own 128-byte
//! block), followed by `num_slots` slots of `2^log2_elem_size` bytes. `num_slots` is a power of
//! two and one slot always stays free, so the queue is empty when both indices are equal.
//!
//! Nothing here touches memory. The kernel side loads the indices of the shared header itself
//! (with acquire for the peer's index), hands them over as [`RawIndex`], and stores the indices
//! it gets back (with release). A [`RawIndex`] can only become a usable [`Index`] through
//! [`Geometry::mask`], so a value user space wrote never addresses outside the ring, and a walk
//! from consumer to producer ([`Ends::indices`]) always ends, unlike the C `req_retry` loop over
//! unmasked user indices.
//!
//! The kernel keeps its own sizes ([`Geometry`]) and, for the index it owns, a private copy: the
//! `log2_elem_size`, `index_mask` and mirrored index in the shared header are for user space
//! only and are never read back.

use core::ops::Range;

use super::Errno;

/// `sizeof(struct rxe_queue_buf)`: the shared header ahead of the first slot.
pub const QUEUE_BUF_HDR_SIZE: usize = 384;
/// Offset of `u32 log2_elem_size` in the shared header (written once, for user space).
pub const LOG2_ELEM_SIZE_OFFSET: usize = 0;
/// Offset of `u32 index_mask` in the shared header (written once, for user space).
pub const INDEX_MASK_OFFSET: usize = 4;
/// Offset of `u32 producer_index` in the shared header.
pub const PRODUCER_INDEX_OFFSET: usize = 128;
/// Offset of `u32 consumer_index` in the shared header.
pub const CONSUMER_INDEX_OFFSET: usize = 256;

/// Largest queue buffer [`Geometry::new`] accepts, header included. The C driver has no explicit
/// bound (its callers' limits keep it at `2^31 + 384`); this one keeps the page-aligned size,
/// reported in the `u32` `mminfo.size`, representable for pages up to 64 KiB.
pub const MAX_BUF_SIZE: u32 = 0xffff_0000;

/// `cache_line_size()` on x86_64: the smallest slot.
pub const DEFAULT_CACHE_LINE_SIZE: u32 = 64;

/// `sizeof(struct rxe_cqe)`: a CQ element (union of `ib_wc` and `ib_uverbs_wc`).
pub const CQE_SIZE: u32 = 72;
/// `sizeof(struct rxe_send_wqe)` without its SGE / inline data.
pub const SEND_WQE_SIZE: u32 = 208;
/// `sizeof(struct rxe_recv_wqe)` without its SGEs.
pub const RECV_WQE_SIZE: u32 = 40;
/// `sizeof(struct rxe_sge)` (= `struct ib_sge`).
pub const SGE_SIZE: u32 = 16;

/// The SQ element size and the capacities reported back to the caller (`rxe_init_sq`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendWqeSize {
    /// Bytes of one element: [`SEND_WQE_SIZE`] plus the SGE / inline area.
    pub elem_size: u32,
    /// `sq.max_sge`, reported as `cap.max_send_sge` (may exceed the request).
    pub max_sge: u32,
    /// `sq.max_inline`, reported as `cap.max_inline_data` (may exceed the request).
    pub max_inline: u32,
}

/// SQ element size for `max_send_sge` SGEs and `max_inline_data` inline bytes (`rxe_init_sq`):
/// the data area is the larger of the two, shared by SGEs and inline data. Saturates instead of
/// overflowing; callers validate both values first (`rxe_qp_chk_cap`).
pub const fn send_wqe_size(max_send_sge: u32, max_inline_data: u32) -> SendWqeSize {
    let sges = max_send_sge.saturating_mul(SGE_SIZE);
    let data = if sges > max_inline_data {
        sges
    } else {
        max_inline_data
    };
    SendWqeSize {
        elem_size: SEND_WQE_SIZE.saturating_add(data),
        max_sge: data / SGE_SIZE,
        max_inline: data,
    }
}

/// RQ / SRQ element size for `max_sge` SGEs (`rxe_init_rq`, `rxe_srq_from_init`). Saturates
/// instead of overflowing.
pub const fn recv_wqe_size(max_sge: u32) -> u32 {
    RECV_WQE_SIZE.saturating_add(max_sge.saturating_mul(SGE_SIZE))
}

/// The caller's role on a queue (`enum queue_type`, same values).
///
/// In every role the caller owns one index, which it alone advances, and reads the other one,
/// the peer's, from the shared header with acquire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum QueueType {
    /// `QUEUE_TYPE_TO_CLIENT`: rxe producing CQEs. rxe owns the producer (private copy), the
    /// client, possibly user space, the consumer.
    ToClient = 0,
    /// `QUEUE_TYPE_FROM_CLIENT`: rxe consuming an SQ, RQ or SRQ. The client, possibly user space,
    /// owns the producer; rxe owns the consumer (private copy).
    FromClient = 1,
    /// `QUEUE_TYPE_FROM_ULP`: a kernel ULP posting to an SQ, RQ or SRQ. The ULP owns the producer
    /// (read from the shared header), rxe the consumer.
    FromUlp = 2,
    /// `QUEUE_TYPE_TO_ULP`: a kernel ULP polling a CQ. The ULP owns the consumer (read from the
    /// shared header), rxe the producer.
    ToUlp = 3,
}

impl QueueType {
    /// Whether the caller is the producer in this role, so owns and advances the producer index
    /// (`queue_advance_producer`); otherwise it owns and advances the consumer index.
    pub const fn caller_produces(self) -> bool {
        matches!(self, Self::ToClient | Self::FromUlp)
    }

    /// Whether the caller's own index is rxe's private copy (`q->index`), the shared one being
    /// only a mirror for the client, which may overwrite it. For the ULP roles it is the shared
    /// one (a kernel buffer).
    pub const fn own_index_is_private(self) -> bool {
        matches!(self, Self::ToClient | Self::FromClient)
    }

    /// Whether the peer's index may have been written by user space (a user client of rxe); such
    /// a value may be anything, including ahead of or behind the caller's own index.
    pub const fn peer_may_be_user(self) -> bool {
        self.own_index_is_private()
    }
}

/// An index as loaded from the shared header: any `u32`, possibly hostile. Usable only through
/// [`Geometry::mask`] or [`Geometry::ends`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawIndex(u32);

impl RawIndex {
    /// Wraps a value loaded from `producer_index` or `consumer_index` of the shared header.
    pub const fn new(loaded: u32) -> Self {
        Self(loaded)
    }
}

/// A slot index below the `num_slots` of the [`Geometry`] that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Index(u32);

impl Index {
    /// Slot 0, in range for every queue: a new queue's indices, and a new CQ's producer.
    pub const ZERO: Self = Self(0);

    /// The value, to keep as the private copy or to store into the shared header.
    pub const fn get(self) -> u32 {
        self.0
    }
}

/// The sizes of one queue, the kernel's own copy (`struct rxe_queue`'s `elem_size`,
/// `log2_elem_size`, `index_mask`, `buf_size`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    elem_size: u32,
    log2_elem_size: u32,
    index_mask: u32,
    buf_size: u32,
}

impl Geometry {
    /// The sizing of `rxe_queue_init(rxe, &num_elem, elem_size, type)`: the slot is `elem_size`
    /// padded to at least `cache_line` bytes and rounded up to a power of two; there are
    /// `roundup_pow_of_two(num_elem + 1)` slots ([`capacity`](Self::capacity) is what the C
    /// function writes back to `*num_elem`); the buffer is the header plus the slots.
    ///
    /// [`Errno::NoMem`], as the C caller returns for NULL, when `num_elem` is negative as the C
    /// `int` (above `i32::MAX`) or the buffer would exceed [`MAX_BUF_SIZE`].
    pub const fn new(num_elem: u32, elem_size: u32, cache_line: u32) -> Result<Self, Errno> {
        if num_elem > i32::MAX as u32 {
            return Err(Errno::NoMem);
        }
        let padded = if elem_size < cache_line {
            cache_line
        } else {
            elem_size
        };
        let Some(slot_size) = padded.checked_next_power_of_two() else {
            return Err(Errno::NoMem);
        };
        // `num_elem + 1 <= 2^31`, whose next power of two still fits.
        let Some(num_slots) = (num_elem + 1).checked_next_power_of_two() else {
            return Err(Errno::NoMem);
        };
        let Some(data) = num_slots.checked_mul(slot_size) else {
            return Err(Errno::NoMem);
        };
        let Some(buf_size) = data.checked_add(QUEUE_BUF_HDR_SIZE as u32) else {
            return Err(Errno::NoMem);
        };
        if buf_size > MAX_BUF_SIZE {
            return Err(Errno::NoMem);
        }
        Ok(Self {
            elem_size,
            log2_elem_size: slot_size.trailing_zeros(),
            index_mask: num_slots - 1,
            buf_size,
        })
    }

    /// The element size asked for, unpadded (`q->elem_size`, the bytes a resize copies).
    pub const fn elem_size(&self) -> u32 {
        self.elem_size
    }

    /// `log2` of the slot size (`q->log2_elem_size`, also written to the shared header).
    pub const fn log2_elem_size(&self) -> u32 {
        self.log2_elem_size
    }

    /// Bytes per slot.
    pub const fn slot_size(&self) -> u32 {
        1 << self.log2_elem_size
    }

    /// `num_slots - 1` (`q->index_mask`, also written to the shared header).
    pub const fn index_mask(&self) -> u32 {
        self.index_mask
    }

    /// Slots in the ring, a power of two.
    pub const fn num_slots(&self) -> u32 {
        self.index_mask + 1
    }

    /// Elements the queue holds at most, one less than the slots: the rounded `num_elem` the C
    /// driver reports back (`cqe`, `max_wr`).
    pub const fn capacity(&self) -> u32 {
        self.index_mask
    }

    /// Bytes of the buffer, header included (`q->buf_size`).
    pub const fn buf_size(&self) -> usize {
        self.buf_size as usize
    }

    /// The slot area of the buffer, which `rxe_queue_reset` zeroes (the indices are left as
    /// they are).
    pub const fn data_range(&self) -> Range<usize> {
        QUEUE_BUF_HDR_SIZE..self.buf_size()
    }

    /// The size to map, `PAGE_ALIGN(buf_size)` for `mminfo.size`; `None` when `page_size` is not
    /// a power of two or the result does not fit in `u32`.
    pub const fn mmap_size(&self, page_size: u32) -> Option<u32> {
        if !page_size.is_power_of_two() {
            return None;
        }
        match self.buf_size.checked_add(page_size - 1) {
            Some(end) => Some(end & !(page_size - 1)),
            None => None,
        }
    }

    /// The only way to use an index read from the shared header: masked to the ring, as the C
    /// `queue_addr_from_index` does.
    pub const fn mask(&self, raw: RawIndex) -> Index {
        Index(raw.0 & self.index_mask)
    }

    /// The index after `index` (`queue_next_index`): how the owner of an index advances it
    /// (`queue_advance_producer`, `queue_advance_consumer`).
    pub const fn next_index(&self, index: Index) -> Index {
        Index(index.0.wrapping_add(1) & self.index_mask)
    }

    /// Both indices as a caller in role `ty` sees them (`queue_get_producer`,
    /// `queue_get_consumer`): `own` is the index the caller owns (its private copy for
    /// [`QueueType::ToClient`] and [`QueueType::FromClient`]), `peer` the other index as loaded
    /// from the shared header. Both are masked to this ring.
    pub const fn ends(&self, ty: QueueType, own: Index, peer: RawIndex) -> Ends {
        let own = Index(own.0 & self.index_mask);
        let peer = self.mask(peer);
        let (producer, consumer) = if ty.caller_produces() {
            (own, peer)
        } else {
            (peer, own)
        };
        Ends {
            producer,
            consumer,
            index_mask: self.index_mask,
        }
    }

    /// Offset in the buffer of slot `index` (`queue_addr_from_index`, masked again so an index
    /// of another queue stays in range).
    pub const fn offset(&self, index: Index) -> usize {
        QUEUE_BUF_HDR_SIZE + ((index.0 & self.index_mask) << self.log2_elem_size) as usize
    }

    /// Bytes of slot `index` in the buffer, always within [`data_range`](Self::data_range).
    pub const fn slot(&self, index: Index) -> Range<usize> {
        let start = self.offset(index);
        start..start + self.slot_size() as usize
    }

    /// The slot the producer fills next (`queue_producer_addr`); check [`Ends::is_full`] first.
    pub const fn producer_offset(&self, ends: &Ends) -> usize {
        self.offset(ends.producer)
    }

    /// The slot the consumer reads next (`queue_consumer_addr`); check [`Ends::is_empty`] first.
    pub const fn consumer_offset(&self, ends: &Ends) -> usize {
        self.offset(ends.consumer)
    }

    /// The oldest element's slot, `None` when empty (`queue_head`).
    pub const fn head(&self, ends: &Ends) -> Option<usize> {
        if ends.is_empty() {
            None
        } else {
            Some(self.consumer_offset(ends))
        }
    }

    /// The slot holding buffer offset `offset` (`queue_index_from_addr`); `None` for an offset in
    /// the header or past the buffer.
    pub const fn index_from_offset(&self, offset: usize) -> Option<Index> {
        if offset < QUEUE_BUF_HDR_SIZE || offset >= self.buf_size() {
            return None;
        }
        // Below `buf_size`, so the slot number fits in `u32`.
        let slot = ((offset - QUEUE_BUF_HDR_SIZE) >> self.log2_elem_size) as u32;
        Some(Index(slot & self.index_mask))
    }

    /// Plans moving the elements of this queue, of type `ty` ([`QueueType::ToClient`] for a CQ,
    /// [`QueueType::FromClient`] for an SRQ), into a new buffer of geometry `new`
    /// (`resize_finish`, called under the queue's locks). `ends` are this queue's current ends;
    /// `new_start` is the new queue's producer before the copy: [`Index::ZERO`] for a CQ (the new
    /// private index), the masked shared `producer_index` of the new buffer for an SRQ (0 unless
    /// user space wrote it early).
    ///
    /// [`Errno::Inval`] when the elements do not fit the new capacity.
    pub const fn resize(
        &self,
        ty: QueueType,
        ends: &Ends,
        new: &Geometry,
        new_start: Index,
    ) -> Result<ResizePlan, Errno> {
        let producer = ends.producer.0 & self.index_mask;
        let consumer = ends.consumer.0 & self.index_mask;
        let count = producer.wrapping_sub(consumer) & self.index_mask;
        if count > new.capacity() {
            return Err(Errno::Inval);
        }
        // C copies `new_q->elem_size` bytes; never more than either slot holds.
        let mut len = new.elem_size;
        if len > self.slot_size() {
            len = self.slot_size();
        }
        if len > new.slot_size() {
            len = new.slot_size();
        }
        Ok(ResizePlan {
            old: *self,
            new: *new,
            src: Index(consumer),
            dst: Index(new_start.0 & new.index_mask),
            count,
            len: len as usize,
            caller_produces: ty.caller_produces(),
        })
    }
}

/// The producer and consumer index of a queue, both in range, as one caller sees them at one
/// moment. Made by [`Geometry::ends`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ends {
    producer: Index,
    consumer: Index,
    index_mask: u32,
}

impl Ends {
    /// The producer index (`queue_get_producer`).
    pub const fn producer(&self) -> Index {
        self.producer
    }

    /// The consumer index (`queue_get_consumer`).
    pub const fn consumer(&self) -> Index {
        self.consumer
    }

    /// Elements between consumer and producer (`queue_count`), at most the capacity.
    pub const fn count(&self) -> u32 {
        self.producer.0.wrapping_sub(self.consumer.0) & self.index_mask
    }

    /// No element to consume (`queue_empty`).
    pub const fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// No slot to produce into (`queue_full`).
    pub const fn is_full(&self) -> bool {
        (self
            .producer
            .0
            .wrapping_add(1)
            .wrapping_sub(self.consumer.0)
            & self.index_mask)
            == 0
    }

    /// The indices of the elements from consumer up to, not including, producer: the bounded
    /// form of the C loops `for (i = cons; i != prod; i = queue_next_index(q, i))`.
    pub const fn indices(&self) -> Indices {
        Indices {
            next: self.consumer,
            left: self.count(),
            index_mask: self.index_mask,
        }
    }
}

/// Iterator over the occupied slots of a queue, oldest first; see [`Ends::indices`].
#[derive(Clone, Debug)]
pub struct Indices {
    next: Index,
    left: u32,
    index_mask: u32,
}

impl Iterator for Indices {
    type Item = Index;

    fn next(&mut self) -> Option<Index> {
        if self.left == 0 {
            return None;
        }
        let index = self.next;
        self.left -= 1;
        self.next = Index(index.0.wrapping_add(1) & self.index_mask);
        Some(index)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for Indices {}

/// What `resize_finish` does once the new buffer exists: the slot copies and the indices to
/// store afterwards. Made by [`Geometry::resize`].
#[derive(Clone, Debug)]
pub struct ResizePlan {
    old: Geometry,
    new: Geometry,
    src: Index,
    dst: Index,
    count: u32,
    len: usize,
    caller_produces: bool,
}

impl ResizePlan {
    /// Elements carried over.
    pub const fn count(&self) -> u32 {
        self.count
    }

    /// The copies to make, oldest element first, from the old buffer into the new one.
    pub const fn copies(&self) -> SlotCopies {
        SlotCopies {
            old: self.old,
            new: self.new,
            src: self.src,
            dst: self.dst,
            left: self.count,
            len: self.len,
        }
    }

    /// The new buffer's `producer_index` after the copies (`new_q->buf->producer_index`).
    pub const fn new_producer(&self) -> Index {
        Index(self.dst.0.wrapping_add(self.count) & self.new.index_mask)
    }

    /// The new buffer's `consumer_index`: the fresh buffer's 0.
    pub const fn new_consumer(&self) -> Index {
        Index::ZERO
    }

    /// The new private copy of the index rxe owns: the new producer for a CQ
    /// ([`QueueType::ToClient`]), the new consumer (0) for an SRQ.
    pub const fn new_private_index(&self) -> Index {
        if self.caller_produces {
            self.new_producer()
        } else {
            self.new_consumer()
        }
    }
}

/// One element copy of a resize: `len` bytes from `from` in the old buffer to `to` in the new.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotCopy {
    /// Bytes to read in the old buffer, within one of its slots.
    pub from: Range<usize>,
    /// Bytes to write in the new buffer, within one of its slots.
    pub to: Range<usize>,
}

/// Iterator over the copies of a resize; see [`ResizePlan::copies`].
#[derive(Clone, Debug)]
pub struct SlotCopies {
    old: Geometry,
    new: Geometry,
    src: Index,
    dst: Index,
    left: u32,
    len: usize,
}

impl Iterator for SlotCopies {
    type Item = SlotCopy;

    fn next(&mut self) -> Option<SlotCopy> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let from = self.old.offset(self.src);
        let to = self.new.offset(self.dst);
        self.src = self.old.next_index(self.src);
        self.dst = self.new.next_index(self.dst);
        Some(SlotCopy {
            from: from..from + self.len,
            to: to..to + self.len,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for SlotCopies {}
