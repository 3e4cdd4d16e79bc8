#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The sroce authors
"""verbs_test.py's tests of the device, its port and GIDs, PDs and CQs
(sizes, flushes, resize, completion events, overflow and the SRQ's last
WQE event). verbs_test.py imports this module before it registers its
own tests, so that these run first.
"""

import time

import pyverbs.enums as e
from pyverbs.cq import CQ, CompChannel
from pyverbs.mr import MR
from pyverbs.pd import PD

from verbs_fixture import (EINVAL, FLUSH, LW, RC, SETTLE, UD, flushed_recvs,
                           make_srq, setup, test, to_err)
from verbs_lib import (EVENT_TIMEOUT, NO_EVENT_WAIT, PORT, QPS_NAMES,
                       QPT_NAMES, Fail, bring_up, check, create_qp, depth,
                       expect_completions, expect_eq, expect_errno,
                       expect_no_more, fmt, ib_event_fds, mine, modify,
                       netdev_mtu, new_event_fd, poll_n, post_recvs,
                       post_sends, readable, restrack, rtr_attr, rts_attr)


# ----------------------------------------------------------- device, port

@test('device: query_device reports the sroce limits and capabilities')
def t_device(t):
    attr = t.ctx.query_device()
    want = {'vendor_id': 0xffffff, 'max_qp_wr': 32768, 'max_sge': 63,
            'max_cqe': 131071, 'max_qp_rd_atom': 128,
            'max_qp_init_rd_atom': 128, 'atomic_caps': e.IBV_ATOMIC_HCA,
            'max_qp': 131072, 'max_cq': 65536, 'max_mr': 262144,
            'max_pd': 65536, 'max_mw': 65536, 'max_ah': 65536,
            'max_srq': 65536, 'max_srq_wr': 32768, 'max_srq_sge': 63,
            'phys_port_cnt': 1}
    bad = [f'{k} {fmt(getattr(attr, k))} (expected {fmt(v)})'
           for k, v in want.items() if getattr(attr, k) != v]
    for flag in ('MEM_WINDOW', 'MEM_WINDOW_TYPE_2B', 'MEM_MGT_EXTENSIONS',
                 'SRQ_RESIZE', 'RC_RNR_NAK_GEN'):
        if not attr.device_cap_flags & getattr(e, 'IBV_DEVICE_' + flag):
            bad.append(f'device_cap_flags {attr.device_cap_flags:#x} lacks '
                       f'IBV_DEVICE_{flag}')
    check(not bad, '; '.join(bad))


@test('port: ACTIVE, Ethernet, active_mtu 1024 at netdev MTU 1500')
def t_port(t):
    mtu = netdev_mtu(t.env.netdev)
    check(mtu == 1500, f'{t.env.netdev} has MTU {mtu}, the test needs 1500')
    port = t.ctx.query_port(PORT)
    want = {'state': e.IBV_PORT_ACTIVE, 'phys_state': 5,
            'active_mtu': e.IBV_MTU_1024, 'max_mtu': e.IBV_MTU_4096,
            'link_layer': e.IBV_LINK_LAYER_ETHERNET, 'pkey_tbl_len': 1,
            'gid_tbl_len': 256, 'max_msg_sz': 1 << 30}
    bad = [f'{k} {fmt(getattr(port, k))} (expected {fmt(v)})'
           for k, v in want.items() if getattr(port, k) != v]
    check(not bad, '; '.join(bad))
    expect_eq('P_Key index 0', t.ctx.query_pkey(PORT, 0), 0xffff)


