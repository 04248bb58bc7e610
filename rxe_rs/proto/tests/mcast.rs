use crate::proto::{mcast::*, Errno};

#[test]
fn members_keep_attach_order_and_the_c_limit() {
    let mut m = Members::new();
    assert!(m.is_empty());
    for qpn in 0..MAX_QPS as u32 {
        m.push(100 + qpn).unwrap();
    }
    assert_eq!(m.qpns().len(), 56);
    // The 57th QP: ENOMEM, as __rxe_init_mca.
    assert_eq!(m.push(7), Err(Errno::NoMem));
    assert!(m.contains(100) && m.contains(155) && !m.contains(7));
    assert!(m.remove(110));
    assert!(!m.remove(110));
    assert_eq!(m.qpns().len(), 55);
    assert_eq!(&m.qpns()[9..11], &[109, 111]);
    m.push(7).unwrap();
    assert_eq!(m.qpns().last(), Some(&7));
    let all = m;
    for &qpn in all.qpns() {
        assert!(m.remove(qpn));
    }
    assert!(m.is_empty());
    assert!(!m.remove(7));
}
