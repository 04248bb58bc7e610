use crate::proto::index::IndexAllocator;
use std::vec;

#[test]
fn allocates_cyclically_and_not_reusing_at_once() {
    let mut a = IndexAllocator::new(16, 20).unwrap();
    let mut bits = vec![0u64; a.words()];
    assert_eq!(a.alloc(&mut bits), Some(16));
    assert_eq!(a.alloc(&mut bits), Some(17));
    a.free(&mut bits, 16);
    // The freed index comes back only after the cursor wraps.
    assert_eq!(a.alloc(&mut bits), Some(18));
    assert_eq!(a.alloc(&mut bits), Some(19));
    assert_eq!(a.alloc(&mut bits), Some(20));
    assert_eq!(a.alloc(&mut bits), Some(16));
    assert_eq!(a.alloc(&mut bits), None, "range full");
    a.free(&mut bits, 18);
    assert_eq!(a.alloc(&mut bits), Some(18));
}

#[test]
fn large_ranges_and_bad_input() {
    // The MR range of the C driver: 1..=0x80000.
    let mut a = IndexAllocator::new(1, 0x80000).unwrap();
    let mut bits = vec![0u64; a.words()];
    assert_eq!(a.words(), 8192);
    for expected in 1..=1000 {
        assert_eq!(a.alloc(&mut bits), Some(expected));
    }
    a.free(&mut bits, 0); // outside: ignored
    a.free(&mut bits, u32::MAX); // outside: ignored
    assert_eq!(a.alloc(&mut [0u64; 2]), None, "bitmap too short");
    assert!(IndexAllocator::new(5, 4).is_none());
    assert!(IndexAllocator::new(0, u32::MAX).is_none());
    let mut one = IndexAllocator::new(u32::MAX, u32::MAX).unwrap();
    let mut b = vec![0u64; one.words()];
    assert_eq!(one.alloc(&mut b), Some(u32::MAX));
    assert_eq!(one.alloc(&mut b), None);
}
