/* The deny list's rows for the network, included inside
 * hx_seccomp_deny[] (seccomp_deny.c, where EQ32, MASKED, NONE and the
 * ROW macros are): what would send past the address the kernel layer
 * decides, refused in BPF with the errno of a kernel or a process
 * without it. A fragment of that array, included once. */
/* A routing header sends every packet of the socket to its first
 * segment, not to the address connect or sendto named (the one
 * decided): any user may set a segment routing header (type 4).
 * IPv4's source routes need CAP_NET_RAW, which the agent lacks;
 * one send's own header is refused where it is copied
 * (unotify_net.c). */
SOCKOPT_ROW(IPPROTO_IPV6, IPV6_RTHDR, ROUTES),
    SOCKOPT_ROW(IPPROTO_IPV6, IPV6_2292PKTOPTIONS, ROUTES),
    /* The interface a packet leaves by, forced on the socket: a
     * datagram to 127.0.0.1 (the agent's own port, allowed) on a socket
     * bound to eth0 or with eth0 for its unicast interface left the
     * machine for the gateway (an attack review; IPv6 drops ::1 there).
     * Any user may set each once; a send's own IP_PKTINFO is refused
     * where it is copied (unotify_net.c). */
    SOCKOPT_ROW(SOL_SOCKET, SO_BINDTODEVICE, ROUTES),
    SOCKOPT_ROW(SOL_SOCKET, SO_BINDTOIFINDEX, ROUTES),
    SOCKOPT_ROW(IPPROTO_IP, IP_UNICAST_IF, ROUTES),
    SOCKOPT_ROW(IPPROTO_IPV6, IPV6_UNICAST_IF, ROUTES),
    SOCKOPT_ROW(IPPROTO_IPV6, IPV6_PKTINFO, ROUTES),
    /* A source address that is not the machine's: any user may set
     * IPV6_FREEBIND, bind [2001:db8::99] and send from it, so that what
     * an allowed host answers (a QUIC version negotiation echoes the
     * connection ids sent) goes to a host no rule names (an attack
     * review). A bind's own address is checked too (unotify_bind.c),
     * for where ip_nonlocal_bind is set. */
    SOCKOPT_ROW(IPPROTO_IP, IP_FREEBIND, SOURCE),
    SOCKOPT_ROW(IPPROTO_IPV6, IPV6_FREEBIND, SOURCE),
    SOCKOPT_ROW(IPPROTO_IP, IP_TRANSPARENT, SOURCE),
    SOCKOPT_ROW(IPPROTO_IPV6, IPV6_TRANSPARENT, SOURCE),
    /* A corked datagram takes every later send's bytes, whatever
     * address that send names (decided and recorded as that address):
     * refused, and what MSG_MORE left pending is sent before a send
     * with an address (unotify_net.c). */
    SOCKOPT_ROW(IPPROTO_UDP, UDP_CORK, CORK),
    SOCKOPT_ROW(IPPROTO_UDPLITE, UDP_CORK, CORK),
    /* A join of a multicast group: the kernel sends IGMP or MLD
     * reports naming the group (14 bytes of the agent's in an IPv6 one,
     * a source list more) out of the interface the group routes by,
     * eth0, with no send to decide (an attack review: 239.83.69.67 and
     * ff05::5345:4352:4554:... left eth0 from a root agent and an
     * ordinary user's). Any user may join; every other membership
     * option needs a join first. Receivers of multicast are refused
     * with it, loopback's too (the interface is behind a pointer). */
    SOCKOPT_ROW(IPPROTO_IP, IP_ADD_MEMBERSHIP, MCAST),
    SOCKOPT_ROW(IPPROTO_IP, IP_ADD_SOURCE_MEMBERSHIP, MCAST),
    SOCKOPT_ROW(IPPROTO_IP, MCAST_JOIN_GROUP, MCAST),
    SOCKOPT_ROW(IPPROTO_IP, MCAST_JOIN_SOURCE_GROUP, MCAST),
    SOCKOPT_ROW(IPPROTO_IPV6, IPV6_ADD_MEMBERSHIP, MCAST),
    SOCKOPT_ROW(IPPROTO_IPV6, IPV6_JOIN_ANYCAST, MCAST),
    SOCKOPT_ROW(IPPROTO_IPV6, MCAST_JOIN_GROUP, MCAST),
    SOCKOPT_ROW(IPPROTO_IPV6, MCAST_JOIN_SOURCE_GROUP, MCAST),
    /* Sockets that reach a host no notified call names: SCTP connects
     * by setsockopt (SCTP_SOCKOPT_CONNECTX, then send: any user, where
     * the module loads on demand, as on stock Debian and Ubuntu
     * kernels), SOCK_SEQPACKET being its type; TIPC sends to a group
     * and CAN to a bus without an address. Refused as by a kernel
     * without the protocol. */
    SOCKET_ROW(AF_INET, EQ32(2, IPPROTO_SCTP)),
    SOCKET_ROW(AF_INET6, EQ32(2, IPPROTO_SCTP)),
    SOCKET_ROW(AF_INET, MASKED(1, 0xf, SOCK_SEQPACKET)),
    SOCKET_ROW(AF_INET6, MASKED(1, 0xf, SOCK_SEQPACKET)),
    SOCKET_ROW(AF_TIPC, NONE), SOCKET_ROW(AF_CAN, NONE),