@test('port: the GID in use is an IPv4-mapped RoCE v2 entry')
def t_gid(t):
    gid = t.ctx.query_gid(PORT, t.env.gid_index).gid
    for who, val in (('own', gid), ('peer', t.env.peer_gid)):
        check(val.startswith('0000:0000:0000:0000:0000:ffff:'),
              f'{who} GID index {t.env.gid_index} is {val}, not IPv4-mapped')
    if t.env.peer_dev:
        check(t.env.peer_gid != gid, f'{t.env.peer_dev} has our GID {gid}')
    entry = t.ctx.query_gid_ex(PORT, t.env.gid_index)
    expect_eq('GID type (ibv_query_gid_ex)', entry.gid_type,
              e.IBV_GID_TYPE_ROCE_V2)
    with open(f'/sys/class/net/{t.env.netdev}/ifindex', encoding='ascii') as f:
        expect_eq('GID netdev ifindex', entry.ndev_ifindex, int(f.read()))


# ---------------------------------------------------------------------- PD

@test('pd: 64 PDs allocated, listed by restrack, deallocated')
def t_pd_many(t):
    pds = [PD(t.ctx) for _ in range(64)]
    expect_eq('PDs of this process in restrack',
              len(mine(restrack('pd', t.env.dev))), 64)
    handles = {pd.handle for pd in pds}
    expect_eq('distinct PD handles', len(handles), 64)
    for pd in pds:
        pd.close()
    expect_eq('PDs of this process after dealloc',
              len(mine(restrack('pd', t.env.dev))), 0)


# ---------------------------------------------------------------------- CQ

@test('cq: depth reported is roundup_pow_of_two(cqe + 1) - 1')
def t_cq_sizes(t):
    bad = []
    for cqe in (1, 2, 3, 4, 100, 131071):
        cq = CQ(t.ctx, cqe, None, None, 0)
        if cq.cqe != depth(cqe):
            bad.append(f'cqe {cqe} -> {cq.cqe} (expected {depth(cqe)})')
        cq.close()
    check(not bad, '; '.join(bad))


@test('cq: cqe 0, -1 and 131072 are refused with EINVAL')
def t_cq_bad_sizes(t):
    for cqe in (0, -1, 131072):
        expect_errno(f'create_cq cqe {cqe}', EINVAL,
                     CQ, t.ctx, cqe, None, None, 0)


@test('cq: comp_vector >= num_comp_vectors is refused with EINVAL')
def t_cq_vector(t):
    nvec = t.ctx.num_comp_vectors
    check(nvec >= 1, f'num_comp_vectors is {nvec}')
    CQ(t.ctx, 7, None, None, nvec - 1).close()
    expect_errno(f'create_cq comp_vector {nvec}', EINVAL,
                 CQ, t.ctx, 7, None, None, nvec)


def recv_flush_test(qpt, state):
    def run(t):
        pd, cq, mr = setup(t)
        qp, _ = create_qp(pd, cq, qpt)
        bring_up(qp, qpt, t.env, state)
        ids = [0x1000 + i for i in range(8)]
        post_recvs(qp, mr, ids)
        got, _ = cq.poll(1)
        check(got == 0, 'a receive completed before the QP went to ERR')
        to_err(qp)
        expect_completions(poll_n(cq, 8), 'flushed receives', ids,
                           qp.qp_num, FLUSH)
        expect_no_more(cq, 'after the flush')
    return run


for _qpt, _st in ((RC, e.IBV_QPS_INIT), (RC, e.IBV_QPS_RTR),
                  (RC, e.IBV_QPS_RTS), (UD, e.IBV_QPS_RTS)):
    test(f'cq: {QPT_NAMES[_qpt]} receives posted in {QPS_NAMES[_st]} flush '
         'in order on ->ERR')(recv_flush_test(_qpt, _st))


@test('qp: post_recv in RESET fails with EINVAL')
def t_recv_reset(t):
    pd, cq, mr = setup(t)
    qp, _ = create_qp(pd, cq, RC)
    expect_errno('post_recv in RESET', EINVAL, post_recvs, qp, mr, [1])


