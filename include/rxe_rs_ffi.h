/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C side of rxe-rs's FFI layer: the headers bindgen turns into rxe_rs/ffi's raw
 * bindings, and the prototypes of the C shims (rxe_rs/ffi/shim.c) that wrap static inline
 * functions and macros Rust cannot call directly.
 */
#ifndef RXE_RS_FFI_H
#define RXE_RS_FFI_H

#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_addr.h>
#include <rdma/rdma_netlink.h>
#include <rdma/uverbs_ioctl.h>
#include <uapi/rdma/rdma_user_rxe.h>
#include <net/udp_tunnel.h>
#include <net/ip6_route.h>

/* net_device: static inlines. */
const char *rxe_rs_netdev_name(const struct net_device *ndev);
void rxe_rs_dev_hold(struct net_device *ndev);
void rxe_rs_dev_put(struct net_device *ndev);
struct net *rxe_rs_dev_net(const struct net_device *ndev);
bool rxe_rs_netif_is_up(const struct net_device *ndev);
bool rxe_rs_netdev_is_vlan(const struct net_device *ndev);
struct net_device *rxe_rs_netdev_notifier_info_to_dev(void *info);
int rxe_rs_dev_mc_add(struct net_device *ndev, const u8 *mac);
int rxe_rs_dev_mc_del(struct net_device *ndev, const u8 *mac);

/* ib_core: static inlines. */
void rxe_rs_ib_mark_name_assigned_by_user(struct ib_device *ibdev);
enum ib_port_state rxe_rs_ib_get_curr_port_state(struct net_device *ndev);
int rxe_rs_ib_no_udata_io(struct ib_udata *udata);
unsigned int rxe_rs_num_possible_cpus(void);
void rxe_rs_eth_random_addr(u8 *addr);

/* UDP tunnel socket on the RoCEv2 port (rxe_setup_udp_tunnel), and its release. encap_rcv
 * gets a list of packets of one flow from one device, linked by skb->next. */
struct socket *rxe_rs_udp_tunnel_open(struct net *net, bool ipv6,
				      int (*encap_rcv)(struct sock *sk, struct sk_buff *skb));
void rxe_rs_udp_tunnel_close(struct socket *sock);

/* Queue buffers shared with user space (rxe_queue.c, rxe_mmap.c). */
void *rxe_rs_vmalloc_user(unsigned long size);
void rxe_rs_vfree(void *addr);
int rxe_rs_remap_vmalloc_range(struct vm_area_struct *vma, void *addr);
unsigned long rxe_rs_vma_offset(const struct vm_area_struct *vma);
unsigned long rxe_rs_vma_size(const struct vm_area_struct *vma);
int rxe_rs_ib_copy_to_udata(struct ib_udata *udata, const void *src, size_t len);
int rxe_rs_ib_copy_from_udata(void *dst, struct ib_udata *udata, size_t len);
int rxe_rs_copy_to_user_addr(u64 addr, const void *src, size_t len);
struct ib_ucontext *rxe_rs_udata_context(struct uverbs_attr_bundle *attrs);
unsigned int rxe_rs_cache_line_size(void);

/* Address handles. */
int rxe_rs_gid_attr_network_type(const struct ib_gid_attr *attr);

/* Memory regions. */
struct ib_umem *rxe_rs_ib_umem_get(struct ib_device *ibdev, u64 start, u64 length, int access);
u8 rxe_rs_get_random_u8(void);

/* sk_buff: static inlines. */
void rxe_rs_kfree_skb(struct sk_buff *skb);

/* Data path: socket buffers. */
struct sk_buff *rxe_rs_skb_alloc_tx(struct net_device *ndev, bool ipv6, unsigned int len,
				    unsigned int unzeroed);
struct dst_entry *rxe_rs_route_lookup(struct net_device *ndev, bool ipv6, const u8 *saddr,
				      const u8 *daddr, u32 *cookie);
bool rxe_rs_dst_valid(struct dst_entry *dst, u32 cookie);
void rxe_rs_dst_hold(struct dst_entry *dst);
void rxe_rs_dst_release(struct dst_entry *dst);
void rxe_rs_skb_prepare(struct sk_buff *skb, struct dst_entry *dst, bool ipv6, const u8 *saddr,
			const u8 *daddr, u16 sport, u8 tclass, u8 ttl, u16 ip_id);
int rxe_rs_skb_xmit(struct sk_buff *skb);
bool rxe_rs_skb_burst_append(struct sk_buff *head, struct sk_buff *skb);
void rxe_rs_skb_loopback(struct sk_buff *skb);
int rxe_rs_skb_linearize(struct sk_buff *skb);
struct sk_buff *rxe_rs_skb_copy(const struct sk_buff *skb);
int rxe_rs_skb_frags_readable(const struct sk_buff *skb);
int rxe_rs_skb_pieces(struct sk_buff *skb, const unsigned char **ptrs, unsigned int *lens,
		      unsigned int max);
