#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The sroce authors
"""UD datagrams between two sroce devices through stock rdma-core (pyverbs).

    ud_test.py [options] DEV0 DEV1

Every test makes its own UD QP on each device (a on DEV0 sends, b on DEV1
receives) and an address handle to the peer's GID: SEND and SEND_IMM at
sizes up to the port MTU over IPv4 and IPv6, with the 40-byte GRH checked
byte by byte (for IPv4: 20 zero bytes and the IPv4 header of the packet;
for IPv6: its IPv6 header), the payload after it, byte_len, src_qp,
wc_flags; and the rules of IBA 9.8 and 10.2.5: a wrong Q_Key is dropped
and counted, a privileged Q_Key in the WR sends the QP's own, a message
longer than the MTU is a local length error, a datagram with no receive
posted, or longer than its receive, is dropped and counted (the receive
waits for the next one), and an AH of another PD is refused.  Options as rc_test.py's.
"""

import ipaddress
import sys

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SendWR

from rc_lib import (OK, SIG, counters, delta, expect_bytes, expect_qp,
                    expect_wc, main, no_more, pattern, poll, post_recv, sges)
from verbs_lib import PORT, Fail, modify, registry

UD = e.IBV_QPT_UD
LW = e.IBV_ACCESS_LOCAL_WRITE
QKEY = 0x1234abcd
GRH = 40
TESTS, test = registry()


class UdSide:
    """A UD QP with its PD and CQs on one device."""

    def __init__(self, t, dev, gid, qkey=QKEY, pd=None):
        self.dev = dev
        self.gid_index, self.gid = gid
        ctx = t.ctx(dev)
        self.pd = pd or PD(ctx)
        self.scq = CQ(ctx, 64, None, None, 0)
        self.rcq = CQ(ctx, 64, None, None, 0)
        cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=4,
                    max_recv_sge=4)
        self.qp = QP(self.pd, QPInitAttr(qp_type=UD, scq=self.scq,
                                         rcq=self.rcq, cap=cap,
                                         sq_sig_all=0))
        self.qpn = self.qp.qp_num
        if pd is None:
            t.hold(self.pd)
        t.hold(self.scq, self.rcq)
        t.hold(self.qp)
        attr = QPAttr(qp_state=e.IBV_QPS_INIT)
        attr.pkey_index = 0
        attr.port_num = PORT
        attr.qkey = qkey
        modify(self.qp, (attr, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
                         e.IBV_QP_PORT | e.IBV_QP_QKEY), f'{dev} ->INIT')
        modify(self.qp, (QPAttr(qp_state=e.IBV_QPS_RTR), e.IBV_QP_STATE),
               f'{dev} ->RTR')
        attr = QPAttr(qp_state=e.IBV_QPS_RTS)
        attr.sq_psn = 0x10
        modify(self.qp, (attr, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN),
               f'{dev} ->RTS')

    def mr(self, t, length, fill=None):
        mr = MR(self.pd, max(length, 1), LW)
        t.hold(mr)
        if fill is not None:
            data = pattern(max(length, 1), fill)
            mr.write(data, len(data), 0)
        return mr

    def ah_to(self, t, peer, pd=None):
        gr = GlobalRoute(dgid=GID(peer.gid), hop_limit=64,
                         sgid_index=self.gid_index)
        ah = AH(pd or self.pd, attr=AHAttr(port_num=PORT, is_global=1,
                                           gr=gr))
        t.hold(ah)
        return ah


def ud_pair(t, fam=4, qkey_b=QKEY):
    env = t.env
    a = UdSide(t, env.dev0, env.gid0[fam])
    b = UdSide(t, env.dev1, env.gid1[fam], qkey=qkey_b)
    return a, b


def send_ud(side, ah, peer_qpn, wr_id, sg, qkey=QKEY, imm=None,
            opcode=None):
    if opcode is None:
        opcode = e.IBV_WR_SEND_WITH_IMM if imm is not None else e.IBV_WR_SEND
    wr = SendWR(wr_id=wr_id, opcode=opcode, num_sge=len(sg), sg=sg,
                send_flags=SIG)
    if imm is not None:
        wr.imm_data = imm
    wr.set_wr_ud(ah, peer_qpn, qkey)
    side.qp.post_send(wr)


