#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The sroce authors
"""Shared receive queues and QP destruction under traffic (pyverbs).

    srq_test.py [options] DEV0 DEV1

Senders on DEV0, receivers on DEV1.  SRQ traffic: several RC, UC or UD
QPs on DEV1 take their receive WQEs from one SRQ; every sender sends
distinct patterned messages (one and many packets, gathered from two SGEs,
scattered into three-SGE receive WQEs, with and without immediate, and an
RDMA WRITE with immediate that consumes a WQE without touching its
buffer).  Each receive completion's qp_num names the QP, its byte_len,
immediate and data match that sender's message, the bytes between the
SGEs stay untouched and every WQE is consumed exactly once.  The SRQ limit
(IBA 10.2.9.3): armed at L, no event while L or more WQEs
remain, exactly one IBV_EVENT_SRQ_LIMIT_REACHED when fewer remain, the
limit reads back 0, re-arming works.  RNR with an empty SRQ.  Destroying
QPs with traffic in flight (the sender's, directly or after ERR; the
receiver's while the sender streams; one of several QPs of an SRQ): the
destroy returns, completions are as libibverbs defines, nothing hangs,
and the devices carry a fresh data test afterwards.  Options as
rc_test.py's.  With SROCE_VOLUME=small in the environment (the VM
harness's small volume) the SRQ traffic tests use half the QPs, and the
tests that destroy a sender or one QP of an SRQ a quarter of the messages:
the same cases, less data.
"""

import random
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import RecvWR, SendWR

from rc_lib import (DEFAULTS, FLUSH, OK, SIG, Pair, Side, counters, delta,
                    expect_bytes, expect_qp, expect_wc, main, no_more,
                    one_send, pattern, poll, post, post_recv, sges, st)
from verbs_lib import (NO_EVENT_WAIT, PORT, QPS_NAMES, SMALL, Fail, check,
                       expect_eq, ib_event_fds, modify, new_event_fd,
                       readable, registry)

RC = e.IBV_QPT_RC
UC = e.IBV_QPT_UC
UD = e.IBV_QPT_UD
LW = e.IBV_ACCESS_LOCAL_WRITE
RW = e.IBV_ACCESS_REMOTE_WRITE
KIB = 1024
QKEY = 0x5151aaaa
GRH = 40
TESTS, test = registry()


# ------------------------------------------------------------- setup

class Conn:
    """One connected QP for rc_lib.Side.connect()."""
    connect = Side.connect

    def __init__(self, qp, dev, gid_index):
        self.qp = qp
        self.qpn = qp.qp_num
        self.dev = dev
        self.gid_index = gid_index


class Net:
    """A PD and CQs on each device, an SRQ on DEV1, and QPs connected in
    pairs: senders[i] on DEV0 <-> receivers[i] on DEV1, the receivers on
    the SRQ (or, with srq_wr=0, on receive queues of their own)."""

    def __init__(self, t, qp_type=RC, fam=4, srq_wr=255, srq_sge=4,
                 cqe=1023, send_wr=64, **kw):
        env = t.env
        self.t = t
        self.qp_type = qp_type
        self.dev0, self.dev1 = env.dev0, env.dev1
        self.gid0, self.gid1 = env.gid0[fam], env.gid1[fam]
        self.ctx0, self.ctx1 = t.ctx(env.dev0), t.ctx(env.dev1)
        self.pd0, self.pd1 = PD(self.ctx0), PD(self.ctx1)
        self.scq = CQ(self.ctx0, cqe, None, None, 0)
        self.rcq = CQ(self.ctx1, cqe, None, None, 0)
        # the receivers' own sends (none but RC ACKs, which make none)
        self.rscq = CQ(self.ctx1, 63, None, None, 0)
        t.hold(self.pd0, self.pd1, self.scq, self.rcq, self.rscq)
        self.srq = None
        if srq_wr:
            self.srq = SRQ(self.pd1, SrqInitAttr(SrqAttr(max_wr=srq_wr,
                                                         max_sge=srq_sge)))
            t.hold(self.srq)
        self.opts = dict(DEFAULTS)
        self.opts.update(qp_type=qp_type, psn=random.randrange(1 << 24),
                         **kw)
        if qp_type == UC:
            self.opts['qp_access'] = LW | RW
        self.send_wr = send_wr
        self.senders = []
        self.receivers = []

    def qp(self, pd, scq, rcq, srq, send_wr, recv_wr):
        cap = QPCap(max_send_wr=send_wr, max_recv_wr=recv_wr,
                    max_send_sge=4, max_recv_sge=4)
        qp = QP(pd, QPInitAttr(qp_type=self.qp_type, scq=scq, rcq=rcq,
                               srq=srq, cap=cap, sq_sig_all=0))
        self.t.hold(qp)
        return qp

    def pair(self, recv_wr=1, **kw):
        """A new connected sender/receiver pair (kw: Pair options other
        than the Net's); returns its index."""
        opts = {**self.opts, **kw}
        snd = Conn(self.qp(self.pd0, self.scq, self.scq, None, self.send_wr,
                           1), self.dev0, self.gid0[0])
        rcv = Conn(self.qp(self.pd1, self.rscq, self.rcq, self.srq, 4,
                           recv_wr), self.dev1, self.gid1[0])
        snd.connect(self.gid1[1], rcv.qpn, opts)
        rcv.connect(self.gid0[1], snd.qpn, opts)
        self.senders.append(snd)
        self.receivers.append(rcv)
        return len(self.senders) - 1

    def mr(self, pd, length, fill=None):
        mr = MR(pd, max(length, 1), LW | RW | e.IBV_ACCESS_REMOTE_READ)
        self.t.hold(mr)
        if fill is not None:
            data = pattern(max(length, 1), fill)
            mr.write(data, len(data), 0)
        return mr


