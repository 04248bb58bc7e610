// SPDX-License-Identifier: GPL-2.0
/*
 * C shims: static inline functions and macros of the kernel headers, made callable from
 * Rust. Most are one-line forwarders. Some hold a few lines of kernel plumbing where no single
 * call exists: the skb work of rxe_net.c (allocating a transmit skb, the route lookup, the UDP
 * and IP headers, sending and looping back, attaching page fragments and the trailer, reading
 * a packet's pieces, queues that close), the UDP tunnel socket's setup, walks of a umem's
 * pages, and copies and 64-bit atomics on pages under kmap_local_page. The protocol's logic
 * lives in Rust.
 */
#include <linux/crc32.h>
#include <linux/if_vlan.h>
#include <linux/etherdevice.h>
#include <linux/vmalloc.h>
#include <linux/mm.h>
#include <linux/cache.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/ib_umem.h>
#include <linux/random.h>
#include <rdma/ib_verbs.h>
#include <linux/highmem.h>
#include <linux/timer.h>
#include <linux/unaligned.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/ipv6.h>
#include <net/ip6_route.h>
#include <net/udp.h>
#include <net/gro.h>
#include <net/udp_tunnel.h>
#include "rxe_rs_ffi.h"

const char *rxe_rs_netdev_name(const struct net_device *ndev)
{
	return netdev_name(ndev);
}

void rxe_rs_dev_hold(struct net_device *ndev)
{
	dev_hold(ndev);
}

void rxe_rs_dev_put(struct net_device *ndev)
{
	dev_put(ndev);
}

struct net *rxe_rs_dev_net(const struct net_device *ndev)
{
	return dev_net(ndev);
}

bool rxe_rs_netif_is_up(const struct net_device *ndev)
{
	return netif_get_flags(ndev) & IFF_UP;
}

bool rxe_rs_netdev_is_vlan(const struct net_device *ndev)
{
	return is_vlan_dev(ndev);
}

/* Multicast filter of the net device (rxe_mcast_add, rxe_mcast_del). */
int rxe_rs_dev_mc_add(struct net_device *ndev, const u8 *mac)
{
	return dev_mc_add(ndev, mac);
}

int rxe_rs_dev_mc_del(struct net_device *ndev, const u8 *mac)
{
	return dev_mc_del(ndev, mac);
}

struct net_device *rxe_rs_netdev_notifier_info_to_dev(void *info)
{
	return netdev_notifier_info_to_dev(info);
}

void rxe_rs_ib_mark_name_assigned_by_user(struct ib_device *ibdev)
{
	ib_mark_name_assigned_by_user(ibdev);
}

enum ib_port_state rxe_rs_ib_get_curr_port_state(struct net_device *ndev)
{
	return ib_get_curr_port_state(ndev);
}

int rxe_rs_ib_no_udata_io(struct ib_udata *udata)
{
	return ib_no_udata_io(udata);
}

unsigned int rxe_rs_num_possible_cpus(void)
{
	return num_possible_cpus();
}

void rxe_rs_eth_random_addr(u8 *addr)
{
	eth_random_addr(addr);
}

/*
 * Bursts on receive: the RoCEv2 packets of one flow that one NAPI poll brings (the same
 * addresses and ports, matched by inet_gro_receive and udp_gro_receive; the same TTL, TOS and
 * DF; IPv4 IDs that count up by one; UDP checksum zero, as RoCEv2 senders send it) are chained
 * as a fraglist GRO skb, laid out as skb_gro_receive_list lays one out. The chain goes through
 * ip_rcv, netfilter's input hooks, the route and the socket lookup once and reaches encap_rcv
 * whole (the sockets accept GSO skbs, as vxlan's and geneve's do), where rxe_rs_encap_rcv
 * takes it apart into the packets as they came, each with its own IP and UDP header (the ICRC
 * covers them), for the driver to take as one list. Forwarded instead, the chain is cut back by
 * skb_segment_list at the output as any UDP fraglist GRO skb. Not while a packet tap is open
 * on the device: a capture sees every packet as it was on the wire (its taps run after GRO).
 */
static bool rxe_rs_gro_same_net(const void *nh, const void *nh2, u16 count)
{
	const struct iphdr *iph = nh, *iph2 = nh2;

	if (iph->version == 6)
		return !ipv6_gro_flush(nh, nh2);
	/* All but the length, checksum and ID the same; the ID the held packet's plus its place. */
	return !((iph->ttl ^ iph2->ttl) | (iph->tos ^ iph2->tos) |
		 ((iph->frag_off ^ iph2->frag_off) & htons(IP_DF))) &&
	       ntohs(iph->id) == (u16)(ntohs(iph2->id) + count);
}

/* The UDP checksum of the packet whose network header is nh (the UDP header just before the
 * GRO offset, which is the same for every packet of the flow). */