def expect_grh(grh, fam, src, dst):
    """The GRH of a datagram from src to dst (IP address strings)."""
    if fam == 4:
        expect_bytes('GRH bytes 0-19 (IPv4)', grh[:20], bytes(20))
        hdr = grh[20:]
        expect_bytes('IPv4 version/IHL', hdr[:1], b'\x45')
        expect_bytes('IPv4 protocol (UDP)', hdr[9:10], b'\x11')
        expect_bytes('IPv4 source', hdr[12:16],
                     ipaddress.ip_address(src).packed)
        expect_bytes('IPv4 destination', hdr[16:20],
                     ipaddress.ip_address(dst).packed)
    else:
        expect_bytes('IPv6 version', bytes([grh[0] >> 4]), b'\x06')
        expect_bytes('IPv6 next header (UDP)', grh[6:7], b'\x11')
        expect_bytes('IPv6 source', grh[8:24],
                     ipaddress.ip_address(src).packed)
        expect_bytes('IPv6 destination', grh[24:40],
                     ipaddress.ip_address(dst).packed)


def addr_of(gid):
    ip = ipaddress.ip_address(gid)
    return str(ip.ipv4_mapped or ip)


def datagram_test(size, fam=4, imm=None):
    def run(t):
        a, b = ud_pair(t, fam)
        ah = a.ah_to(t, b)
        src = a.mr(t, size, fill=size + 1)
        dst = b.mr(t, GRH + size + 64, fill=size + 2)
        before = dst.read(GRH + size + 64, 0)
        post_recv(b.qp, 0x20, sges(dst, [(0, GRH + size + 64)]))
        send_ud(a, ah, b.qpn, 0x10, sges(src, [(0, size)]), imm=imm)
        expect_wc(poll(a.scq, 1, 'sender')[0], 'sender', 0x10, OK,
                  e.IBV_WC_SEND, a.qpn)
        (wc,) = poll(b.rcq, 1, 'receiver')
        flags = e.IBV_WC_GRH | (e.IBV_WC_WITH_IMM if imm is not None else 0)
        expect_wc(wc, 'receiver', 0x20, OK, e.IBV_WC_RECV, b.qpn,
                  GRH + size, imm, flags)
        if wc.src_qp != a.qpn:
            raise Fail(f'src_qp {wc.src_qp:#x}, expected {a.qpn:#x}')
        got = dst.read(GRH + size + 64, 0)
        expect_grh(got[:GRH], fam, addr_of(a.gid), addr_of(b.gid))
        expect_bytes('payload', got[GRH:GRH + size], src.read(size, 0))
        expect_bytes('bytes after the datagram', got[GRH + size:],
                     before[GRH + size:])
    return run


for _size in (1, 1000, 4096):
    test(f'ud send: {_size} B over IPv4, GRH checked')(datagram_test(_size))
test('ud send: 4096 B over IPv6, GRH checked')(datagram_test(4096, fam=6))
test('ud send_imm: 100 B over IPv4')(datagram_test(100, imm=0x01020304))
test('ud send_imm: 0 B over IPv6')(datagram_test(0, fam=6, imm=0x0a0b0c0d))


@test('ud: wrong Q_Key: dropped and counted (qkey_violations), no '
      'completion; the right one is delivered')
def t_qkey(t):
    a, b = ud_pair(t)
    ah = a.ah_to(t, b)
    src = a.mr(t, 64, fill=3)
    dst = b.mr(t, 256)
    post_recv(b.qp, 0x21, sges(dst, [(0, 256)]))
    before = counters(b.dev)
    send_ud(a, ah, b.qpn, 0x11, sges(src, [(0, 64)]), qkey=QKEY ^ 1)
    expect_wc(poll(a.scq, 1, 'sender')[0], 'sender', 0x11)
    no_more(b.rcq, 'receiver CQ', 0.5)
    if delta(before, counters(b.dev), 'qkey_violations') != 1:
        raise Fail('qkey_violations did not count the wrong Q_Key')
    send_ud(a, ah, b.qpn, 0x12, sges(src, [(0, 64)]))
    expect_wc(poll(b.rcq, 1, 'receiver')[0], 'right Q_Key', 0x21, OK,
              e.IBV_WC_RECV, byte_len=GRH + 64)


@test('ud: a privileged Q_Key in the WR sends the QP\'s own Q_Key')
def t_privileged_qkey(t):
    # b's Q_Key is a's: the WR's privileged key must be replaced by it
    a, b = ud_pair(t)
    ah = a.ah_to(t, b)
    src = a.mr(t, 16, fill=4)
    dst = b.mr(t, 128)
    post_recv(b.qp, 0x22, sges(dst, [(0, 128)]))
    send_ud(a, ah, b.qpn, 0x13, sges(src, [(0, 16)]), qkey=0x80000005)
    expect_wc(poll(b.rcq, 1, 'receiver')[0], 'privileged Q_Key', 0x22, OK,
              e.IBV_WC_RECV, byte_len=GRH + 16)


@test('ud: longer than the port MTU: LOC_LEN_ERR on the sender, QP to SQE, '
      'nothing sent')