def srq_post(srq, wr_id, sg):
    srq.post_recv(RecvWR(wr_id=wr_id, num_sge=len(sg), sg=sg))


def to_err(qp, what):
    modify(qp, (QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE),
           f'{what} ->ERR')


def qp_state(qp):
    attr, _ = qp.query(e.IBV_QP_STATE)
    return attr.qp_state


def open_with_async_fd(t, dev):
    """Opens t's context of dev; returns the fd of its async events."""
    if dev in t.ctxs:
        raise Fail(f'{dev} is already open: its async fd is unknown')
    before = ib_event_fds()
    t.ctx(dev)
    return new_event_fd(before, f'{dev} async events')


def async_events(ctx, fd, wait, more=0.5):
    """The async event types (acked) that arrive within wait seconds, or
    within more seconds after the first one, whichever ends first."""
    seen = []
    deadline = time.monotonic() + wait
    while readable(fd, max(deadline - time.monotonic(), 0)):
        event = ctx.get_async_event()
        seen.append(event.event_type)
        event.ack()
        deadline = min(deadline, time.monotonic() + more)
    return seen


def destroy(qp, what, limit=10.0):
    """Destroys qp; it must return 0 (pyverbs raises otherwise) in time."""
    start = time.monotonic()
    qp.close()
    took = time.monotonic() - start
    check(took < limit, f'destroying {what} took {took:.1f}s')


# ---------------------------------------------------- SRQ traffic (RC, UC)

# A receive WQE: three SGEs of one slot of the receive MR, with gaps.
SLOT = 40 * KIB
RECV_SGES = ((0, 700), (1000, 5000), (8000, 26000))
RECV_ROOM = sum(length for _, length in RECV_SGES)


def msg_plan(mtu, count):
    """(opcode, size) of each message a sender sends."""
    sizes = [1, 700, mtu + 1, 3 * mtu + 5, 9000, 20000, RECV_ROOM]
    plan = []
    for j in range(count - 1):
        op = e.IBV_WR_SEND_WITH_IMM if j % 3 == 1 else e.IBV_WR_SEND
        plan.append((op, sizes[j % len(sizes)]))
    plan.append((e.IBV_WR_RDMA_WRITE_WITH_IMM, 2000))
    return plan


def scattered(mr, slot, size):
    """The first size bytes of the receive WQE at slot, SGE by SGE."""
    out = b''
    for off, length in RECV_SGES:
        take = min(length, size - len(out))
        if take <= 0:
            break
        out += mr.read(take, slot * SLOT + off)
    return out


def post_msg(n, i, j, op, size, src, wdst):
    """Message j of sender i: its data is src[i] at j * SLOT."""
    base = j * SLOT
    if size > 1:
        half = size // 2
        sg = sges(src[i], [(base, half), (base + half, size - half)])
    else:
        sg = sges(src[i], [(base, size)])
    imm = (i << 16) | j if op != e.IBV_WR_SEND else None
    if op == e.IBV_WR_RDMA_WRITE_WITH_IMM:
        post(n.senders[i].qp, (i << 8) | j, op, sg, rkey=wdst.rkey,
             addr=wdst.buf + i * SLOT, imm=imm)
    else:
        post(n.senders[i].qp, (i << 8) | j, op, sg, imm=imm)


def check_recv(n, wc, i, j, op, size, src, rdst, wdst, old):
    what = f'QP {i} message {j} ({size} B) in WQE {wc.wr_id}'
    slot = wc.wr_id
    want = src[i].read(size, j * SLOT)
    if op == e.IBV_WR_RDMA_WRITE_WITH_IMM:
        expect_wc(wc, what, slot, OK, e.IBV_WC_RECV_RDMA_WITH_IMM,
                  n.receivers[i].qpn, size, (i << 16) | j, e.IBV_WC_WITH_IMM)
        expect_bytes(f'{what}: written data', wdst.read(size, i * SLOT),
                     want)
        expect_bytes(f'{what}: its receive buffer',
                     rdst.read(SLOT, slot * SLOT),
                     old[slot * SLOT:(slot + 1) * SLOT])
        return
    imm = (i << 16) | j if op == e.IBV_WR_SEND_WITH_IMM else None
    expect_wc(wc, what, slot, OK, e.IBV_WC_RECV, n.receivers[i].qpn, size,
              imm, e.IBV_WC_WITH_IMM if imm is not None else 0)
    expect_bytes(f'{what}: data', scattered(rdst, slot, size), want)


def expect_gaps(rdst, old, slots):
    """The bytes of each slot outside its SGEs are untouched."""
    ends = [off + length for off, length in RECV_SGES]
    starts = [off for off, _ in RECV_SGES[1:]] + [SLOT]
    for slot in slots:
        for end, start in zip(ends, starts):
            a, b = slot * SLOT + end, slot * SLOT + start
            expect_bytes(f'WQE {slot}: bytes {end}..{start} between its '
                         'SGEs', rdst.read(b - a, a), old[a:b])