static __sum16 rxe_rs_gro_udp_check(const void *nh, unsigned int nhoff, struct sk_buff *skb)
{
	const struct udphdr *uh = nh + (skb_gro_offset(skb) - nhoff - sizeof(struct udphdr));

	return uh->check;
}

static struct sk_buff *rxe_rs_gro_receive(struct sock *sk, struct list_head *head,
					  struct sk_buff *skb)
{
	/* The outer network header: udp_gro_receive has set encap_mark before this call. */
	const unsigned int nhoff = NAPI_GRO_CB(skb)->network_offsets[0];
	const void *nh;
	struct sk_buff *p;

	if (NAPI_GRO_CB(skb)->flush || dev_nit_active_rcu(skb->dev))
		return NULL;
	nh = skb_gro_may_pull(skb, skb_gro_offset(skb)) ? skb_gro_header_fast(skb, nhoff) :
							  skb->data + nhoff;
	list_for_each_entry(p, head, list) {
		if (!NAPI_GRO_CB(p)->same_flow)
			continue;
		/* A held packet of this flow has its headers where this one has them. */
		if (!rxe_rs_gro_same_net(nh, p->data + nhoff, NAPI_GRO_CB(p)->count) ||
		    skb->ip_summed != p->ip_summed || skb->csum_level != p->csum_level ||
		    rxe_rs_gro_udp_check(nh, nhoff, skb) ||
		    rxe_rs_gro_udp_check(p->data + nhoff, nhoff, skb) ||
		    p->len + skb->len >= 65536)
			return p;
		if (!pskb_may_pull(skb, skb_gro_offset(skb))) {
			NAPI_GRO_CB(skb)->flush = 1;
			return NULL;
		}
		skb_set_network_header(skb, nhoff);
		if (NAPI_GRO_CB(p)->last == p)
			skb_shinfo(p)->frag_list = skb;
		else
			NAPI_GRO_CB(p)->last->next = skb;
		skb_pull(skb, skb_gro_offset(skb));
		NAPI_GRO_CB(p)->last = skb;
		NAPI_GRO_CB(p)->count++;
		p->data_len += skb->len;
		p->truesize += skb->truesize;
		p->len += skb->len;
		skb->destructor = NULL;
		skb->sk = NULL;
		skb_shinfo(p)->flags |= skb_shinfo(skb)->flags & SKBFL_SHARED_FRAG;
		NAPI_GRO_CB(skb)->same_flow = 1;
		/* As UDP GRO: a chain of at most 64 packets. */
		return NAPI_GRO_CB(p)->count >= 64 ? p : NULL;
	}
	return NULL;
}

/* A chain of whole packets (gso_size: the first one's UDP payload); UDP_TUNNEL, set by
 * udp_gro_complete, lets it pass the UDP layer to encap_rcv whole; UDP_L4 | FRAGLIST without
 * encapsulation cut it back with skb_segment_list wherever it is segmented. */
static int rxe_rs_gro_complete(struct sock *sk, struct sk_buff *skb, int nhoff)
{
	skb->encapsulation = 0;
	skb_shinfo(skb)->gso_type |= SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
	skb_shinfo(skb)->gso_segs = NAPI_GRO_CB(skb)->count;
	return 0;
}

typedef int (*rxe_rs_rcv_fn)(struct sock *sk, struct sk_buff *skb);

/* The driver's receive function, one for every tunnel socket (set before the first opens). */
static rxe_rs_rcv_fn rxe_rs_rcv;

/*
 * The tunnel sockets' encap_rcv (skb->data at the UDP header): the driver's receive function
 * gets a list of packets linked by skb->next, one packet or a chain of rxe_rs_gro_receive
 * taken apart, in the order they came. The head gets its own lengths back in its IP and UDP
 * headers (GRO wrote the chain's there); the others hang in its frag_list whole, data at their
 * UDP payload. Any other GSO skb (a chain something on the way made linear, another tunnel's
 * skb) is cut as the UDP layer cuts one (udp_queue_rcv_skb: udp_rcv_segment).
 */
