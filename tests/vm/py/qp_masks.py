"""The attribute masks of modify_qp: what each move of a QP type requires (IB spec 11.2.4.2,
the table of required and optional attributes by transition)."""

import pyverbs.enums as e

# Every attribute mask bit the driver takes (the fuzzer draws random sets of them).
ALL = [e.IBV_QP_STATE, e.IBV_QP_PKEY_INDEX, e.IBV_QP_PORT, e.IBV_QP_ACCESS_FLAGS,
       e.IBV_QP_AV, e.IBV_QP_PATH_MTU, e.IBV_QP_DEST_QPN, e.IBV_QP_RQ_PSN,
       e.IBV_QP_MAX_DEST_RD_ATOMIC, e.IBV_QP_MIN_RNR_TIMER, e.IBV_QP_SQ_PSN,
       e.IBV_QP_TIMEOUT, e.IBV_QP_RETRY_CNT, e.IBV_QP_RNR_RETRY, e.IBV_QP_MAX_QP_RD_ATOMIC,
       e.IBV_QP_QKEY]


def required(qp_type, state, prev=None):
    """The mask of a move to state (an IBV_QPS_*) from prev: RESET->INIT, INIT->RTR and RTR->RTS
    take their required attributes; SQD->RTS and the moves to SQD, ERR and RESET the state alone."""
    ud, rc = qp_type == e.IBV_QPT_UD, qp_type == e.IBV_QPT_RC
    m = e.IBV_QP_STATE
    if prev == e.IBV_QPS_SQD:
        return m
    if state == e.IBV_QPS_INIT:
        m |= e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | (e.IBV_QP_QKEY if ud else e.IBV_QP_ACCESS_FLAGS)
    elif state == e.IBV_QPS_RTR and not ud:
        m |= e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN
        if rc:
            m |= e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER
    elif state == e.IBV_QPS_RTS:
        m |= e.IBV_QP_SQ_PSN
        if rc:
            m |= e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC
    return m
