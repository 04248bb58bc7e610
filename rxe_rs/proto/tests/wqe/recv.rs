// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Receive WQEs (`proto/wqe/recv.rs`): the writer against the C layout, the checks of the
//! parser, and round trips.

use std::vec;

use proptest::prelude::*;

use super::{set32, sge_strategy};
use crate::proto::params::PORT_MAX_MSG_SZ;
use crate::proto::queue::recv_wqe_size;
use crate::proto::wqe::*;

#[test]
fn recv_wqes() {
    let sges = [
        Sge {
            addr: 0x100,
            length: 10,
            lkey: 1,
        },
        Sge {
            addr: 0x200,
            length: 0,
            lkey: 2,
        },
        Sge {
            addr: 0x300,
            length: 5,
            lkey: 3,
        },
    ];
    let mut slot = vec![0xeeu8; 128];
    let w = write_recv_wqe(&mut slot, 99, &sges, 3).unwrap();
    assert_eq!(
        w,
        RecvWqe {
            wr_id: 99,
            num_sge: 3,
            length: 15
        }
    );
    assert_eq!(&slot[0..8], &99u64.to_le_bytes());
    assert_eq!(&slot[8..16], &[0; 8]);
    assert_eq!(&slot[16..20], &15u32.to_le_bytes());
    assert_eq!(&slot[20..24], &15u32.to_le_bytes());
    assert_eq!(&slot[28..32], &3u32.to_le_bytes());
    assert_eq!(&slot[40..48], &0x100u64.to_le_bytes());
    assert_eq!(recv_sge(&slot, 2), Some(sges[2]));
    assert!(slot[88..].iter().all(|&b| b == 0xee));
    assert_eq!(RecvWqe::parse(&slot, 3), Ok(w));
    assert_eq!(
        RecvWqe::parse(&slot, 2),
        Err(WqeError::TooManySge {
            num_sge: 3,
            max_sge: 2
        })
    );
    assert_eq!(RecvWqe::parse(&slot[..87], 3), Err(WqeError::DataOutOfSlot));
    assert_eq!(RecvWqe::parse(&slot[..39], 3), Err(WqeError::Truncated));
    set32(&mut slot, 16, 16);
    assert_eq!(
        RecvWqe::parse(&slot, 3),
        Err(WqeError::LengthMismatch {
            length: 16,
            sum: 15
        })
    );
    assert_eq!(
        write_recv_wqe(&mut slot, 1, &sges, 2),
        Err(WqeError::TooManySge {
            num_sge: 3,
            max_sge: 2
        })
    );
    assert_eq!(
        write_recv_wqe(&mut slot[..87], 1, &sges, 3),
        Err(WqeError::DataOutOfSlot)
    );
    let big = [Sge {
        length: PORT_MAX_MSG_SZ + 1,
        ..Sge::default()
    }];
    assert_eq!(
        write_recv_wqe(&mut slot, 1, &big, 3),
        Err(WqeError::MessageTooLong(PORT_MAX_MSG_SZ + 1))
    );
    let w = write_recv_wqe(&mut slot, 5, &[], 0).unwrap();
    assert_eq!((w.num_sge, w.length), (0, 0));
}

proptest! {
    #[test]
    fn recv_wqes_round_trip(
        wr_id in any::<u64>(),
        max_sge in 0..8u32,
        sges in prop::collection::vec(sge_strategy(), 0..8),
        fill in any::<u8>(),
    ) {
        let sges = &sges[..sges.len().min(max_sge as usize)];
        let mut slot = vec![fill; recv_wqe_size(max_sge) as usize];
        let w = write_recv_wqe(&mut slot, wr_id, sges, max_sge).unwrap();
        prop_assert_eq!(RecvWqe::parse(&slot, max_sge), Ok(w));
        prop_assert_eq!(w.wr_id, wr_id);
        prop_assert_eq!(w.num_sge as usize, sges.len());
        prop_assert_eq!(u64::from(w.length), sges.iter().map(|s| u64::from(s.length)).sum::<u64>());
        for (i, s) in sges.iter().enumerate() {
            prop_assert_eq!(recv_sge(&slot, i as u32), Some(*s));
        }
    }
}