static int rxe_rs_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	rxe_rs_rcv_fn rcv = READ_ONCE(rxe_rs_rcv);
	struct sk_buff *list, *p;
	unsigned int len;

	if (likely(!skb_is_gso(skb))) {
		skb->next = NULL;
		return rcv(sk, skb);
	}
	list = skb_shinfo(skb)->frag_list;
	if (!(skb_shinfo(skb)->gso_type & SKB_GSO_FRAGLIST) || !list) {
		__skb_push(skb, -skb_mac_offset(skb));
		list = udp_rcv_segment(sk, skb, sk->sk_family == AF_INET);
		for (p = list; p; p = p->next) {
			__skb_pull(p, skb_transport_offset(p));
			udp_post_segment_fix_csum(p);
		}
		return list ? rcv(sk, list) : 0;
	}
	skb_shinfo(skb)->frag_list = NULL;
	for (p = list; p; p = p->next) {
		skb->len -= p->len;
		skb->data_len -= p->len;
		skb->truesize -= p->truesize;
		p->dev = skb->dev;
		__skb_push(p, sizeof(struct udphdr));
		skb_reset_transport_header(p);
	}
	skb_gso_reset(skb);
	len = skb->len;
	((struct udphdr *)skb->data)->len = htons(len);
	if (ip_hdr(skb)->version == 4) {
		ip_hdr(skb)->tot_len = htons(len + ip_hdrlen(skb));
		ip_send_check(ip_hdr(skb));
	} else {
		ipv6_hdr(skb)->payload_len = htons(len);
	}
	skb->next = list;
	return rcv(sk, skb);
}

struct socket *rxe_rs_udp_tunnel_open(struct net *net, bool ipv6,
				      int (*encap_rcv)(struct sock *sk, struct sk_buff *skb))
{
	struct udp_port_cfg udp_cfg = {};
	struct udp_tunnel_sock_cfg tnl_cfg = {};
	struct socket *sock;
	int err;

	if (ipv6) {
		udp_cfg.family = AF_INET6;
		udp_cfg.ipv6_v6only = 1;
	} else {
		udp_cfg.family = AF_INET;
	}
	udp_cfg.local_udp_port = htons(ROCE_V2_UDP_DPORT);
	err = udp_sock_create(net, &udp_cfg, &sock);
	if (err < 0)
		return ERR_PTR(err);
	WRITE_ONCE(rxe_rs_rcv, encap_rcv);
	tnl_cfg.encap_type = 1;
	tnl_cfg.encap_rcv = rxe_rs_encap_rcv;
	tnl_cfg.gro_receive = rxe_rs_gro_receive;
	tnl_cfg.gro_complete = rxe_rs_gro_complete;
	setup_udp_tunnel_sock(net, sock->sk, &tnl_cfg);
	udp_allow_gso(sock->sk);
	return sock;
}

void rxe_rs_udp_tunnel_close(struct socket *sock)
{
	udp_tunnel_sock_release(sock->sk);
}

void rxe_rs_kfree_skb(struct sk_buff *skb)
{
	kfree_skb(skb);
}

void *rxe_rs_vmalloc_user(unsigned long size)
{
	return vmalloc_user(size);
}

void rxe_rs_vfree(void *addr)
{
	vfree(addr);
}

int rxe_rs_remap_vmalloc_range(struct vm_area_struct *vma, void *addr)
{
	return remap_vmalloc_range(vma, addr, 0);
}

unsigned long rxe_rs_vma_offset(const struct vm_area_struct *vma)
{
	return vma->vm_pgoff << PAGE_SHIFT;
}

unsigned long rxe_rs_vma_size(const struct vm_area_struct *vma)
{
	return vma->vm_end - vma->vm_start;
}

int rxe_rs_ib_copy_to_udata(struct ib_udata *udata, const void *src, size_t len)
{
	return ib_copy_to_udata(udata, (void *)src, len);
}

int rxe_rs_ib_copy_from_udata(void *dst, struct ib_udata *udata, size_t len)
{
	return ib_copy_from_udata(dst, udata, len);
}

int rxe_rs_copy_to_user_addr(u64 addr, const void *src, size_t len)
{
	return copy_to_user(u64_to_user_ptr(addr), src, len) ? -EFAULT : 0;
}

struct ib_ucontext *rxe_rs_udata_context(struct uverbs_attr_bundle *attrs)
{
	return attrs->context;
}

unsigned int rxe_rs_cache_line_size(void)
{
	return cache_line_size();
}

struct ib_umem *rxe_rs_ib_umem_get(struct ib_device *ibdev, u64 start, u64 length, int access)
{
	return ib_umem_get_va(ibdev, start, length, access);
}

u8 rxe_rs_get_random_u8(void)
{
	return get_random_u8();
}

int rxe_rs_gid_attr_network_type(const struct ib_gid_attr *attr)
{
	return rdma_gid_attr_network_type(attr);
}

/* --- Data path: socket buffers (rxe_net.c) --- */

/*
 * A packet of len linear bytes, zeroed from unzeroed on. The caller writes every byte before
 * that, headers and a copied payload: zeroing them too would be a second pass over every byte
 * sent. What is zeroed is a pad and the ICRC, 4 to 7 bytes, or nothing: two overlapping stores
 * instead of a memset call.
 */
