#!/bin/bash
cp -a /opt/kselftest /tmp/ks
sed -i 's/^exec > \/dev\/null//' /tmp/ks/rdma/rxe_sent_rcvd_bytes.sh
[ "$DRIVER" = rs ] && sed -i 's/\brdma_rxe\b/rdma_rxe_rs/g' /tmp/ks/rdma/rxe_sent_rcvd_bytes.sh
sed -i 's/^rping -c \(.*\)$/rping -c \1; echo rping-client-exit $?; rdma statistic show link rxe0\/1/' /tmp/ks/rdma/rxe_sent_rcvd_bytes.sh
bash /tmp/ks/rdma/rxe_sent_rcvd_bytes.sh 2>&1 | grep -aE "sent|rcvd|Error|passed|exit|pkts|bytes"