def t_too_long_send(t):
    a, b = ud_pair(t)
    ah = a.ah_to(t, b)
    src = a.mr(t, 4097, fill=5)
    before = counters(a.dev)
    send_ud(a, ah, b.qpn, 0x14, sges(src, [(0, 4097)]))
    expect_wc(poll(a.scq, 1, 'sender')[0], 'sender', 0x14,
              e.IBV_WC_LOC_LEN_ERR)
    expect_qp(a.qp, e.IBV_QPS_SQE, 'sender')
    if delta(before, counters(a.dev), 'sent_pkts'):
        raise Fail('a packet was sent')


@test('ud: no receive posted: dropped and counted (dropped_ud_msg)')
def t_no_recv(t):
    a, b = ud_pair(t)
    ah = a.ah_to(t, b)
    src = a.mr(t, 32, fill=6)
    before = counters(b.dev)
    send_ud(a, ah, b.qpn, 0x15, sges(src, [(0, 32)]))
    expect_wc(poll(a.scq, 1, 'sender')[0], 'sender', 0x15)
    no_more(b.rcq, 'receiver CQ', 0.5)
    if delta(before, counters(b.dev), 'dropped_ud_msg') != 1:
        raise Fail('dropped_ud_msg did not count the datagram')
    expect_qp(b.qp, e.IBV_QPS_RTS, 'receiver')


@test('ud: receive shorter than GRH + payload: dropped and counted, the '
      'receive kept for the next datagram')
def t_short_recv(t):
    a, b = ud_pair(t)
    ah = a.ah_to(t, b)
    src = a.mr(t, 100, fill=7)
    dst = b.mr(t, 256, fill=8)
    before = counters(b.dev)
    post_recv(b.qp, 0x23, sges(dst, [(0, GRH + 99)]))
    send_ud(a, ah, b.qpn, 0x16, sges(src, [(0, 100)]))
    expect_wc(poll(a.scq, 1, 'sender')[0], 'sender', 0x16)
    no_more(b.rcq, 'receiver CQ', 0.5)
    if delta(before, counters(b.dev), 'dropped_ud_msg') != 1:
        raise Fail('dropped_ud_msg did not count the datagram')
    expect_qp(b.qp, e.IBV_QPS_RTS, 'receiver')
    send_ud(a, ah, b.qpn, 0x18, sges(src, [(1, 99)]))
    expect_wc(poll(a.scq, 1, 'sender')[0], 'sender', 0x18)
    expect_wc(poll(b.rcq, 1, 'receiver')[0], 'the next datagram', 0x23, OK,
              e.IBV_WC_RECV, byte_len=GRH + 99)
    expect_bytes('its payload', dst.read(99, GRH), src.read(99, 1))


@test('ud: an AH of another PD: LOC_QP_OP_ERR, QP to SQE')
def t_other_pd_ah(t):
    a, b = ud_pair(t)
    other = PD(t.ctx(a.dev))
    t.hold(other)
    ah = a.ah_to(t, b, pd=other)
    src = a.mr(t, 8, fill=9)
    send_ud(a, ah, b.qpn, 0x17, sges(src, [(0, 8)]))
    expect_wc(poll(a.scq, 1, 'sender')[0], 'sender', 0x17,
              e.IBV_WC_LOC_QP_OP_ERR)
    expect_qp(a.qp, e.IBV_QPS_SQE, 'sender')


@test('ud: 100 datagrams in a row, each checked, in order')
def t_stream(t):
    a, b = ud_pair(t)
    ah = a.ah_to(t, b)
    src = a.mr(t, 4096, fill=10)
    dst = b.mr(t, 16 * (GRH + 4096))
    for start in range(0, 100, 16):
        n = min(16, 100 - start)
        for i in range(n):
            post_recv(b.qp, 0x100 + start + i,
                      sges(dst, [(i * (GRH + 4096), GRH + 4096)]))
        for i in range(n):
            k = start + i
            send_ud(a, ah, b.qpn, 0x200 + k,
                    sges(src, [(k % 13, 4096 - k % 13)]),
                    imm=k)
        poll(a.scq, n, 'sender batch')
        for i, wc in enumerate(poll(b.rcq, n, 'receiver batch')):
            k = start + i
            length = 4096 - k % 13
            expect_wc(wc, f'datagram {k}', 0x100 + k, OK, e.IBV_WC_RECV,
                      byte_len=GRH + length, imm=k)
            expect_bytes(f'datagram {k}',
                         dst.read(length, i * (GRH + 4096) + GRH),
                         src.read(length, k % 13))


if __name__ == '__main__':
    sys.exit(main(TESTS, __doc__))