struct sk_buff *rxe_rs_skb_alloc_tx(struct net_device *ndev, bool ipv6, unsigned int len,
				    unsigned int unzeroed)
{
	unsigned int hdr_len = sizeof(struct udphdr) +
			       (ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr));
	struct sk_buff *skb;
	unsigned int tail;
	u8 *data;

	/*
	 * A failure is handled: the QP's task runs again a jiffy later (C fails the WQE with
	 * LOC_QP_OP_ERR instead), so no allocation-failure report, as in drivers' refill paths.
	 */
	skb = alloc_skb(len + hdr_len + LL_RESERVED_SPACE(ndev), GFP_ATOMIC | __GFP_NOWARN);
	if (!skb)
		return NULL;
	skb_reserve(skb, hdr_len + LL_RESERVED_SPACE(ndev));
	skb->dev = ndev;
	skb->protocol = ipv6 ? htons(ETH_P_IPV6) : htons(ETH_P_IP);
	if (unzeroed > len)
		unzeroed = 0;
	data = skb_put(skb, len) + unzeroed;
	tail = len - unzeroed;
	if (tail >= sizeof(u32) && tail <= 2 * sizeof(u32)) {
		put_unaligned(0, (u32 *)data);
		put_unaligned(0, (u32 *)(data + tail - sizeof(u32)));
	} else {
		memset(data, 0, tail);
	}
	return skb;
}

/*
 * rxe_find_route4/6: a route from saddr to daddr out of ndev, held; NULL without one. *cookie
 * is what dst_check() wants later (rt6_get_cookie for IPv6, as C's qp->dst_cookie; unused by
 * IPv4, whose routes go obsolete through their generation).
 */
struct dst_entry *rxe_rs_route_lookup(struct net_device *ndev, bool ipv6, const u8 *saddr,
				      const u8 *daddr, u32 *cookie)
{
	struct net *net = dev_net(ndev);

	*cookie = 0;
	if (!ipv6) {
		struct flowi4 fl = {};
		struct rtable *rt;

		fl.flowi4_oif = ndev->ifindex;
		memcpy(&fl.saddr, saddr, 4);
		memcpy(&fl.daddr, daddr, 4);
		fl.flowi4_proto = IPPROTO_UDP;
		rt = ip_route_output_key(net, &fl);
		return IS_ERR(rt) ? NULL : &rt->dst;
	}
#if IS_ENABLED(CONFIG_IPV6)
	{
		struct flowi6 fl6 = {};
		struct dst_entry *dst;

		fl6.flowi6_oif = ndev->ifindex;
		memcpy(&fl6.saddr, saddr, 16);
		memcpy(&fl6.daddr, daddr, 16);
		fl6.flowi6_proto = IPPROTO_UDP;
		dst = ip6_dst_lookup_flow(net, NULL, &fl6, NULL);
		if (IS_ERR(dst))
			return NULL;
		if (dst->error) {
			dst_release(dst);
			return NULL;
		}
		*cookie = rt6_get_cookie(dst_rt6_info(dst));
		return dst;
	}
#else
	return NULL;
#endif
}

/* dst_check: whether a held route may still be used (not obsoleted by a routing change). */
bool rxe_rs_dst_valid(struct dst_entry *dst, u32 cookie)
{
	return dst_check(dst, cookie) != NULL;
}

void rxe_rs_dst_hold(struct dst_entry *dst)
{
	dst_hold(dst);
}

void rxe_rs_dst_release(struct dst_entry *dst)
{
	dst_release(dst);
}

/*
 * rxe_prepare: UDP and IP headers in front of the BTH (prepare_udp_hdr, prepare_ipv4_hdr,
 * prepare_ipv6_hdr), on the route dst, whose reference passes to the skb. skb->data ends at
 * the IP header.
 */
void rxe_rs_skb_prepare(struct sk_buff *skb, struct dst_entry *dst, bool ipv6, const u8 *saddr,
			const u8 *daddr, u16 sport, u8 tclass, u8 ttl, u16 ip_id)
{
	struct udphdr *udph;

	__skb_push(skb, sizeof(*udph));
	skb_reset_transport_header(skb);
	udph = udp_hdr(skb);
	udph->dest = htons(ROCE_V2_UDP_DPORT);
	udph->source = htons(sport);
	udp_set_len_short(udph, skb->len);
	udph->check = 0;

	if (!ipv6) {
		struct iphdr *iph;

		skb_scrub_packet(skb, false);
		skb_clear_hash(skb);
		skb_dst_set(skb, dst);
		memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
		skb_push(skb, sizeof(struct iphdr));
		skb_reset_network_header(skb);
		iph = ip_hdr(skb);
		iph->version = IPVERSION;
		iph->ihl = sizeof(struct iphdr) >> 2;
		iph->tot_len = htons(skb->len);
		iph->frag_off = htons(IP_DF);
		iph->protocol = IPPROTO_UDP;
		iph->tos = tclass;
		memcpy(&iph->daddr, daddr, 4);
		memcpy(&iph->saddr, saddr, 4);
		iph->ttl = ttl;
		/*
		 * C calls __ip_select_ident (a siphash per packet); a DF datagram is never
		 * fragmented, so its ID only has to be what the ICRC covers (RFC 6864, atomic
		 * datagrams): the packet's place in its step's bursts, which segmentation sets
		 * again (inet_gso_segment: the head's ID, plus one a packet).
		 */
		iph->id = htons(ip_id);
	} else {
		struct ipv6hdr *ip6h;

		memset(&(IPCB(skb)->opt), 0, sizeof(IPCB(skb)->opt));
		IPCB(skb)->flags &= ~(IPSKB_XFRM_TUNNEL_SIZE | IPSKB_XFRM_TRANSFORMED |
				      IPSKB_REROUTED);
		skb_dst_set(skb, dst);
		__skb_push(skb, sizeof(*ip6h));
		skb_reset_network_header(skb);
		ip6h = ipv6_hdr(skb);
		ip6_flow_hdr(ip6h, tclass, htonl(0));
		ip6h->nexthdr = IPPROTO_UDP;
		ip6h->hop_limit = ttl;
		memcpy(&ip6h->daddr, daddr, 16);
		memcpy(&ip6h->saddr, saddr, 16);
		ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	}
}