@test('cq: sends outstanding in RTS flush in order on ->ERR')
def t_send_flush(t):
    pd, cq, mr = setup(t)
    rcq = CQ(t.ctx, 15, None, None, 0)
    qp, _ = create_qp(pd, cq, RC, rcq=rcq)
    # The SENDs go on the wire to a peer that does not exist. A Local ACK
    # Timeout of 0 is infinite (ibv_modify_qp(3)): nothing can complete
    # them (no ACK, no retry exhaustion) before the flush.
    bring_up(qp, RC, t.env, e.IBV_QPS_RTS, timeout=0)
    ids = [0x2000 + i for i in range(6)]
    post_sends(qp, mr, ids)
    time.sleep(0.2)
    got, _ = cq.poll(1)
    check(got == 0, 'a send completed although no peer answers and the '
          'ACK timeout is infinite')
    to_err(qp)
    expect_completions(poll_n(cq, 6), 'flushed sends', ids, qp.qp_num, FLUSH)
    expect_no_more(cq, 'after the flush')
    expect_no_more(rcq, 'receive CQ', wait=0)


@test('qp: post_send in RESET and INIT fails with EINVAL')
def t_send_not_ready(t):
    pd, cq, mr = setup(t)
    for state in (e.IBV_QPS_RESET, e.IBV_QPS_INIT):
        qp, _ = create_qp(pd, cq, RC)
        if state == e.IBV_QPS_INIT:
            bring_up(qp, RC, t.env, state)
        expect_errno(f'post_send in {QPS_NAMES[state]}', EINVAL,
                     post_sends, qp, mr, [7])
        if state == e.IBV_QPS_INIT:
            # The refused WQE was dropped: it neither runs in RTS nor
            # flushes on ->ERR.
            modify(qp, rtr_attr(RC, t.env, qp.qp_num), 'INIT->RTR')
            modify(qp, rts_attr(RC), 'RTR->RTS')
            to_err(qp)
            expect_no_more(cq, 'after the refused post_send, RTS and ERR')
        qp.close()


def resize_keeps_test(first, count, new, want_cqe):
    def run(t):
        cq = CQ(t.ctx, first, None, None, 0)
        qp, ids = flushed_recvs(t, cq, count)
        time.sleep(SETTLE)
        cq.resize(new)
        expect_eq(f'cqe after resize to {new}', cq.cqe, want_cqe)
        expect_completions(poll_n(cq, count), 'CQEs across the resize', ids,
                           qp.qp_num, FLUSH)
        expect_no_more(cq, 'after the resize')
    return run


test('cq: resize up keeps queued CQEs in order')(
    resize_keeps_test(15, 10, 100, 127))
test('cq: resize down keeps queued CQEs in order')(
    resize_keeps_test(255, 10, 12, 15))


@test('cq: resize below the queued CQEs or past the limit is EINVAL')
def t_cq_resize_bad(t):
    cq = CQ(t.ctx, 63, None, None, 0)
    qp, ids = flushed_recvs(t, cq, 10)
    time.sleep(SETTLE)
    for new in (4, 0, 131072):
        expect_errno(f'resize_cq to {new} with 10 CQEs queued', EINVAL,
                     cq.resize, new)
        expect_eq(f'cqe after the refused resize to {new}', cq.cqe, 63)
    expect_completions(poll_n(cq, 10), 'CQEs after the refused resizes',
                       ids, qp.qp_num, FLUSH)


@test('cq: a resized CQ takes new CQEs beyond its old depth')
def t_cq_resize_use(t):
    cq = CQ(t.ctx, 3, None, None, 0)
    cq.resize(200)
    expect_eq('cqe after resize to 200', cq.cqe, 255)
    qp, ids = flushed_recvs(t, cq, 100)
    expect_completions(poll_n(cq, 100), 'CQEs in the resized ring', ids,
                       qp.qp_num, FLUSH)


