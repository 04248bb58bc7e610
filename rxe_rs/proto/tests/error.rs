// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The engines' error (`proto::error`): the statuses, NAKs and events the layer errors convert
//! to, which the engines rely on to answer as the C driver does.

use crate::proto::error::{Absent, Cause, MemFault, QpEvent, RxeError};
use crate::proto::hdr::NakCode;
use crate::proto::wqe::{
    DmaError, WcStatus, WqeError, IB_WC_LOC_LEN_ERR, IB_WC_LOC_PROT_ERR, IB_WC_LOC_QP_OP_ERR,
    IB_WC_MW_BIND_ERR, IB_WC_REM_ACCESS_ERR, IB_WC_REM_INV_REQ_ERR,
};
use crate::proto::Errno;

#[test]
fn responder_classes() {
    let e = RxeError::INVALID_REQUEST;
    assert_eq!(
        (e.status, e.nak, e.event),
        (
            IB_WC_REM_INV_REQ_ERR,
            Some(NakCode::InvalidRequest),
            Some(QpEvent::ReqErr)
        )
    );
    let e = RxeError::REMOTE_ACCESS;
    assert_eq!(
        (e.status, e.nak, e.event),
        (
            IB_WC_REM_ACCESS_ERR,
            Some(NakCode::RemoteAccessError),
            Some(QpEvent::AccessErr)
        )
    );
}

#[test]
fn layer_errors_keep_their_cause() {
    let e = RxeError::from(WqeError::Truncated);
    assert_eq!(e.status, IB_WC_LOC_QP_OP_ERR);
    assert_eq!(e.cause, Cause::Wqe(WqeError::Truncated));
    assert_eq!((e.nak, e.event), (None, None));

    for (d, status) in [
        (DmaError::TooLong, IB_WC_LOC_LEN_ERR),
        (DmaError::NoSpace, IB_WC_LOC_LEN_ERR),
        (DmaError::BadSge(3), IB_WC_LOC_QP_OP_ERR),
        (DmaError::AddrOverflow, IB_WC_LOC_PROT_ERR),
    ] {
        let e = RxeError::from(d);
        assert_eq!((e.status, e.cause), (status, Cause::Dma(d)));
    }

    let e = RxeError::from(Errno::Inval);
    assert_eq!(
        (e.status, e.cause),
        (IB_WC_LOC_QP_OP_ERR, Cause::Errno(Errno::Inval))
    );
    assert_eq!(e.to_errno(), -22);
    assert_eq!(RxeError::from(Errno::NoMem).to_errno(), -12);
    assert_eq!(
        RxeError::local_protection(Cause::Memory(MemFault::Key)).to_errno(),
        -22
    );
    assert_eq!(
        RxeError::bind(Cause::Errno(Errno::Inval)).status,
        IB_WC_MW_BIND_ERR
    );
}

#[test]
fn receive_failures_nak_as_class_a_or_c() {
    // A buffer the responder cannot use is its own fault (remote operational error), a
    // message too long for it the requester's (invalid request); the QP is fatal either way.
    let cases: [(WcStatus, NakCode); 3] = [
        (IB_WC_LOC_PROT_ERR, NakCode::RemoteOperationalError),
        (IB_WC_LOC_QP_OP_ERR, NakCode::RemoteOperationalError),
        (IB_WC_LOC_LEN_ERR, NakCode::InvalidRequest),
    ];
    for (status, nak) in cases {
        let e = RxeError::wqe(status, Cause::Check).on_receive();
        assert_eq!(
            (e.status, e.nak, e.event),
            (status, Some(nak), Some(QpEvent::Fatal))
        );
    }
    let e = RxeError::from(DmaError::NoSpace).on_receive();
    assert_eq!(e.cause, Cause::Dma(DmaError::NoSpace));
}

#[test]
fn absent_pages_survive_every_rewrite_of_the_error() {
    // The engines rewrite an error's status and NAK on its way up (a receive's, a remote
    // access's); the pages an ODP access waits for must still be found in it.
    let a = Absent {
        key: 0x1234,
        iova: 0x7fff_0000_1000,
        len: 4096,
        write: true,
    };
    let e = RxeError::local_protection(Cause::Memory(MemFault::Absent(a)));
    assert_eq!(e.absent(), Some(a));
    assert_eq!(e.on_receive().absent(), Some(a));
    assert_eq!(RxeError::REMOTE_ACCESS.because(e.cause).absent(), Some(a));
    let len_err = RxeError {
        status: IB_WC_LOC_LEN_ERR,
        ..e
    };
    assert_eq!(len_err.absent(), Some(a));
    assert_eq!(
        RxeError::local_protection(Cause::Memory(MemFault::Key)).absent(),
        None
    );
    assert_eq!(RxeError::INVALID_REQUEST.absent(), None);
}