/* rxe_send: hands a prepared packet to the IP layer; consumes the skb. */
int rxe_rs_skb_xmit(struct sk_buff *skb)
{
	struct net *net = dev_net(skb_dst(skb)->dev);
	int err;

	if (skb->protocol == htons(ETH_P_IP))
		err = ip_local_out(net, NULL, skb);
	else
		err = ip6_local_out(net, NULL, skb);
	return net_xmit_eval(err);
}

/*
 * Appends the prepared IPv4 or IPv6 packet skb to the burst head (a prepared packet, or one with
 * packets appended): the burst then goes through the IP layer, netfilter and the qdisc as one
 * skb, a UDP fraglist GSO skb whose frag_list holds the packets as they were built, and is cut
 * back into them before the device (skb_segment_list; a device with NETIF_F_GSO_FRAGLIST, as
 * veth, passes it on and the receiving UDP socket cuts it). Laid out as GRO lays out the skbs
 * it chains (skb_gro_receive_list): each appended packet's data starts after its UDP header,
 * its network header still set, and the head's gso_size is its own UDP payload, as
 * __udp_gso_segment checks. Segmentation copies no header but the link layer's into the
 * packets, so each keeps its own IP and UDP headers; it sets each IPv4 packet's ID to the
 * head's plus its place, so an IPv4 burst is only packets built with consecutive IDs (IPv6 has
 * none; ipv6_gso_segment sets each payload length to the one the packet was built with).
 * Only on a device that cannot take a fraglist GSO skb (NETIF_F_GSO_FRAGLIST: veth, lo and
 * bridges can), so that the stack cuts the burst before the device: tcpdump on it and every
 * receiver see the packets as built, a raw socket or a capture on a veth's peer included.
 * false (nothing done): not a packet this can append (another family or route, a clone).
 */
bool rxe_rs_skb_burst_append(struct sk_buff *head, struct sk_buff *skb)
{
	const bool ipv4 = head->protocol == htons(ETH_P_IP);
	const unsigned int hlen = (ipv4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr)) +
				  sizeof(struct udphdr);
	struct skb_shared_info *shinfo = skb_shinfo(head);
	/* The place skb takes in the burst: 1 after a lone head. */
	u16 place = shinfo->gso_segs ?: 1;
	struct sk_buff *tail;

	if (skb->protocol != head->protocol ||
	    (!ipv4 && head->protocol != htons(ETH_P_IPV6)) ||
	    skb_dst(head) != skb_dst(skb) ||
	    (skb_dst(head)->dev->features & NETIF_F_GSO_FRAGLIST) ||
	    skb_cloned(head) || skb_cloned(skb) ||
	    skb_has_frag_list(skb) || skb_network_offset(head) != 0 ||
	    skb_network_offset(skb) != 0 || skb->len <= hlen ||
	    head->len + skb->len >= 65536 ||
	    (ipv4 && ntohs(ip_hdr(skb)->id) != (u16)(ntohs(ip_hdr(head)->id) + place)))
		return false;
	if (!skb_has_frag_list(head)) {
		if (skb_is_gso(head) || head->len <= hlen)
			return false;
		shinfo->gso_size = head->len - hlen;
		shinfo->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
		shinfo->gso_segs = 1;
		shinfo->frag_list = skb;
	} else {
		for (tail = shinfo->frag_list; tail->next; tail = tail->next)
			;
		tail->next = skb;
	}
	skb->next = NULL;
	__skb_pull(skb, hlen);
	head->data_len += skb->len;
	head->len += skb->len;
	head->truesize += skb->truesize;
	shinfo->gso_segs++;
	return true;
}