int rxe_rs_skb_pull_headers(struct sk_buff *skb, unsigned int len);
struct page *rxe_rs_kva_sendable_page(u64 addr);
int rxe_rs_skb_attach_page(struct sk_buff *skb, struct page *page, unsigned int off,
			   unsigned int len);
u8 *rxe_rs_skb_attach_trailer(struct sk_buff *skb, unsigned int len);
unsigned char *rxe_rs_skb_network_header(struct sk_buff *skb, unsigned int *len);
struct net_device *rxe_rs_skb_dev(struct sk_buff *skb);
struct sk_buff *rxe_rs_skb_take_next(struct sk_buff *skb);
void rxe_rs_consume_skb(struct sk_buff *skb);
void rxe_rs_skb_set_tx_destructor(struct sk_buff *skb, void (*dtor)(struct sk_buff *), void *arg);
void *rxe_rs_skb_tx_destructor_arg(struct sk_buff *skb);
void rxe_rs_skb_queue_init(struct sk_buff_head *q);
struct sk_buff *rxe_rs_skb_dequeue(struct sk_buff_head *q);
void rxe_rs_skb_queue_purge(struct sk_buff_head *q);
bool rxe_rs_skb_queue_tail_open(struct sk_buff_head *q, bool *closed, struct sk_buff *skb);
void rxe_rs_skb_queue_close(struct sk_buff_head *q, bool *closed);
u32 rxe_rs_crc32_le(u32 crc, const u8 *p, size_t len);

/* Data path: memory. */
long rxe_rs_umem_pages(struct ib_umem *umem, struct page **pages, unsigned long n);
bool rxe_rs_umem_in_direct_map(struct ib_umem *umem);
const void *rxe_rs_page_address(struct page *page);
bool rxe_rs_umem_is_pmem(struct ib_umem *umem);
unsigned long rxe_rs_umem_num_pages(struct ib_umem *umem);
unsigned long rxe_rs_umem_offset(struct ib_umem *umem);
void rxe_rs_page_copy(struct page *page, unsigned int offset, void *buf, unsigned int len,
		      bool to_page);
u64 rxe_rs_page_atomic_cmpxchg(struct page *page, unsigned int offset, u64 cmp, u64 swap);
u64 rxe_rs_page_atomic_add(struct page *page, unsigned int offset, u64 add);
void rxe_rs_kva_copy(u64 addr, void *buf, unsigned int len, bool to_mem);
u64 rxe_rs_kva_atomic(u64 addr, bool cas, u64 cmp, u64 val);

/* On-demand paging (rxe_rs/ffi/odp.c). */
struct rxe_rs_odp;
struct rxe_rs_odp *rxe_rs_odp_get(struct ib_device *ibdev, u64 start, u64 length, int access);
void rxe_rs_odp_release(struct rxe_rs_odp *odp);
void rxe_rs_odp_get_ref(struct rxe_rs_odp *odp);
void rxe_rs_odp_put(struct rxe_rs_odp *odp);
bool rxe_rs_odp_writable(struct rxe_rs_odp *odp);
int rxe_rs_odp_fault(struct rxe_rs_odp *odp, u64 va, u64 len, bool write, bool fault);
int rxe_rs_odp_copy(struct rxe_rs_odp *odp, u64 va, void *buf, unsigned int len, bool to_mr);
int rxe_rs_odp_atomic(struct rxe_rs_odp *odp, u64 va, bool cas, u64 cmp, u64 val, u64 *orig);

/* Data path: timers, bottom halves, events. */
void rxe_rs_timer_setup(struct timer_list *timer, void (*fn)(struct timer_list *));
void rxe_rs_mod_timer_at(struct timer_list *timer, unsigned long expires);
void rxe_rs_timer_shutdown_sync(struct timer_list *timer);
unsigned long rxe_rs_usecs_to_jiffies(unsigned int usecs);
void rxe_rs_local_bh_disable(void);
void rxe_rs_local_bh_enable(void);
void rxe_rs_cq_comp_handler(struct ib_cq *cq);
void rxe_rs_cq_event(struct ib_cq *cq, enum ib_event_type type);
void rxe_rs_qp_event(struct ib_qp *qp, enum ib_event_type type);
void rxe_rs_srq_event(struct ib_srq *srq, enum ib_event_type type);
bool rxe_rs_ib_device_try_get(struct ib_device *dev);
struct workqueue_struct *rxe_rs_system_dfl_wq(void);

#endif /* RXE_RS_FFI_H */