def srq_traffic_test(qp_type, nqp, count, mtu=1024, fam=4):
    def run(t):
        n = Net(t, qp_type, fam=fam, mtu=mtu, send_wr=count)
        for _ in range(nqp):
            n.pair()
        plan = msg_plan(mtu, count)
        src = [n.mr(n.pd0, count * SLOT, fill=100 + i) for i in range(nqp)]
        wdst = n.mr(n.pd1, nqp * SLOT, fill=7)
        total = nqp * count
        rdst = n.mr(n.pd1, total * SLOT, fill=8)
        old = rdst.read(total * SLOT, 0)
        # post the WQEs in a shuffled order: any QP takes any of them
        slots = list(range(total))
        random.Random(total).shuffle(slots)
        for slot in slots:
            srq_post(n.srq, slot, sges(rdst, [(slot * SLOT + off, length)
                                              for off, length in RECV_SGES]))
        for j, (op, size) in enumerate(plan):
            for i in range(nqp):
                post_msg(n, i, j, op, size, src, wdst)
        swcs = poll(n.scq, total, 'senders', 60)
        for i in range(nqp):
            mine = [w for w in swcs if w.qp_num == n.senders[i].qpn]
            expect_eq(f'sender {i}: completions (wr_id order)',
                      [w.wr_id for w in mine],
                      [(i << 8) | j for j in range(count)])
            for w in mine:
                expect_wc(w, f'sender {i}', w.wr_id, OK)
        rwcs = poll(n.rcq, total, 'receivers (SRQ)', 60)
        by_qpn = {r.qpn: i for i, r in enumerate(n.receivers)}
        arrived = [0] * nqp
        for wc in rwcs:
            check(wc.status == OK, f'receive WQE {wc.wr_id}: status '
                  f'{st(wc.status)}')
            check(wc.qp_num in by_qpn, f'receive WQE {wc.wr_id}: qp_num '
                  f'{wc.qp_num:#x} is none of the receivers')
            i = by_qpn[wc.qp_num]
            j = arrived[i]
            arrived[i] += 1
            check(j < count, f'QP {i}: more than {count} receives')
            check_recv(n, wc, i, j, *plan[j], src, rdst, wdst, old)
        expect_eq('receives per QP', arrived, [count] * nqp)
        expect_eq('WQEs consumed (each once)',
                  sorted(w.wr_id for w in rwcs), list(range(total)))
        expect_gaps(rdst, old, range(total))
        no_more(n.rcq, 'receive CQ', 0.2)
        for i in range(nqp):
            expect_qp(n.receivers[i].qp, e.IBV_QPS_RTS, f'receiver {i}')
            expect_qp(n.senders[i].qp, e.IBV_QPS_RTS, f'sender {i}')
    return run


# the small volume: half the QPs on the SRQ (still several per SRQ), the
# same messages
_NQP = 4 if SMALL else 8
test(f'srq rc: {_NQP} QPs share one SRQ, 8 messages each (1 B..33 KiB, '
     'SEND/SEND_IMM/WRITE_IMM), 3-SGE WQEs, MTU 1024')(
    srq_traffic_test(RC, _NQP, 8))