@test('cq: an armed CQ signals its completion channel once')
def t_cq_event(t):
    before = ib_event_fds()
    chan = CompChannel(t.ctx)
    fd = new_event_fd(before, 'completion channel')
    cq = CQ(t.ctx, 15, None, chan, 0)
    cq.req_notify()
    check(not readable(fd, 0.1), 'channel readable before any completion')
    qp, ids = flushed_recvs(t, cq, 2)
    check(readable(fd, EVENT_TIMEOUT),
          f'no completion event within {EVENT_TIMEOUT}s of the flush')
    chan.get_cq_event(cq)
    cq.ack_events(1)
    expect_completions(poll_n(cq, 2), 'CQEs behind the event', ids,
                       qp.qp_num, FLUSH)
    qp, ids = flushed_recvs(t, cq, 1)
    expect_completions(poll_n(cq, 1), 'a later flush', ids, qp.qp_num, FLUSH)
    check(not readable(fd, NO_EVENT_WAIT),
          'a second event without re-arming the CQ')


@test('cq: an unarmed CQ does not signal its completion channel')
def t_cq_no_event(t):
    before = ib_event_fds()
    chan = CompChannel(t.ctx)
    fd = new_event_fd(before, 'completion channel')
    cq = CQ(t.ctx, 15, None, chan, 0)
    qp, ids = flushed_recvs(t, cq, 2)
    expect_completions(poll_n(cq, 2), 'flushed receives', ids, qp.qp_num,
                       FLUSH)
    check(not readable(fd, NO_EVENT_WAIT),
          'completion event although the CQ was never armed')


def wait_async(t, fd, wanted):
    """Read async events until every type in wanted was seen; returns them."""
    seen = []
    deadline = time.monotonic() + EVENT_TIMEOUT
    while not set(wanted) <= set(seen) and time.monotonic() < deadline:
        if not readable(fd, max(deadline - time.monotonic(), 0)):
            break
        event = t.ctx.get_async_event()
        seen.append(event.event_type)
        event.ack()
    missing = set(wanted) - set(seen)
    if missing:
        raise Fail(f'async events {sorted(missing)} not seen within '
                   f'{EVENT_TIMEOUT}s; seen: {seen}')
    return seen


@test('cq: overflow raises IBV_EVENT_CQ_ERR, and QP_FATAL on its QP')
def t_cq_overflow(t):
    fd = t.async_fd
    cq = CQ(t.ctx, 1, None, None, 0)
    expect_eq('cqe of a CQ created with cqe 1', cq.cqe, 1)
    scq = CQ(t.ctx, 15, None, None, 0)
    pd = PD(t.ctx)
    mr = MR(pd, 4096, LW)
    qp, _ = create_qp(pd, scq, RC, recv_wr=4, rcq=cq)
    bring_up(qp, RC, t.env, e.IBV_QPS_INIT)
    post_recvs(qp, mr, [1, 2, 3, 4])
    to_err(qp)
    seen = wait_async(t, fd, [e.IBV_EVENT_CQ_ERR, e.IBV_EVENT_QP_FATAL])
    expect_eq('IBV_EVENT_CQ_ERR count', seen.count(e.IBV_EVENT_CQ_ERR), 1)
    expect_eq('IBV_EVENT_QP_FATAL count', seen.count(e.IBV_EVENT_QP_FATAL), 1)
    wcs = poll_n(cq, 4, timeout=0.5)
    expect_eq('completions kept by the overflowed CQ', len(wcs), 1)


@test('srq: a QP with an SRQ raises LAST_WQE_REACHED when it enters ERR')
def t_srq_last_wqe(t):
    fd = t.async_fd
    pd, cq, _ = setup(t)
    srq, _ = make_srq(pd, 15)
    qp, _ = create_qp(pd, cq, RC, srq=srq)
    bring_up(qp, RC, t.env, e.IBV_QPS_INIT)
    to_err(qp)
    seen = wait_async(t, fd, [e.IBV_EVENT_QP_LAST_WQE_REACHED])
    expect_eq('events', seen, [e.IBV_EVENT_QP_LAST_WQE_REACHED])
