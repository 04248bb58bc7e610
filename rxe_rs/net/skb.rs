// SPDX-License-Identifier: GPL-2.0

//! An owned `struct sk_buff`.

use crate::ffi;
use core::ptr::NonNull;

/// A socket buffer we own; freed (as dropped, not consumed) unless handed on.
pub(crate) struct SkBuff(NonNull<ffi::sk_buff>);

// SAFETY: an owned skb may move between contexts; nothing else references it.
unsafe impl Send for SkBuff {}

impl SkBuff {
    /// Takes ownership of `skb`.
    ///
    /// # Safety
    ///
    /// `skb` is a valid socket buffer whose ownership passes to the returned value.
    pub(crate) unsafe fn from_raw(skb: *mut ffi::sk_buff) -> Option<Self> {
        NonNull::new(skb).map(Self)
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: we own the skb; the caller of `drop` gives it up.
        unsafe { ffi::rxe_rs_kfree_skb(self.0.as_ptr()) };
    }
}