test(f'srq rc: {_NQP // 2} QPs share one SRQ over IPv6 GIDs, MTU 4096')(
    srq_traffic_test(RC, _NQP // 2, 8, mtu=4096, fam=6))
test(f'srq uc: {_NQP // 2} QPs share one SRQ, 8 messages each, MTU 1024')(
    srq_traffic_test(UC, _NQP // 2, 8))


# ------------------------------------------------------------------ UD

def ud_up(qp, what):
    attr = QPAttr(qp_state=e.IBV_QPS_INIT)
    attr.pkey_index = 0
    attr.port_num = PORT
    attr.qkey = QKEY
    modify(qp, (attr, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
                e.IBV_QP_PORT | e.IBV_QP_QKEY), f'{what} ->INIT')
    modify(qp, (QPAttr(qp_state=e.IBV_QPS_RTR), e.IBV_QP_STATE),
           f'{what} ->RTR')
    attr = QPAttr(qp_state=e.IBV_QPS_RTS)
    attr.sq_psn = 0x20
    modify(qp, (attr, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN), f'{what} ->RTS')


UD_SGES = ((0, GRH), (100, 1000), (1200, 3200))
UD_SLOT = 4608


@test('srq ud: 4 UD QPs share one SRQ; datagrams of 1 B..4 KiB from one '
      'sender to each, GRH + 2-SGE payload, qp_num and src_qp checked')
def t_srq_ud(t):
    n = Net(t, UD)
    nqp, sizes = 4, [1, 100, 1024, 2047, 4096]
    snd = n.qp(n.pd0, n.scq, n.scq, None, 64, 1)
    ud_up(snd, 'sender')
    rcvs = [n.qp(n.pd1, n.rscq, n.rcq, n.srq, 4, 1) for _ in range(nqp)]
    for i, qp in enumerate(rcvs):
        ud_up(qp, f'receiver {i}')
    gr = GlobalRoute(dgid=GID(n.gid1[1]), hop_limit=64,
                     sgid_index=n.gid0[0])
    ah = AH(n.pd0, attr=AHAttr(port_num=PORT, is_global=1, gr=gr))
    t.hold(ah)
    total = nqp * len(sizes)
    src = n.mr(n.pd0, total * UD_SLOT, fill=31)
    rdst = n.mr(n.pd1, total * UD_SLOT, fill=32)
    old = rdst.read(total * UD_SLOT, 0)
    for slot in range(total):
        srq_post(n.srq, slot, sges(rdst, [(slot * UD_SLOT + off, length)
                                          for off, length in UD_SGES]))
    for j, size in enumerate(sizes):
        for i in range(nqp):
            k = i * len(sizes) + j
            wr = SendWR(wr_id=k, opcode=e.IBV_WR_SEND_WITH_IMM, num_sge=1,
                        sg=sges(src, [(k * UD_SLOT, size)]), send_flags=SIG)
            wr.imm_data = k
            wr.set_wr_ud(ah, rcvs[i].qp_num, QKEY)
            snd.post_send(wr)
    for wc in poll(n.scq, total, 'sender'):
        expect_wc(wc, f'sender WR {wc.wr_id}', wc.wr_id, OK, e.IBV_WC_SEND)
    seen = set()
    for wc in poll(n.rcq, total, 'receivers (SRQ)'):
        k = wc.imm_data
        check(0 <= k < total, f'WQE {wc.wr_id}: immediate {k:#x}')
        i, size = k // len(sizes), sizes[k % len(sizes)]
        what = f'datagram {k} ({size} B to QP {i}) in WQE {wc.wr_id}'
        check(k not in seen, f'{what}: delivered twice')
        seen.add(k)
        expect_wc(wc, what, wc.wr_id, OK, e.IBV_WC_RECV, rcvs[i].qp_num,
                  GRH + size, k, e.IBV_WC_GRH | e.IBV_WC_WITH_IMM)
        expect_eq(f'{what}: src_qp', wc.src_qp, snd.qp_num)
        base = wc.wr_id * UD_SLOT
        got = (rdst.read(1000, base + 100) +
               rdst.read(3200, base + 1200))[:size]
        expect_bytes(f'{what}: payload', got, src.read(size, k * UD_SLOT))
        untouched = (base + 100 + min(size, 1000), base + 100 + 1000) \
            if size < 1000 else (base + 1200 + size - 1000, base + 4400)
        expect_bytes(f'{what}: bytes after the payload',
                     rdst.read(untouched[1] - untouched[0], untouched[0]),
                     old[untouched[0]:untouched[1]])
    expect_eq('datagrams delivered', len(seen), total)
    no_more(n.rcq, 'receive CQ', 0.2)


# ----------------------------------------------------------- SRQ limit

def send_small(n, i, wr_id, count=1):
    """count 64 B SENDs from sender i, each received through the SRQ."""
    src = n.small_src
    for k in range(count):
        post(n.senders[i].qp, wr_id + k, e.IBV_WR_SEND,
             sges(src, [((wr_id + k) % 64, 64)]))
    for wc in poll(n.scq, count, f'sender {i}'):
        expect_wc(wc, f'sender {i}', wc.wr_id, OK)
    rwcs = poll(n.rcq, count, f'receiver {i}')
    for k, wc in enumerate(rwcs):
        expect_wc(wc, f'receive of WR {wr_id + k:#x}', wc.wr_id, OK,
                  e.IBV_WC_RECV, n.receivers[i].qpn, 64)
        expect_bytes(f'receive of WR {wr_id + k:#x}',
                     n.small_dst.read(64, wc.wr_id * 64),
                     src.read(64, (wr_id + k) % 64))
    return rwcs


@test('srq limit: armed at 8 with 31 WQEs: no event down to 8 left, '
      'exactly one SRQ_LIMIT_REACHED at 7, limit reads 0, re-arm at 20 '
      'fires again at 19')
def t_srq_limit(t):
    fd = open_with_async_fd(t, t.env.dev1)
    ctx = t.ctx(t.env.dev1)
    n = Net(t, RC, srq_wr=31)
    n.pair()
    n.pair()
    n.small_src = n.mr(n.pd0, 128, fill=41)
    n.small_dst = n.mr(n.pd1, 64 * 64, fill=42)
    depth = n.srq.query().max_wr
    expect_eq('SRQ depth', depth, 31)
    for slot in range(31):
        srq_post(n.srq, slot, sges(n.small_dst, [(slot * 64, 64)]))
    expect_eq('srq_limit before arming', n.srq.query().srq_limit, 0)
    n.srq.modify(SrqAttr(srq_limit=8), e.IBV_SRQ_LIMIT)
    expect_eq('srq_limit armed', n.srq.query().srq_limit, 8)
    # 23 receives, alternating QPs: 8 left, not below the limit
    for k in range(23):
        send_small(n, k % 2, 0x100 + k)
    got = async_events(ctx, fd, NO_EVENT_WAIT)
    expect_eq('async events with 8 WQEs left (limit 8)', got, [])
    expect_eq('srq_limit with 8 left', n.srq.query().srq_limit, 8)
    send_small(n, 1, 0x200)
    got = async_events(ctx, fd, 5.0)
    expect_eq('async events at 7 left', got,
              [e.IBV_EVENT_SRQ_LIMIT_REACHED])
    expect_eq('srq_limit after the event (disarmed)',
              n.srq.query().srq_limit, 0)
    for k in range(3):
        send_small(n, k % 2, 0x210 + k)
    expect_eq('async events at 4 left (disarmed)',
              async_events(ctx, fd, NO_EVENT_WAIT), [])
    # 4 left; 20 more WQEs in free slots: 24; re-arm at 20
    for slot in range(31, 51):
        srq_post(n.srq, slot, sges(n.small_dst, [(slot * 64, 64)]))
    n.srq.modify(SrqAttr(srq_limit=20), e.IBV_SRQ_LIMIT)
    expect_eq('srq_limit re-armed', n.srq.query().srq_limit, 20)
    for k in range(4):
        send_small(n, k % 2, 0x300 + k)
    expect_eq('async events at 20 left (limit 20)',
              async_events(ctx, fd, NO_EVENT_WAIT), [])
    send_small(n, 0, 0x310)
    expect_eq('async events at 19 left', async_events(ctx, fd, 5.0),
              [e.IBV_EVENT_SRQ_LIMIT_REACHED])
    expect_eq('srq_limit after the second event', n.srq.query().srq_limit,
              0)
    # the other 19 WQEs are all still there
    send_small(n, 1, 0x400, 19)
    expect_eq('async events at the end', async_events(ctx, fd, 0.2), [])


# ------------------------------------------------------------------ RNR

@test('srq rnr: empty SRQ, rnr_retry 0: RNR_RETRY_EXC_ERR, the SRQ QP '
      'stays in RTS and receives once WQEs are posted')
def t_srq_rnr_exceeded(t):
    n = Net(t, RC, rnr_retry=0, min_rnr_timer=1)
    n.pair()
    n.pair()
    c0 = counters(t.env.dev0)
    src = n.mr(n.pd0, 4096, fill=51)
    dst = n.mr(n.pd1, 4096, fill=52)
    post(n.senders[0].qp, 0x10, e.IBV_WR_SEND, sges(src, [(0, 3000)]))
    post(n.senders[0].qp, 0x11, e.IBV_WR_SEND, sges(src, [(0, 10)]))
    wcs = poll(n.scq, 2, 'sender 0')
    expect_wc(wcs[0], 'sender 0', 0x10, e.IBV_WC_RNR_RETRY_EXC_ERR)
    expect_wc(wcs[1], 'the WR after it', 0x11, FLUSH)
    expect_qp(n.senders[0].qp, e.IBV_QPS_ERR, 'sender 0')
    # ib_core serves hw_counters from a cache refreshed every 10 ms
    time.sleep(0.05)
    check(delta(c0, counters(t.env.dev0), 'retry_rnr_exceeded_err') >= 1,
          'retry_rnr_exceeded_err did not move')
    no_more(n.rcq, 'receive CQ', 0.2)
    expect_qp(n.receivers[0].qp, e.IBV_QPS_RTS, 'receiver 0')
    # the SRQ and its other QP work
    srq_post(n.srq, 0x20, sges(dst, [(0, 4096)]))
    post(n.senders[1].qp, 0x12, e.IBV_WR_SEND, sges(src, [(100, 3000)]))
    expect_wc(poll(n.scq, 1, 'sender 1')[0], 'sender 1', 0x12)
    expect_wc(poll(n.rcq, 1, 'receiver 1')[0], 'receiver 1', 0x20, OK,
              e.IBV_WC_RECV, n.receivers[1].qpn, 3000)
    expect_bytes('data', dst.read(3000, 0), src.read(3000, 100))


@test('srq rnr: empty SRQ, rnr_retry 7: the SEND waits, a WQE posted '
      '0.5 s later lets it through, RNR NAKs counted')
def t_srq_rnr_late(t):
    n = Net(t, RC, rnr_retry=7, min_rnr_timer=14)
    n.pair()
    c1 = counters(t.env.dev1)
    src = n.mr(n.pd0, 8192, fill=53)
    dst = n.mr(n.pd1, 8192, fill=54)
    post(n.senders[0].qp, 0x30, e.IBV_WR_SEND, sges(src, [(0, 5000)]))
    time.sleep(0.5)
    got, early = n.scq.poll(1)
    check(not got, 'sender completed without a WQE: status '
          f'{st(early[0].status) if early else ""}')
    srq_post(n.srq, 0x31, sges(dst, [(0, 2000), (4000, 4000)]))
    expect_wc(poll(n.scq, 1, 'sender')[0], 'sender', 0x30)
    expect_wc(poll(n.rcq, 1, 'receiver')[0], 'receiver', 0x31, OK,
              e.IBV_WC_RECV, n.receivers[0].qpn, 5000)
    expect_bytes('data', dst.read(2000, 0) + dst.read(3000, 4000),
                 src.read(5000, 0))
    check(delta(c1, counters(t.env.dev1), 'send_rnr_err') >= 1,
          'send_rnr_err did not move')


def rnr_wait_test(size, wait):
    def run(t):
        n = Net(t, RC, rnr_retry=7, min_rnr_timer=12, timeout=14,
                retry_cnt=7)
        n.pair()
        src = n.mr(n.pd0, size, fill=55)
        dst = n.mr(n.pd1, size, fill=56)
        post(n.senders[0].qp, 0x40, e.IBV_WR_SEND, sges(src, [(0, size)]))
        time.sleep(wait)
        got, early = n.scq.poll(1)
        check(not got, f'sender completed within {wait}s without a WQE: '
              f'status {st(early[0].status) if early else ""}')
        srq_post(n.srq, 0x41, sges(dst, [(0, size)]))
        expect_wc(poll(n.scq, 1, 'sender')[0], 'sender', 0x40)
        expect_wc(poll(n.rcq, 1, 'receiver')[0], 'receiver', 0x41, OK,
                  e.IBV_WC_RECV, n.receivers[0].qpn, size)
        expect_bytes('data', dst.read(size, 0), src.read(size, 0))
    return run


test('srq rnr: a 16 KiB SEND waits 2 s (4x the ACK timeout budget of '
     '8 x 67 ms) in RNR for a WQE: RNR waits do not use up retry_cnt')(
    rnr_wait_test(16 * KIB, 2.0))


# --------------------------------------------- destroy with traffic

def fresh_pair_test(t, what):
    """A new RC pair on the same devices carries a 100,000 B SEND."""
    p = Pair(t, mtu=1024)
    src, dst, _ = one_send(t, p, 100000, 0x7f0, 0x7f1)
    expect_wc(poll(p.a.scq, 1, f'{what}: fresh pair sender')[0],
              f'{what}: fresh pair sender', 0x7f0, OK, e.IBV_WC_SEND)
    expect_wc(poll(p.b.rcq, 1, f'{what}: fresh pair receiver')[0],
              f'{what}: fresh pair receiver', 0x7f1, OK, e.IBV_WC_RECV,
              p.b.qpn, 100000)
    expect_bytes(f'{what}: fresh pair data', dst.read(100000, 0),
                 src.read(100000, 0))


def drain(cq, limit, settle=0.5):
    """Everything the CQ yields until it stays empty for settle seconds."""
    wcs = []
    quiet = time.monotonic()
    deadline = quiet + 30
    while time.monotonic() - quiet < settle and time.monotonic() < deadline:
        _, batch = cq.poll(limit)
        if batch:
            wcs.extend(batch)
            quiet = time.monotonic()
        else:
            time.sleep(0.01)
    return wcs


def expect_prefix_then_flush(wcs, wr_ids, what, whole, first=(FLUSH,)):
    """wcs: the first len(wcs) of wr_ids in order, SUCCESS, then one of the
    statuses first, then FLUSH; whole: all of them must be there.  Returns
    the number of successes."""
    ids = [w.wr_id for w in wcs]
    expect_eq(f'{what}: completed wr_ids (in order)', ids,
              list(wr_ids[:len(ids)]))
    if whole:
        expect_eq(f'{what}: completions', len(wcs), len(wr_ids))
    ok = 0
    while ok < len(wcs) and wcs[ok].status == OK:
        ok += 1
    for k, w in enumerate(wcs[ok:]):
        want = first if k == 0 else (FLUSH,)
        check(w.status in want, f'{what}: wr_id {w.wr_id:#x} status '
              f'{st(w.status)} after {ok} successes, expected '
              f'{" or ".join(st(x) for x in want)}')
    return ok


RETRY_ERRS = (e.IBV_WC_RETRY_EXC_ERR, e.IBV_WC_RNR_RETRY_EXC_ERR,
              e.IBV_WC_REM_INV_REQ_ERR, e.IBV_WC_REM_OP_ERR)


# The small volume queues 16 WRs (SEND 8 in RNR): still WRs behind the
# gate and completed ones before it when the QP goes.
COUNT = 16 if SMALL else 64
GATE = COUNT // 2
BIG = 64 * KIB


def destroy_sender_test(opcode, via_err):
    """COUNT 64 KiB WRs on the sender; WR GATE is a SEND with no receive
    posted for it (RNR, retried forever), so however fast the devices,
    WRs are outstanding when the QP is destroyed."""
    def run(t):
        n = Net(t, RC, srq_wr=0, send_wr=COUNT, mtu=1024)
        n.pair(recv_wr=COUNT)
        snd, rcv = n.senders[0], n.receivers[0]
        src = n.mr(n.pd0, BIG, fill=61)
        dst = n.mr(n.pd1, COUNT * BIG + 4096, fill=62)
        old = dst.read(COUNT * BIG + 4096, 0)
        if opcode == e.IBV_WR_SEND:
            for k in range(GATE):
                post_recv(rcv.qp, 0x1000 + k, sges(dst, [(k * BIG, BIG)]))
        ids = [0x100 + k for k in range(COUNT)]
        for k in range(COUNT):
            if opcode == e.IBV_WR_SEND or k == GATE:
                post(snd.qp, ids[k], e.IBV_WR_SEND, sges(src, [(0, BIG)]))
            else:
                post(snd.qp, ids[k], opcode, sges(src, [(0, BIG)]),
                     rkey=dst.rkey, addr=dst.buf + k * BIG)
        if via_err:
            to_err(snd.qp, 'sender')
            # ERR flushes everything not completed: all COUNT complete
            swcs = poll(n.scq, COUNT, 'sender after ->ERR')
            ok = expect_prefix_then_flush(swcs, ids, 'sender', True)
            destroy(snd.qp, 'the sender QP in ERR')
        else:
            destroy(snd.qp, f'the sender QP with {COUNT} WRs queued')
            swcs = drain(n.scq, COUNT)
            ok = expect_prefix_then_flush(swcs, ids, 'sender', False)
        check(ok <= GATE, f'{ok} WRs succeeded, but WR {GATE} (a SEND) had '
              'no receive')
        no_more(n.scq, 'sender CQ after destroy', 0.2)
        rwcs = drain(n.rcq, COUNT)
        if opcode == e.IBV_WR_SEND:
            got = expect_prefix_then_flush(rwcs, [0x1000 + k for k in
                                                  range(GATE)],
                                           'receiver', False)
            check(got >= ok, f'the sender saw {ok} SENDs acknowledged, the '
                  f'receiver completed {got}')
            for k in range(got):
                expect_eq(f'receive {k} byte_len', rwcs[k].byte_len, BIG)
                expect_bytes(f'receive {k}', dst.read(BIG, k * BIG),
                             src.read(BIG, 0))
        else:
            expect_eq('receiver completions for WRITEs', len(rwcs), 0)
            for k in range(ok):
                expect_bytes(f'WRITE {k} (acknowledged)',
                             dst.read(BIG, k * BIG), src.read(BIG, 0))
            # the responder discards what follows a request it RNR-NAKed
            start = (GATE + 1) * BIG
            expect_bytes(f'targets of the WRITEs after WR {GATE}',
                         dst.read(COUNT * BIG - start, start),
                         old[start:COUNT * BIG])
        expect_bytes('bytes after the last target', dst.read(4096, COUNT *
                                                             BIG),
                     old[COUNT * BIG:])
        state = qp_state(rcv.qp)
        check(state in (e.IBV_QPS_RTS, e.IBV_QPS_ERR), 'receiver QP state '
              f'{QPS_NAMES.get(state, state)}')
        destroy(rcv.qp, 'the receiver QP')
        fresh_pair_test(t, 'after destroy')
    return run


for _op, _opn in ((e.IBV_WR_RDMA_WRITE, 'WRITEs'), (e.IBV_WR_SEND, 'SENDs')):
    test(f'destroy: sender QP with {COUNT} x 64 KiB {_opn} queued (SEND '
         f'{GATE} in RNR), destroyed directly: returns, completions a '
         'prefix, devices usable')(destroy_sender_test(_op, False))
    test(f'destroy: sender QP with {COUNT} x 64 KiB {_opn} queued (SEND '
         f'{GATE} in RNR), moved to ERR then destroyed: SUCCESS prefix + '
         'FLUSH, devices usable')(destroy_sender_test(_op, True))


@test('destroy: receiver QP destroyed while the sender streams 256 x 64 KiB '
      'SENDs (128 receives posted): RETRY_EXC_ERR within seconds, the rest '
      'flush')
def t_destroy_receiver(t):
    count = 256
    n = Net(t, RC, srq_wr=0, send_wr=count, mtu=1024, timeout=12,
            retry_cnt=2)
    n.pair(recv_wr=count)
    snd, rcv = n.senders[0], n.receivers[0]
    src = n.mr(n.pd0, BIG, fill=71)
    dst = n.mr(n.pd1, 8 * BIG, fill=72)
    # the SENDs beyond the receives wait in RNR: never all done in time
    for k in range(count // 2):
        post_recv(rcv.qp, 0x2000 + k, sges(dst, [((k % 8) * BIG, BIG)]))
    ids = [0x300 + k for k in range(count)]
    for k in range(count):
        post(snd.qp, ids[k], e.IBV_WR_SEND, sges(src, [(0, BIG)]))
    poll(n.rcq, 1, 'first receive')
    destroy(rcv.qp, 'the receiver QP')
    start = time.monotonic()
    swcs = []
    while len(swcs) < count and time.monotonic() - start < 30:
        _, batch = n.scq.poll(count - len(swcs))
        swcs.extend(batch)
        if not batch:
            time.sleep(0.01)
    took = time.monotonic() - start
    expect_eq('sender completions', len(swcs), count)
    expect_eq('sender wr_ids in order', [w.wr_id for w in swcs], ids)
    ok = 0
    while swcs[ok].status == OK:
        ok += 1
        check(ok <= count // 2, f'{ok} SENDs succeeded with '
              f'{count // 2} receives posted')
    check(swcs[ok].status in RETRY_ERRS,
          f'first failed SEND {swcs[ok].wr_id:#x}: {st(swcs[ok].status)}')
    for w in swcs[ok + 1:]:
        expect_wc(w, 'SEND after the failure', w.wr_id, FLUSH)
    check(took < 10, f'sender failed after {took:.1f}s')
    expect_qp(snd.qp, e.IBV_QPS_ERR, 'sender')
    destroy(snd.qp, 'the sender QP')
    fresh_pair_test(t, 'after destroy')


# The messages of QP 0, of each other QP, and the WQEs posted before QP 0
# is destroyed (fewer than QP 0 alone needs); a quarter at the small volume.
Q0_MSGS, OTHER_MSGS, FIRST_WQES = (32, 12, 24) if SMALL else (128, 48, 100)


@test(f'destroy: one of 4 SRQ QPs destroyed while it receives {Q0_MSGS} x '
      f'64 KiB and 3 others {OTHER_MSGS} x 16 KiB ({FIRST_WQES} WQEs, the '
      'rest posted after): the others and the SRQ keep working, a new QP on '
      'the SRQ receives')
def t_destroy_srq_qp(t):
    nqp, count, size = 4, OTHER_MSGS, 16 * KIB
    n = Net(t, RC, srq_wr=1023, send_wr=128, mtu=1024, timeout=18,
            min_rnr_timer=16)
    # QP 0's sender gives up within a second; the others' (1 s ACK timeout,
    # 7 retries, 2.56 ms RNR waits) ride out a debug kernel under TCG
    n.pair(timeout=12, retry_cnt=2)
    for _ in range(1, nqp):
        n.pair()
    src = [n.mr(n.pd0, count * size, fill=80 + i) for i in range(nqp)]
    src[0] = n.mr(n.pd0, BIG, fill=80)
    wqes = (nqp - 1) * count + Q0_MSGS
    dst = n.mr(n.pd1, wqes * BIG, fill=85)
    # fewer WQEs than QP 0 alone needs: however fast the devices, its
    # stream is not over when it is destroyed (the others wait in RNR
    # for the rest, posted after the destroy)
    first = FIRST_WQES
    for slot in range(first):
        srq_post(n.srq, slot, sges(dst, [(slot * BIG, BIG)]))
    for k in range(Q0_MSGS):
        post(n.senders[0].qp, k, e.IBV_WR_SEND, sges(src[0], [(0, BIG)]))
        if k >= count:
            continue
        for i in range(1, nqp):
            post(n.senders[i].qp, (i << 8) | k, e.IBV_WR_SEND,
                 sges(src[i], [(k * size, size)]))
    # destroy receiver 0 once its first message has arrived
    rwcs = []
    deadline = time.monotonic() + 20
    while not any(w.qp_num == n.receivers[0].qpn for w in rwcs):
        check(time.monotonic() < deadline, 'no receive on QP 0 within 20s')
        _, batch = n.rcq.poll(16)
        rwcs.extend(batch)
    destroy(n.receivers[0].qp, 'receiver 0 (on the SRQ)')
    for slot in range(first, wqes):
        srq_post(n.srq, slot, sges(dst, [(slot * BIG, BIG)]))
    swcs = drain(n.scq, 256, settle=1.0)
    rwcs += drain(n.rcq, wqes, settle=0.5)
    # senders 1..3: every SEND succeeded, in order
    for i in range(1, nqp):
        mine = [w for w in swcs if w.qp_num == n.senders[i].qpn]
        expect_eq(f'sender {i} wr_ids', [w.wr_id for w in mine],
                  [(i << 8) | k for k in range(count)])
        for w in mine:
            expect_wc(w, f'sender {i}', w.wr_id, OK)
    mine = [w for w in swcs if w.qp_num == n.senders[0].qpn]
    ok0 = expect_prefix_then_flush(mine, list(range(Q0_MSGS)), 'sender 0',
                                   True, RETRY_ERRS)
    check(ok0 <= first, f'sender 0: {ok0} SENDs succeeded with {first} '
          'WQEs posted')
    by_qpn = {r.qpn: i for i, r in enumerate(n.receivers)}
    arrived = [0] * nqp
    used = set()
    for wc in rwcs:
        check(wc.wr_id not in used, f'WQE {wc.wr_id} completed twice')
        used.add(wc.wr_id)
        i = by_qpn.get(wc.qp_num)
        if i == 0 or wc.status != OK:
            # what the destroyed QP completed before its destruction
            check(i == 0, f'WQE {wc.wr_id}: status {st(wc.status)} on '
                  f'qp_num {wc.qp_num:#x}')
            if wc.status == OK:
                expect_wc(wc, f'QP 0 WQE {wc.wr_id}', wc.wr_id, OK,
                          e.IBV_WC_RECV, byte_len=BIG)
                expect_bytes(f'QP 0 WQE {wc.wr_id}', dst.read(BIG, wc.wr_id *
                                                              BIG),
                             src[0].read(BIG, 0))
            else:
                expect_wc(wc, f'QP 0 WQE {wc.wr_id}', wc.wr_id, FLUSH)
            continue
        check(i is not None, f'WQE {wc.wr_id}: qp_num {wc.qp_num:#x}')
        k = arrived[i]
        arrived[i] += 1
        expect_wc(wc, f'QP {i} message {k}', wc.wr_id, OK, e.IBV_WC_RECV,
                  n.receivers[i].qpn, size)
        expect_bytes(f'QP {i} message {k}', dst.read(size, wc.wr_id * BIG),
                     src[i].read(size, k * size))
    expect_eq('receives of QPs 1..3', arrived[1:], [count] * (nqp - 1))
    # the SRQ keeps working: a new QP on it and an old one receive
    idx = n.pair()
    fresh = n.mr(n.pd1, 2 * 8192, fill=86)
    srq_post(n.srq, 0x5000, sges(fresh, [(0, 8192)]))
    srq_post(n.srq, 0x5001, sges(fresh, [(8192, 8192)]))
    for i, wr_id in ((idx, 0x600), (1, 0x601)):
        post(n.senders[i].qp, wr_id, e.IBV_WR_SEND,
             sges(src[1], [(0, 5000)]))
        expect_wc(poll(n.scq, 1, f'sender {i} after')[0],
                  f'sender {i} after', wr_id)
        (wc,) = poll(n.rcq, 1, f'receiver {i} after')
        # WQEs left over from the stream come first
        check(wc.status == OK and wc.qp_num == n.receivers[i].qpn and
              wc.byte_len == 5000, f'receiver {i} after: WQE {wc.wr_id} '
              f'status {st(wc.status)} qp_num {wc.qp_num:#x} byte_len '
              f'{wc.byte_len}')
        buf = (fresh.read(5000, (wc.wr_id - 0x5000) * 8192)
               if wc.wr_id >= 0x5000 else dst.read(5000, wc.wr_id * BIG))
        expect_bytes(f'receiver {i} after: data', buf, src[1].read(5000, 0))


# ------------------------------------------------------------- counters

@test('counters: an SRQ exchange of known size moves packets exactly, no '
      'error counter moves, all counters sane')
def t_counters(t):
    n = Net(t, RC, mtu=1024, timeout=18)
    for _ in range(4):
        n.pair()
    sizes = [1, 1024, 1025, 5000]
    src = n.mr(n.pd0, 8192, fill=91)
    dst = n.mr(n.pd1, 16 * 8192, fill=92)
    for slot in range(16):
        srq_post(n.srq, slot, sges(dst, [(slot * 8192, 8192)]))
    c0, c1 = counters(t.env.dev0), counters(t.env.dev1)
    for i in range(4):
        for k, size in enumerate(sizes):
            post(n.senders[i].qp, (i << 8) | k, e.IBV_WR_SEND,
                 sges(src, [(0, size)]))
    for wc in poll(n.scq, 16, 'senders'):
        expect_wc(wc, 'sender', wc.wr_id, OK)
    for wc in poll(n.rcq, 16, 'receivers'):
        expect_wc(wc, 'receive', wc.wr_id, OK, e.IBV_WC_RECV)
        expect_bytes(f'WQE {wc.wr_id}', dst.read(wc.byte_len,
                                                 wc.wr_id * 8192),
                     src.read(wc.byte_len, 0))
    time.sleep(0.2)
    a1, b1 = counters(t.env.dev0), counters(t.env.dev1)
    pkts = 4 * sum(max(1, -(-s // 1024)) for s in sizes)
    expect_eq(f'{t.env.dev0} sent_pkts delta', delta(c0, a1, 'sent_pkts'),
              pkts)
    expect_eq(f'{t.env.dev1} rcvd_pkts delta', delta(c1, b1, 'rcvd_pkts'),
              pkts)
    for dev, before, after in ((t.env.dev0, c0, a1), (t.env.dev1, c1, b1)):
        for name in ('send_rnr_err', 'rcvd_rnr_err', 'retry_exceeded_err',
                     'retry_rnr_exceeded_err', 'completer_retry_err',
                     'duplicate_request', 'out_of_seq_request',
                     'rcvd_seq_err', 'icrc_err', 'malformed_pkts',
                     'dropped_no_qp', 'dropped_qp_state', 'dropped_nomem'):
            if name in after:
                expect_eq(f'{dev} {name} delta', delta(before, after, name),
                          0)
        for name, val in after.items():
            check(0 <= val < 1 << 48, f'{dev} {name} = {val}')


if __name__ == '__main__':
    sys.exit(main(TESTS, __doc__))