/* rxe_loopback: a prepared packet turned into a received one: skb->data at the UDP header. */
void rxe_rs_skb_loopback(struct sk_buff *skb)
{
	skb_pull(skb, skb->protocol == htons(ETH_P_IP) ? sizeof(struct iphdr) :
							 sizeof(struct ipv6hdr));
}

/*
 * rxe_send's skb->destructor without a per-QP socket: the sender's pointer rides in
 * skb_shinfo(skb)->destructor_arg, which only zero-copy skbs (SKBFL_ZEROCOPY_ENABLE, never set
 * on the packets we allocate) use. The destructor runs when the stack frees or orphans the
 * packet (the receiving IP layer orphans it), so it counts packets still in queues.
 */
void rxe_rs_skb_set_tx_destructor(struct sk_buff *skb, void (*dtor)(struct sk_buff *), void *arg)
{
	WARN_ON_ONCE(skb->destructor || skb_zcopy(skb));
	skb_shinfo(skb)->destructor_arg = arg;
	skb->destructor = dtor;
}

void *rxe_rs_skb_tx_destructor_arg(struct sk_buff *skb)
{
	return skb_shinfo(skb)->destructor_arg;
}

/* A private copy of a received packet, headers and offsets included (multicast fan-out). */
struct sk_buff *rxe_rs_skb_copy(const struct sk_buff *skb)
{
	return skb_copy(skb, GFP_ATOMIC);
}

int rxe_rs_skb_linearize(struct sk_buff *skb)
{
	return skb_linearize(skb);
}

/*
 * The page fragments of a packet we can read in place: their count, or -1 if the skb chains
 * further skbs (frag_list) or a fragment sits in highmem (not in the direct map).
 */
int rxe_rs_skb_frags_readable(const struct sk_buff *skb)
{
	const struct skb_shared_info *sh = skb_shinfo(skb);
	unsigned int i;

	if (skb_has_frag_list(skb))
		return -1;
	for (i = 0; i < sh->nr_frags; i++)
		if (PageHighMem(skb_frag_page(&sh->frags[i])))
			return -1;
	return sh->nr_frags;
}

/*
 * The packet from skb->data on, in place: the linear part, then each page fragment, into
 * `ptrs`/`lens` (at most `max`); how many, or -1 if it cannot be read so (a fragment list, a
 * fragment outside the direct map, more than `max` pieces). One call per packet instead of one
 * per fragment.
 */
int rxe_rs_skb_pieces(struct sk_buff *skb, const unsigned char **ptrs, unsigned int *lens,
		      unsigned int max)
{
	const struct skb_shared_info *sh = skb_shinfo(skb);
	unsigned int i;

	if (skb_has_frag_list(skb) || sh->nr_frags >= max)
		return -1;
	ptrs[0] = skb->data;
	lens[0] = skb_headlen(skb);
	for (i = 0; i < sh->nr_frags; i++) {
		const skb_frag_t *frag = &sh->frags[i];

		if (PageHighMem(skb_frag_page(frag)))
			return -1;
		ptrs[i + 1] = skb_frag_address(frag);
		lens[i + 1] = skb_frag_size(frag);
	}
	return sh->nr_frags + 1;
}

/* Makes the first `len` bytes (at most the packet) linear: the transport headers. */
int rxe_rs_skb_pull_headers(struct sk_buff *skb, unsigned int len)
{
	return pskb_may_pull(skb, min(len, skb->len)) ? 0 : -ENOMEM;
}

/*
 * Whether a page may ride in a packet by reference: not slab memory (whose lifetime a page
 * reference does not extend; sendpage_ok), and in the direct map.
 */
static bool rxe_rs_page_sendable(struct page *page)
{
	return sendpage_ok(page) && !PageHighMem(page);
}

/* The page of kernel virtual address `addr` if it may ride in a packet, else NULL. */
struct page *rxe_rs_kva_sendable_page(u64 addr)
{
	const void *va = (const void *)(uintptr_t)addr;
	struct page *page;

	if (!virt_addr_valid(va))
		return NULL;
	page = virt_to_page(va);
	return rxe_rs_page_sendable(page) ? page : NULL;
}

/*
 * Appends `len` bytes at `off` of `page` to the packet as a fragment, taking a page reference
 * the skb drops when freed. The bytes belong to someone else: SKBFL_SHARED_FRAG tells the
 * stack not to write them. -EMSGSIZE when the skb has no fragment slot left, -EPERM when the
 * page may not ride in a packet.
 */
int rxe_rs_skb_attach_page(struct sk_buff *skb, struct page *page, unsigned int off,
			   unsigned int len)
{
	unsigned int i = skb_shinfo(skb)->nr_frags;

	if (i >= MAX_SKB_FRAGS)
		return -EMSGSIZE;
	if (!rxe_rs_page_sendable(page))
		return -EPERM;
	get_page(page);
	skb_fill_page_desc(skb, i, page, off, len);
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
	return 0;
}

