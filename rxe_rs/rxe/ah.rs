// SPDX-License-Identifier: GPL-2.0

//! Address handles (`rxe_av.c`, the AH verbs of `rxe_verbs.c`): an address vector and the
//! `ah_num` user space names it by in UD work requests.

use super::pool::{IndexPool, PoolIndex};
use crate::ib::{
    ah::{AhInit, GlobalRoute},
    uqueue::UserReq,
};
use crate::proto::{
    av::{AddressVector, NetworkType},
    params,
};
use kernel::prelude::*;

/// `struct rxe_create_ah_resp { u32 ah_num; u32 reserved; }`.
const CREATE_AH_RESP_LEN: usize = 8;
/// `enum rdma_network_type`: `RDMA_NETWORK_IPV4`, `RDMA_NETWORK_IPV6`.
const RDMA_NETWORK_IPV4: u32 = 2;
const RDMA_NETWORK_IPV6: u32 = 3;

/// An rxe AH.
pub(crate) struct RxeAh {
    /// The number user space names it by in UD work requests, held until destroyed.
    ah_num: PoolIndex,
    av: AddressVector,
}

impl RxeAh {
    /// `rxe_create_ah`: checks the attributes (`rxe_ah_chk_attr`), numbers the AH, tells a user
    /// caller its number, and builds the address vector (`rxe_init_av`).
    pub(crate) fn create(pool: &IndexPool, attr: &AhInit, user: Option<UserReq>) -> Result<Self> {
        let (route, sgid, network) = attr.grh.ok_or(EINVAL)?;
        if i32::from(route.sgid_index) > params::PORT_GID_TBL_LEN {
            return Err(EINVAL);
        }
        let network_type = match network {
            RDMA_NETWORK_IPV4 => NetworkType::Ipv4,
            RDMA_NETWORK_IPV6 => NetworkType::Ipv6,
            _ => return Err(EINVAL),
        };
        let ah_num = pool.take()?;
        // An old provider with no room for the response gets no number (ah_num 0 in C).
        if let Some(u) = user.filter(|u| u.outlen() >= CREATE_AH_RESP_LEN) {
            let mut resp = [0u8; CREATE_AH_RESP_LEN];
            resp[..4].copy_from_slice(&ah_num.get().to_ne_bytes());
            u.respond(&resp)?;
        }
        let av = AddressVector::new(attr.port_num, route.into(), sgid, network_type, attr.dmac);
        Ok(Self { ah_num, av })
    }

    /// `rxe_query_ah`: port and global route.
    pub(crate) fn query(&self) -> (u32, GlobalRoute) {
        (self.av.port_num, self.av.grh.into())
    }
}

impl RxeAh {
    /// The AH number user space names it by.
    pub(crate) fn num(&self) -> u32 {
        self.ah_num.get()
    }

    /// Its address vector.
    pub(crate) fn av(&self) -> &AddressVector {
        &self.av
    }
}