/*
 * Appends `len` zeroed bytes of our own as the packet's last fragment (its pad and ICRC, which
 * cannot go in the linear part once fragments follow it); their address, or NULL.
 */
u8 *rxe_rs_skb_attach_trailer(struct sk_buff *skb, unsigned int len)
{
	unsigned int i = skb_shinfo(skb)->nr_frags;
	struct page *page;
	u8 *buf;

	if (i >= MAX_SKB_FRAGS)
		return NULL;
	buf = netdev_alloc_frag(len);
	if (!buf)
		return NULL;
	memset(buf, 0, len);
	page = virt_to_head_page(buf);
	skb_fill_page_desc(skb, i, page, buf - (u8 *)page_address(page), len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
	return buf;
}

/* The bytes from the network header to skb->data (the IP header of a received packet). */
unsigned char *rxe_rs_skb_network_header(struct sk_buff *skb, unsigned int *len)
{
	long off = skb->data - skb_network_header(skb);

	*len = off > 0 ? off : 0;
	return skb_network_header(skb);
}

struct net_device *rxe_rs_skb_dev(struct sk_buff *skb)
{
	return skb->dev;
}

/* The packet after skb in a list linked by skb->next (NULL at the end), unlinked. */
struct sk_buff *rxe_rs_skb_take_next(struct sk_buff *skb)
{
	struct sk_buff *next = skb->next;

	skb_mark_not_on_list(skb);
	return next;
}

void rxe_rs_consume_skb(struct sk_buff *skb)
{
	consume_skb(skb);
}

/* sk_buff_head: a queue of packets with its own irq-safe lock. */
void rxe_rs_skb_queue_init(struct sk_buff_head *q)
{
	skb_queue_head_init(q);
}

/*
 * Every engine step looks in both of its QP's queues, most often empty: an empty queue is seen
 * without taking its lock. A packet queued meanwhile is followed by a kick of the QP's task,
 * whose next step finds it.
 */
struct sk_buff *rxe_rs_skb_dequeue(struct sk_buff_head *q)
{
	if (skb_queue_empty_lockless(q))
		return NULL;
	return skb_dequeue(q);
}

void rxe_rs_skb_queue_purge(struct sk_buff_head *q)
{
	if (!skb_queue_empty_lockless(q))
		skb_queue_purge(q);
}

/*
 * A queue that can be closed: *closed is only read and written under q->lock, so a packet
 * queued by a receiver that found the QP before it was destroyed is either purged by the close
 * or refused after it, never left behind. A refused packet is dropped (kfree_skb: the kernel's
 * drop accounting sees it). Returns whether the packet was queued.
 */
bool rxe_rs_skb_queue_tail_open(struct sk_buff_head *q, bool *closed, struct sk_buff *skb)
{
	unsigned long flags;
	bool queued;

	spin_lock_irqsave(&q->lock, flags);
	queued = !*closed;
	if (queued)
		__skb_queue_tail(q, skb);
	spin_unlock_irqrestore(&q->lock, flags);
	if (!queued)
		kfree_skb(skb);
	return queued;
}

void rxe_rs_skb_queue_close(struct sk_buff_head *q, bool *closed)
{
	struct sk_buff_head left;
	unsigned long flags;

	__skb_queue_head_init(&left);
	spin_lock_irqsave(&q->lock, flags);
	*closed = true;
	skb_queue_splice_init(q, &left);
	spin_unlock_irqrestore(&q->lock, flags);
	__skb_queue_purge(&left);
}

/* --- Data path: memory regions (rxe_mr.c) --- */

long rxe_rs_umem_pages(struct ib_umem *umem, struct page **pages, unsigned long n)
{
	struct sg_page_iter it;
	unsigned long i = 0;

	for_each_sgtable_page(&umem->sgt_append.sgt, &it, 0) {
		if (i == n)
			return -EINVAL;
		pages[i++] = sg_page_iter_page(&it);
	}
	return i;
}

/* Whether every page of the umem is in the direct map (always, without highmem). */
bool rxe_rs_umem_in_direct_map(struct ib_umem *umem)
{
	struct sg_page_iter it;

	if (!IS_ENABLED(CONFIG_HIGHMEM))
		return true;
	for_each_sgtable_page(&umem->sgt_append.sgt, &it, 0) {
		if (PageHighMem(sg_page_iter_page(&it)))
			return false;
	}
	return true;
}

/* The direct-map address of a page in the direct map (rxe_rs_umem_in_direct_map). */
const void *rxe_rs_page_address(struct page *page)
{
	return page_address(page);
}

/* rxe_mr_fill_pages_from_sgt's is_pmem_page, over every page of the umem. */
bool rxe_rs_umem_is_pmem(struct ib_umem *umem)
{
	struct sg_page_iter it;

	for_each_sgtable_page(&umem->sgt_append.sgt, &it, 0) {
		phys_addr_t paddr = page_to_phys(sg_page_iter_page(&it));

		if (region_intersects(paddr, PAGE_SIZE, IORESOURCE_MEM,
				      IORES_DESC_PERSISTENT_MEMORY) != REGION_INTERSECTS)
			return false;
	}
	return true;
}

unsigned long rxe_rs_umem_num_pages(struct ib_umem *umem)
{
	return ib_umem_num_pages(umem);
}

unsigned long rxe_rs_umem_offset(struct ib_umem *umem)
{
	return ib_umem_offset(umem);
}

void rxe_rs_page_copy(struct page *page, unsigned int offset, void *buf, unsigned int len,
		      bool to_page)
{
	void *va = kmap_local_page(page);
	void *at = va + offset;

	/*
	 * A looped-back payload is read in place in the sender's MR, which may overlap the bytes
	 * it lands in (an RDMA WRITE within one buffer): then memmove, as the C driver's copy
	 * through an skb would give.
	 */
	if (!to_page)
		memcpy(buf, at, len);
	else if (buf + len <= at || at + len <= buf)
		memcpy(at, buf, len);
	else
		memmove(at, buf, len);
	kunmap_local(va);
}

u64 rxe_rs_page_atomic_cmpxchg(struct page *page, unsigned int offset, u64 cmp, u64 swap)
{
	u64 *va = kmap_local_page(page);
	u64 orig = cmpxchg(va + offset / 8, cmp, swap);

	kunmap_local(va);
	return orig;
}

u64 rxe_rs_page_atomic_add(struct page *page, unsigned int offset, u64 add)
{
	u64 *va = kmap_local_page(page);
	u64 orig = atomic64_fetch_add(add, (atomic64_t *)(va + offset / 8));

	kunmap_local(va);
	return orig;
}

void rxe_rs_kva_copy(u64 addr, void *buf, unsigned int len, bool to_mem)
{
	if (to_mem)
		memcpy((void *)(uintptr_t)addr, buf, len);
	else
		memcpy(buf, (void *)(uintptr_t)addr, len);
}

u64 rxe_rs_kva_atomic(u64 addr, bool cas, u64 cmp, u64 val)
{
	u64 *va = (u64 *)(uintptr_t)addr;

	if (cas)
		return cmpxchg(va, cmp, val);
	return atomic64_fetch_add(val, (atomic64_t *)va);
}

/* --- Data path: timers, BH, CQ events --- */

void rxe_rs_timer_setup(struct timer_list *timer, void (*fn)(struct timer_list *))
{
	timer_setup(timer, fn, 0);
}

void rxe_rs_mod_timer_at(struct timer_list *timer, unsigned long expires)
{
	mod_timer(timer, expires);
}

void rxe_rs_timer_shutdown_sync(struct timer_list *timer)
{
	timer_shutdown_sync(timer);
}

unsigned long rxe_rs_usecs_to_jiffies(unsigned int usecs)
{
	return usecs_to_jiffies(usecs);
}

void rxe_rs_local_bh_disable(void)
{
	local_bh_disable();
}

void rxe_rs_local_bh_enable(void)
{
	local_bh_enable();
}

void rxe_rs_cq_comp_handler(struct ib_cq *cq)
{
	if (cq->comp_handler)
		cq->comp_handler(cq, cq->cq_context);
}

void rxe_rs_cq_event(struct ib_cq *cq, enum ib_event_type type)
{
	struct ib_event ev = { .device = cq->device, .element.cq = cq, .event = type };

	if (cq->event_handler)
		cq->event_handler(&ev, cq->cq_context);
}

void rxe_rs_qp_event(struct ib_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = { .device = qp->device, .element.qp = qp, .event = type };

	if (qp->event_handler)
		qp->event_handler(&ev, qp->qp_context);
}

void rxe_rs_srq_event(struct ib_srq *srq, enum ib_event_type type)
{
	struct ib_event ev = { .device = srq->device, .element.srq = srq, .event = type };

	if (srq->event_handler)
		srq->event_handler(&ev, srq->srq_context);
}

bool rxe_rs_ib_device_try_get(struct ib_device *dev)
{
	return ib_device_try_get(dev);
}

/* --- The ICRC's CRC-32: the kernel's, arch-accelerated where the CPU allows --- */

u32 rxe_rs_crc32_le(u32 crc, const u8 *p, size_t len)
{
	return crc32_le(crc, p, len);
}

struct workqueue_struct *rxe_rs_system_dfl_wq(void)
{
	return system_dfl_wq;
}
