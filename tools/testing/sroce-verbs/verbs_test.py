#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The sroce authors
"""Verbs-level tests of an sroce device through stock rdma-core (pyverbs).

    verbs_test.py [options] DEVICE GID_INDEX

Checks the verbs objects (device, port, PD, CQ, QP, SRQ, AH, MR, MW, the
mmap'd rings, the QP state machine, restrack) against the IBA rules and the
sroce limits in Documentation/infiniband/sroce.rst, without a responding
peer (RC requests go on the wire to an address nobody answers):
completions come from flushing queues (QP to ERR) and from the local send
queue operations (BIND_MW, LOCAL_INV).  Prints "ok N - name" or
"not ok N - name: reason" per test, then "# N passed, N failed"; exits 1 if
any test failed.  --group stress runs the 1,000-object stress instead
(--objects N: N objects of each kind instead of 1,000).
Run it with Debian's /usr/bin/python3 (python3-pyverbs), as root.
"""

import argparse
import os
import subprocess
import sys
import time

import pyverbs.enums as e
from pyverbs.device import Context
from pyverbs.mr import MR, MW, MWBind, MWBindInfo
from pyverbs.pd import PD
from pyverbs.qp import QPAttr
from pyverbs.srq import SrqAttr
from pyverbs.addr import AH
from pyverbs.wr import SendWR

import verbs_devcq  # noqa: F401 -- registers its tests, before these
from verbs_fixture import (EFAULT, EINVAL, ENOMEM, LW, RC, TESTS, UC, UD, Env,
                           T, make_srq, setup, test)
from verbs_lib import (PAGE_SIZE, PORT, PROT_READ, PROT_WRITE, QKEY,
                       QP_ALL_ATTRS, QPS_NAMES, QPT_NAMES, RC_ACCESS, RQ_PSN,
                       SQ_PSN, Mapping, Skip, ah_attr, as_int, bring_up, check,
                       create_qp, depth, expect_completions, expect_eq,
                       expect_errno, expect_error, expect_state, fmt,
                       init_attr, mine, modify, poll_n, post_recvs, res_counts,
                       restrack, rtr_attr, rts_attr, run_tap, set_mtu,
                       wait_active_mtu, wait_state)


# ---------------------------------------------------------------------- QP

def caps_test(qpt, req, want_send, want_recv):
    def run(t):
        pd, cq, _ = setup(t)
        dev = t.ctx.query_device()
        qp, attr = create_qp(pd, cq, qpt, *req)
        got = (attr.max_send_wr, attr.max_recv_wr, attr.max_send_sge,
               attr.max_recv_sge, attr.max_inline_data)
        expect_eq('max_send_wr', got[0], want_send)
        expect_eq('max_recv_wr', got[1], want_recv)
        for name, val, asked, top in (('max_send_sge', got[2], req[2], 63),
                                      ('max_recv_sge', got[3], req[3], 63),
                                      ('max_inline_data', got[4], req[4],
                                       1008)):
            check(asked <= val <= top, f'{name} {val}: requested {asked}, '
                  f'device limit {top}')
        check(got[0] <= dev.max_qp_wr and got[1] <= dev.max_qp_wr,
              f'depths {got[:2]} exceed max_qp_wr {dev.max_qp_wr}')
        qattr, qinit = qp.query(e.IBV_QP_CAP)
        for src in (qattr.cap, qinit.cap):
            again = (src.max_send_wr, src.max_recv_wr, src.max_send_sge,
                     src.max_recv_sge, src.max_inline_data)
            expect_eq('caps from query_qp', again, got)
    return run


for _qpt, _req, _ws, _wr in ((RC, (10, 20, 3, 2, 50), 15, 31),
                             (RC, (1, 1, 1, 1, 0), 1, 1),
                             (RC, (100, 16, 63, 63, 1008), 127, 31),
                             (RC, (32767, 32767, 1, 1, 0), 32767, 32767),
                             (UC, (10, 20, 3, 2, 50), 15, 31),
                             (UD, (7, 8, 2, 4, 64), 7, 15)):
    test(f'qp: {QPT_NAMES[_qpt]} caps {_req} give depths {_ws}/{_wr}')(
        caps_test(_qpt, _req, _ws, _wr))


@test('qp: caps over the device limits are refused with EINVAL')
def t_qp_caps_bad(t):
    pd, cq, _ = setup(t)
    for field, val in (('send_wr', 32769), ('recv_wr', 32769),
                       ('send_sge', 64), ('recv_sge', 64), ('inline', 1009)):
        expect_errno(f'create_qp {field} {val}', EINVAL,
                     lambda f=field, v=val: create_qp(pd, cq, RC,
                                                      **{f: v})[0])


def expect_attrs(qp, what, **want):
    attr, _ = qp.query(QP_ALL_ATTRS)
    bad = []
    for key, val in want.items():
        got = attr.ah_attr.dgid if key == 'dgid' else getattr(attr, key)
        if got != val:
            bad.append(f'{key} {fmt(got)} (expected {fmt(val)})')
    check(not bad, f'query_qp after {what}: ' + '; '.join(bad))


def state_machine_test(qpt):
    def run(t):
        pd, cq, _ = setup(t)
        peer, _ = create_qp(pd, cq, qpt)
        qp, _ = create_qp(pd, cq, qpt)
        ud = qpt == UD
        acc = LW | e.IBV_ACCESS_REMOTE_WRITE
        expect_attrs(qp, 'create', qp_state=e.IBV_QPS_RESET)
        modify(qp, init_attr(qpt, acc), 'RESET->INIT')
        init = {'qkey': QKEY} if ud else {'qp_access_flags': acc}
        expect_attrs(qp, 'RESET->INIT', qp_state=e.IBV_QPS_INIT,
                     pkey_index=0, port_num=PORT, **init)
        if not ud:
            acc = RC_ACCESS if qpt == RC else LW
            modify(qp, init_attr(qpt, acc), 'INIT->INIT')
            expect_attrs(qp, 'INIT->INIT', qp_access_flags=acc)
        modify(qp, rtr_attr(qpt, t.env, peer.qp_num), 'INIT->RTR')
        rtr = {} if ud else {'path_mtu': e.IBV_MTU_1024, 'rq_psn': RQ_PSN,
                             'dest_qp_num': peer.qp_num,
                             'dgid': t.env.peer_gid}
        if qpt == RC:
            rtr.update(max_dest_rd_atomic=4, min_rnr_timer=12)
        expect_attrs(qp, 'INIT->RTR', qp_state=e.IBV_QPS_RTR, **rtr)
        modify(qp, rts_attr(qpt), 'RTR->RTS')
        rts = {'sq_psn': SQ_PSN}
        if qpt == RC:
            rts.update(timeout=14, retry_cnt=7, rnr_retry=7, max_rd_atomic=4)
        expect_attrs(qp, 'RTR->RTS', qp_state=e.IBV_QPS_RTS, **rts, **rtr)
        again = QPAttr(qp_state=e.IBV_QPS_RTS)
        if qpt == RC:
            again.min_rnr_timer = 20
            modify(qp, (again, e.IBV_QP_STATE | e.IBV_QP_MIN_RNR_TIMER),
                   'RTS->RTS')
            expect_attrs(qp, 'RTS->RTS', min_rnr_timer=20)
        elif ud:
            again.qkey = 0x2222
            modify(qp, (again, e.IBV_QP_STATE | e.IBV_QP_QKEY), 'RTS->RTS')
            expect_attrs(qp, 'RTS->RTS', qkey=0x2222)
        for state, name in ((e.IBV_QPS_SQD, 'RTS->SQD'),
                            (e.IBV_QPS_RTS, 'SQD->RTS')):
            modify(qp, (QPAttr(qp_state=state), e.IBV_QP_STATE), name)
            expect_state(qp, state, name)
        expect_errno('RTS->SQE by modify_qp', EINVAL, qp.modify,
                     QPAttr(qp_state=e.IBV_QPS_SQE), e.IBV_QP_STATE)
        expect_state(qp, e.IBV_QPS_RTS, 'the refused RTS->SQE')
        for state, name in ((e.IBV_QPS_ERR, 'RTS->ERR'),
                            (e.IBV_QPS_RESET, 'ERR->RESET')):
            modify(qp, (QPAttr(qp_state=state), e.IBV_QP_STATE), name)
            expect_state(qp, state, name)
        modify(qp, init_attr(qpt, LW), 'RESET->INIT again')
        init = {'qkey': QKEY} if ud else {'qp_access_flags': LW}
        expect_attrs(qp, 'RESET->INIT again', qp_state=e.IBV_QPS_INIT,
                     **init)
    return run


for _qpt in (RC, UC, UD):
    test(f'qp: {QPT_NAMES[_qpt]} walks RESET->INIT->RTR->RTS->SQD->RTS->ERR'
         '->RESET->INIT, query_qp returns what was set')(
             state_machine_test(_qpt))


@test('qp: path_mtu 4096 is capped to the active MTU 1024')
def t_path_mtu_cap(t):
    pd, cq, _ = setup(t)
    expect_eq('active_mtu', t.ctx.query_port(PORT).active_mtu, e.IBV_MTU_1024)
    qp, _ = create_qp(pd, cq, RC)
    modify(qp, init_attr(RC), 'RESET->INIT')
    modify(qp, rtr_attr(RC, t.env, qp.qp_num, e.IBV_MTU_4096), 'INIT->RTR')
    expect_attrs(qp, 'RTR with path_mtu 4096', path_mtu=e.IBV_MTU_1024)


@test('qp: path_mtu 4096 holds with netdev MTU 9000')
def t_path_mtu_jumbo(t):
    netdevs = [n for n in (t.env.netdev, t.env.peer_netdev) if n]
    try:
        for netdev in netdevs:
            set_mtu(netdev, 9000)
        got = wait_active_mtu(t.ctx, e.IBV_MTU_4096)
        expect_eq('active_mtu at netdev MTU 9000', got, e.IBV_MTU_4096)
        pd, cq, _ = setup(t)
        qp, _ = create_qp(pd, cq, RC)
        modify(qp, init_attr(RC), 'RESET->INIT')
        modify(qp, rtr_attr(RC, t.env, qp.qp_num, e.IBV_MTU_4096),
               'INIT->RTR')
        expect_attrs(qp, 'RTR with path_mtu 4096', path_mtu=e.IBV_MTU_4096)
    finally:
        for netdev in netdevs:
            set_mtu(netdev, 1500)
        got = wait_active_mtu(t.ctx, e.IBV_MTU_1024)
    expect_eq('active_mtu back at netdev MTU 1500', got, e.IBV_MTU_1024)


def _drop(mask_bits):
    def build(env, qpt, qpn, base):
        attr, mask = base(env, qpt, qpn)
        return attr, mask & ~mask_bits
    return build


def _set(key, val):
    def build(env, qpt, qpn, base):
        attr, mask = base(env, qpt, qpn)
        try:
            setattr(attr, key, val)
        except (OverflowError, ValueError, TypeError) as err:
            raise Skip(f'pyverbs refuses {key}={val}: {err}') from None
        return attr, mask
    return build


def _init(env, qpt, qpn):
    return init_attr(qpt)


def _rtr(env, qpt, qpn):
    return rtr_attr(qpt, env, qpn)


def _rts(env, qpt, qpn):
    return rts_attr(qpt)


def _state(state):
    def base(env, qpt, qpn):
        return QPAttr(qp_state=state), e.IBV_QP_STATE
    return base


INVALID = (
    ('RESET->RTR', RC, e.IBV_QPS_RESET, _rtr, None),
    ('RESET->RTS', RC, e.IBV_QPS_RESET, _rts, None),
    ('INIT->RTS', RC, e.IBV_QPS_INIT, _rts, None),
    ('RTS->RTR', RC, e.IBV_QPS_RTS, _rtr, None),
    ('RC INIT->RTR without AV', RC, e.IBV_QPS_INIT, _rtr,
     _drop(e.IBV_QP_AV)),
    ('RC INIT->RTR without dest_qp_num', RC, e.IBV_QPS_INIT, _rtr,
     _drop(e.IBV_QP_DEST_QPN)),
    ('RC RTR->RTS without timeout and retry_cnt', RC, e.IBV_QPS_RTR, _rts,
     _drop(e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT)),
    ('UD RESET->INIT without qkey', UD, e.IBV_QPS_RESET, _init,
     _drop(e.IBV_QP_QKEY)),
    ('RESET->INIT with port_num 2', RC, e.IBV_QPS_RESET, _init,
     _set('port_num', 2)),
    ('RESET->INIT with pkey_index 1', RC, e.IBV_QPS_RESET, _init,
     _set('pkey_index', 1)),
    ('RTR->RTS with timeout 32', RC, e.IBV_QPS_RTR, _rts, _set('timeout', 32)),
    ('RTR->RTS with retry_cnt 8', RC, e.IBV_QPS_RTR, _rts,
     _set('retry_cnt', 8)),
    ('RTR->RTS with rnr_retry 8', RC, e.IBV_QPS_RTR, _rts,
     _set('rnr_retry', 8)),
    ('RTR->RTS with max_rd_atomic 129', RC, e.IBV_QPS_RTR, _rts,
     _set('max_rd_atomic', 129)),
    ('INIT->RTR with max_dest_rd_atomic 129', RC, e.IBV_QPS_INIT, _rtr,
     _set('max_dest_rd_atomic', 129)),
    ('INIT->RTR with min_rnr_timer 32', RC, e.IBV_QPS_INIT, _rtr,
     _set('min_rnr_timer', 32)),
    ('INIT->RTR with path_mtu 0', RC, e.IBV_QPS_INIT, _rtr,
     _set('path_mtu', 0)),
    ('INIT->RTR with path_mtu 6', RC, e.IBV_QPS_INIT, _rtr,
     _set('path_mtu', 6)),
    ('INIT->RTR with dest_qp_num 0x1000000', RC, e.IBV_QPS_INIT, _rtr,
     _set('dest_qp_num', 0x1000000)),
    ('INIT to unknown state 7', RC, e.IBV_QPS_INIT,
     _state(e.IBV_QPS_UNKNOWN), None),
    ('RTS->SQE', RC, e.IBV_QPS_RTS, _state(e.IBV_QPS_SQE), None),
)


def invalid_test(qpt, pre, base, tweak):
    def run(t):
        pd, cq, _ = setup(t)
        qp, _ = create_qp(pd, cq, qpt)
        if pre != e.IBV_QPS_RESET:
            bring_up(qp, qpt, t.env, pre)
        try:
            attr, mask = (tweak or (lambda env, q, n, b: b(env, q, n)))(
                t.env, qpt, qp.qp_num, base)
        except (OverflowError, ValueError, TypeError) as err:
            raise Skip(f'pyverbs cannot express it: {err}') from None
        expect_errno('modify_qp', EINVAL, qp.modify, attr, mask)
        expect_state(qp, pre, 'the refused modify_qp')
    return run


for _name, _qpt, _pre, _base, _tweak in INVALID:
    test(f'qp: invalid {_name} refused with EINVAL')(
        invalid_test(_qpt, _pre, _base, _tweak))


# --------------------------------------------------------------------- SRQ


@test('srq: created depth is rounded, query_srq agrees')
def t_srq_create(t):
    pd = PD(t.ctx)
    for max_wr, max_sge in ((10, 2), (1, 1), (16, 63), (32767, 1)):
        srq, init = make_srq(pd, max_wr, max_sge)
        expect_eq(f'max_wr reported for {max_wr}', init.max_wr, depth(max_wr))
        check(max_sge <= init.max_sge <= 63,
              f'max_sge reported {init.max_sge} for {max_wr}/{max_sge}')
        attr = srq.query()
        expect_eq('query_srq (max_wr, max_sge, srq_limit)',
                  (attr.max_wr, attr.max_sge, attr.srq_limit),
                  (init.max_wr, init.max_sge, 0))
        srq.close()


@test('srq: max_wr 32769 and max_sge 64 are refused with EINVAL')
def t_srq_bad(t):
    pd = PD(t.ctx)
    for max_wr, max_sge in ((32769, 1), (16, 64)):
        expect_errno(f'create_srq max_wr {max_wr} max_sge {max_sge}', EINVAL,
                     lambda w=max_wr, s=max_sge: make_srq(pd, w, s)[0])


@test('srq: posting beyond the depth fails with ENOMEM')
def t_srq_full(t):
    pd = PD(t.ctx)
    mr = MR(pd, 4096, LW)
    srq, init = make_srq(pd, 10)
    post_recvs(srq, mr, range(init.max_wr))
    expect_errno(f'post_srq_recv number {init.max_wr + 1}', ENOMEM,
                 post_recvs, srq, mr, [0xfff])


@test('srq: srq_limit is set and queried; a limit above max_wr is EINVAL')
def t_srq_limit(t):
    pd = PD(t.ctx)
    srq, init = make_srq(pd, 15)
    srq.modify(SrqAttr(srq_limit=5), e.IBV_SRQ_LIMIT)
    expect_eq('srq_limit after modify', srq.query().srq_limit, 5)
    expect_errno('srq_limit 100 on a 15-deep SRQ', EINVAL, srq.modify,
                 SrqAttr(srq_limit=100), e.IBV_SRQ_LIMIT)
    expect_eq('srq_limit after the refused modify', srq.query().srq_limit, 5)
    expect_eq('max_wr unchanged', srq.query().max_wr, init.max_wr)


@test('srq: resize keeps posted WQEs and takes new ones')
def t_srq_resize(t):
    pd = PD(t.ctx)
    mr = MR(pd, 4096, LW)
    srq, init = make_srq(pd, 7)
    expect_eq('initial max_wr', init.max_wr, 7)
    post_recvs(srq, mr, range(5))
    srq.modify(SrqAttr(max_wr=31), e.IBV_SRQ_MAX_WR)
    expect_eq('max_wr after resize to 31', srq.query().max_wr, 31)
    post_recvs(srq, mr, range(100, 126))
    expect_errno('post_srq_recv with 5 old + 26 new WQEs in 31 slots',
                 ENOMEM, post_recvs, srq, mr, [0xfff])


@test('srq: a QP with an SRQ of another PD is refused with EINVAL')
def t_srq_cross_pd(t):
    pd_a, cq, _ = setup(t)
    pd_b = PD(t.ctx)
    srq, _ = make_srq(pd_b, 15)
    expect_errno('create_qp with a foreign SRQ', EINVAL,
                 lambda: create_qp(pd_a, cq, RC, srq=srq)[0])
    qp, _ = create_qp(pd_a, cq, RC, srq=make_srq(pd_a, 15)[0])
    qp.close()


# ---------------------------------------------------------------------- AH

@test('ah: created for the peer GID and destroyed')
def t_ah(t):
    pd = PD(t.ctx)
    ahs = [AH(pd, attr=ah_attr(t.env, dgid=gid))
           for gid in (t.env.peer_gid, t.env.own_gid)]
    for ah in ahs:
        ah.close()


@test('ah: an unpopulated sgid index and port 2 are refused')
def t_ah_bad(t):
    pd = PD(t.ctx)
    port = t.ctx.query_port(PORT)
    idx = min(port.gid_tbl_len, 255)
    expect_error(f'create_ah sgid_index {idx}', AH, pd,
                 attr=ah_attr(t.env, sgid_index=idx))
    expect_error('create_ah port 2', AH, pd, attr=ah_attr(t.env, port=2))


# ---------------------------------------------------------------------- MR

@test('mr: 1 byte and 4 KiB MRs; lkey set, rkey == lkey, keys distinct')
def t_mr_keys(t):
    pd = PD(t.ctx)
    mrs = [MR(pd, 1, LW), MR(pd, 4096, LW)]
    mrs += [MR(pd, 4096, LW | e.IBV_ACCESS_REMOTE_READ) for _ in range(6)]
    for mr, length in zip(mrs, [1] + [4096] * 7):
        expect_eq('MR length', mr.length, length)
        check(mr.lkey != 0, 'lkey is 0')
        expect_eq(f'rkey of MR with lkey {mr.lkey:#x}', mr.rkey, mr.lkey)
    lkeys = [mr.lkey for mr in mrs]
    expect_eq('distinct lkeys of 8 MRs', len(set(lkeys)), 8)


@test('mr: unaligned ranges spanning 2 and 3 pages')
def t_mr_unaligned(t):
    pd = PD(t.ctx)
    buf = Mapping(4 * PAGE_SIZE, PROT_READ | PROT_WRITE)
    t.defer(buf.close)
    for off, length in ((1, 8190), (1, 8192), (PAGE_SIZE - 1, PAGE_SIZE + 2)):
        mr = MR(pd, length, LW, address=buf.addr + off)
        expect_eq(f'length of MR at page offset {off}', mr.length, length)
        mr.close()


@test('mr: read-only mapping registers with access 0, EFAULT with write')
def t_mr_readonly(t):
    pd = PD(t.ctx)
    buf = Mapping(2 * PAGE_SIZE, PROT_READ)
    t.defer(buf.close)
    mr = MR(pd, 2 * PAGE_SIZE, 0, address=buf.addr)
    expect_eq('length', mr.length, 2 * PAGE_SIZE)
    mr.close()
    expect_errno('reg_mr LOCAL_WRITE on a PROT_READ mapping', EFAULT,
                 MR, pd, 2 * PAGE_SIZE, LW, address=buf.addr)


@test('mr: 2 GiB + 8 KiB mapping registers read-only', timeout=240)
def t_mr_huge(t):
    # Past 2^31 bytes and 2^19 pages; GUP unshares the untouched pages,
    # so the guest needs the memory (verbs.sh asks for 4 GiB).
    size = (2 << 30) + 8192
    pd = PD(t.ctx)
    buf = Mapping(size, PROT_READ)
    t.defer(buf.close)
    start = time.monotonic()
    mr = MR(pd, size, 0, address=buf.addr)
    took = time.monotonic() - start
    expect_eq('length', mr.length, size)
    mr.close()
    print(f'# {size} B reg_mr took {took:.1f}s, dereg '
          f'{time.monotonic() - start - took:.1f}s', flush=True)


@test('mr: REMOTE_WRITE without LOCAL_WRITE is EINVAL; RELAXED_ORDERING ok')
def t_mr_access(t):
    pd = PD(t.ctx)
    expect_errno('reg_mr REMOTE_WRITE alone', EINVAL,
                 MR, pd, 4096, e.IBV_ACCESS_REMOTE_WRITE)
    mr = MR(pd, 4096, LW | e.IBV_ACCESS_RELAXED_ORDERING)
    check(mr.lkey != 0, 'lkey 0 with RELAXED_ORDERING')


# ---------------------------------------------------------------------- MW

MW_ACCESS = e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_WRITE
MR_BINDABLE = (LW | e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_WRITE |
               e.IBV_ACCESS_MW_BIND)


def rts_qp(t, pd, cq):
    qp, _ = create_qp(pd, cq, RC)
    bring_up(qp, RC, t.env, e.IBV_QPS_RTS)
    return qp


def bind2_wr(mw, mr, wr_id):
    wr = SendWR(wr_id=wr_id, opcode=e.IBV_WR_BIND_MW, num_sge=0,
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_bind_wr(mw, MWBindInfo(mr, mr.buf, 4096, MW_ACCESS))
    return wr


@test('mw: type 1 and type 2 windows allocate with distinct rkeys')
def t_mw_alloc(t):
    pd = PD(t.ctx)
    mws = [MW(pd, e.IBV_MW_TYPE_1), MW(pd, e.IBV_MW_TYPE_2)]
    expect_eq('types', [mw.type for mw in mws],
              [e.IBV_MW_TYPE_1, e.IBV_MW_TYPE_2])
    check(mws[0].rkey != mws[1].rkey, f'both rkeys are {mws[0].rkey:#x}')
    for mw in mws:
        mw.close()


@test('mw: type 1 bind_mw completes BIND_MW and changes the rkey')
def t_mw_bind1(t):
    pd, cq, mr = setup(t, access=MR_BINDABLE)
    qp = rts_qp(t, pd, cq)
    mw = MW(pd, e.IBV_MW_TYPE_1)
    old = mw.rkey
    info = MWBindInfo(mr, mr.buf, 4096, MW_ACCESS)
    qp.bind_mw(mw, MWBind(info, e.IBV_SEND_SIGNALED, wr_id=0x51))
    expect_completions(poll_n(cq, 1), 'bind_mw', [0x51], qp.qp_num,
                       e.IBV_WC_SUCCESS, e.IBV_WC_BIND_MW)
    check(mw.rkey != old, f'rkey still {old:#x} after the bind')
    expect_state(qp, e.IBV_QPS_RTS, 'a good bind')
    mw.close()


@test('mw: type 2 BIND_MW by post_send, then LOCAL_INV of its rkey')
def t_mw_bind2(t):
    pd, cq, mr = setup(t, access=MR_BINDABLE)
    qp = rts_qp(t, pd, cq)
    mw = MW(pd, e.IBV_MW_TYPE_2)
    wr = bind2_wr(mw, mr, 0x52)
    qp.post_send(wr)
    expect_completions(poll_n(cq, 1), 'BIND_MW', [0x52], qp.qp_num,
                       e.IBV_WC_SUCCESS, e.IBV_WC_BIND_MW)
    inv = SendWR(wr_id=0x53, opcode=e.IBV_WR_LOCAL_INV, num_sge=0,
                 imm_data=wr.rkey, send_flags=e.IBV_SEND_SIGNALED)
    qp.post_send(inv)
    expect_completions(poll_n(cq, 1), f'LOCAL_INV of {wr.rkey:#x}', [0x53],
                       qp.qp_num, e.IBV_WC_SUCCESS, e.IBV_WC_LOCAL_INV)
    expect_state(qp, e.IBV_QPS_RTS, 'bind and invalidate')
    mw.close()


@test('mw: bind to an MR without MW_BIND completes MW_BIND_ERR, QP to ERR')
def t_mw_bind_noaccess(t):
    pd, cq, mr = setup(t, access=LW | e.IBV_ACCESS_REMOTE_READ)
    qp = rts_qp(t, pd, cq)
    mw = MW(pd, e.IBV_MW_TYPE_1)
    info = MWBindInfo(mr, mr.buf, 4096, e.IBV_ACCESS_REMOTE_READ)
    qp.bind_mw(mw, MWBind(info, e.IBV_SEND_SIGNALED, wr_id=0x54))
    expect_completions(poll_n(cq, 1), 'bind to an MR without MW_BIND',
                       [0x54], qp.qp_num, e.IBV_WC_MW_BIND_ERR)
    got = wait_state(qp, e.IBV_QPS_ERR)
    expect_eq('QP state after the failed bind', QPS_NAMES.get(got, got),
              'ERR')


@test('mw: type 2 bind of a window to an MR of another PD is an error CQE')
def t_mw_cross_pd(t):
    pd_a, cq, _ = setup(t)
    mr_b = MR(PD(t.ctx), 4096, MR_BINDABLE)
    qp = rts_qp(t, pd_a, cq)
    mw = MW(pd_a, e.IBV_MW_TYPE_2)
    qp.post_send(bind2_wr(mw, mr_b, 0x55))
    expect_completions(poll_n(cq, 1), 'cross-PD BIND_MW', [0x55], qp.qp_num,
                       e.IBV_WC_MW_BIND_ERR)


# ---------------------------------------------------------------- restrack

@test('restrack: rdma resource lists QPs, CQ, MR, PD; all gone after destroy')
def t_restrack(t):
    dev = t.env.dev
    pd, cq, mr = setup(t, cqe=100, mr_len=8192)
    rc = rts_qp(t, pd, cq)
    uc, _ = create_qp(pd, cq, UC)
    bring_up(uc, UC, t.env, e.IBV_QPS_INIT)
    ud, _ = create_qp(pd, cq, UD)
    bring_up(ud, UD, t.env, e.IBV_QPS_RTS)
    want = {rc.qp_num: ('RC', 'RTS'), uc.qp_num: ('UC', 'INIT'),
            ud.qp_num: ('UD', 'RTS')}
    got = {as_int(q['lqpn']): (q.get('type'), q.get('state'))
           for q in mine(restrack('qp', dev))}
    expect_eq('restrack QPs {qpn: (type, state)}', got, want)
    cqs = mine(restrack('cq', dev))
    expect_eq('restrack CQ cqe values', [as_int(c.get('cqe', -1))
                                         for c in cqs], [127])
    mrs = mine(restrack('mr', dev))
    expect_eq('restrack MR lengths', [as_int(m.get('mrlen', -1))
                                      for m in mrs], [8192])
    expect_eq('restrack PDs', len(mine(restrack('pd', dev))), 1)
    for obj in (rc, uc, ud, mr, cq, pd):
        obj.close()
    for kind in ('qp', 'cq', 'mr', 'pd'):
        left = mine(restrack(kind, dev))
        check(not left, f'restrack still lists {kind}: {left}')


# ------------------------------------------------------------------ memcg

CGROOT = '/sys/fs/cgroup'
MEMCG_WR = 16384
# A child that joins the cgroup, then creates a QP with deep rings and
# prints how much the cgroup's memory.current grew.
MEMCG_CHILD = f"""
import os, sys
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from verbs_lib import create_qp
cg = sys.argv[2]
with open(cg + '/cgroup.procs', 'w') as f:
    f.write(str(os.getpid()))
ctx = Context(name=sys.argv[1])
pd = PD(ctx)
cq = CQ(ctx, 64, None, None, 0)
def current():
    with open(cg + '/memory.current') as f:
        return int(f.read())
before = current()
qp, _ = create_qp(pd, cq, {RC}, send_wr={MEMCG_WR}, recv_wr={MEMCG_WR})
print(current() - before, flush=True)
"""


def memcg_dir():
    """A fresh child cgroup with the memory controller, or Skip."""
    if not os.path.exists(f'{CGROOT}/cgroup.controllers'):
        os.makedirs(CGROOT, exist_ok=True)
        if subprocess.run(['mount', '-t', 'cgroup2', 'none', CGROOT],
                          check=False).returncode:
            raise Skip('no cgroup2 file system in this kernel')
    with open(f'{CGROOT}/cgroup.controllers', encoding='ascii') as f:
        if 'memory' not in f.read().split():
            raise Skip('this kernel has no memory controller')
    with open(f'{CGROOT}/cgroup.subtree_control', 'w', encoding='ascii') as f:
        f.write('+memory')
    path = f'{CGROOT}/sroce-verbs-memcg'
    if os.path.isdir(path):
        os.rmdir(path)
    os.mkdir(path)
    return path


@test('memcg: a QP\'s ring memory is charged to its creator\'s memory cgroup')
def t_ring_memcg(t):
    path = memcg_dir()
    t.defer(lambda: os.rmdir(path))
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, '-c', MEMCG_CHILD, t.env.dev, path],
                         cwd=here, env=dict(os.environ, PYTHONPATH=here),
                         capture_output=True, text=True, timeout=60,
                         check=False)
    check(out.returncode == 0, f'child failed: {out.stderr.strip()}')
    grew = int(out.stdout.split()[-1])
    # Two rings of MEMCG_WR slots, at least 128 bytes a send WQE and 32
    # a receive WQE (rdma_user_rxe.h), plus the requester's per-WQE state.
    want = MEMCG_WR * (128 + 32)
    check(grew >= want, f'memory.current grew by {grew} bytes creating the '
          f'QP; its rings alone take at least {want}')


# ------------------------------------------------------------------ stress

# The stress tests' names say {objects}: main() fills in --objects.
@test('stress: {objects} RC QPs on one CQ and PD, to INIT, destroyed',
      group='stress', timeout=240)
def t_stress_qps(t):
    dev, count = t.env.dev, t.env.objects
    base = res_counts(dev)
    pd, cq, _ = setup(t)
    qps = []
    for _ in range(count):
        qp, _ = create_qp(pd, cq, RC, send_wr=1, recv_wr=1)
        modify(qp, init_attr(RC), f'QP {len(qps)} RESET->INIT')
        qps.append(qp)
    expect_eq('distinct QPNs', len({qp.qp_num for qp in qps}), count)
    listed = mine(restrack('qp', dev))
    expect_eq('restrack QPs in INIT',
              sum(1 for q in listed if q.get('state') == 'INIT'), count)
    for qp in qps:
        qp.close()
    pd.close()
    cq.close()
    expect_eq('restrack counts after destroy', res_counts(dev), base)


@test('stress: {objects} MRs of 4 KiB registered and deregistered',
      group='stress', timeout=240)
def t_stress_mrs(t):
    dev, count = t.env.dev, t.env.objects
    base = res_counts(dev)
    pd = PD(t.ctx)
    mrs = [MR(pd, 4096, LW) for _ in range(count)]
    expect_eq('distinct lkeys', len({mr.lkey for mr in mrs}), count)
    expect_eq('restrack MRs', len(mine(restrack('mr', dev))), count)
    for mr in mrs:
        mr.close()
    pd.close()
    expect_eq('restrack counts after dereg', res_counts(dev), base)


# ------------------------------------------------------------------ main

def resolve(args):
    env = Env()
    env.dev = args.device
    env.gid_index = args.gid_index
    with Context(name=args.device) as ctx:
        env.own_gid = ctx.query_gid(PORT, args.gid_index).gid
    if args.peer_gid:
        env.peer_gid = args.peer_gid
    elif args.peer_dev:
        with Context(name=args.peer_dev) as ctx:
            env.peer_gid = ctx.query_gid(PORT, args.gid_index).gid
    else:
        env.peer_gid = env.own_gid
    sysfs = f'/sys/class/infiniband/{args.device}/ports/{PORT}/gid_attrs'
    if args.netdev:
        env.netdev = args.netdev
    else:
        with open(f'{sysfs}/ndevs/{args.gid_index}', encoding='ascii') as f:
            env.netdev = f.read().strip()
    env.peer_netdev = args.peer_netdev
    env.peer_dev = args.peer_dev
    env.objects = args.objects
    return env


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('device')
    parser.add_argument('gid_index', type=int)
    parser.add_argument('--peer-dev', help='device whose GID is the peer')
    parser.add_argument('--peer-gid', help='peer GID, xxxx:...:xxxx')
    parser.add_argument('--netdev', help="the device's netdev")
    parser.add_argument('--peer-netdev', help="the peer's netdev (MTU test)")
    parser.add_argument('--group', choices=('verbs', 'stress', 'all'),
                        default='verbs')
    parser.add_argument('--filter', default='',
                        help='run only tests whose name contains this')
    parser.add_argument('--objects', type=int, default=1000, metavar='N',
                        help='objects of each kind in the stress tests '
                        '(default 1000)')
    parser.add_argument('--list', action='store_true')
    args = parser.parse_args()
    if args.objects < 1:
        parser.error('--objects takes a positive number')

    tests = [(name.replace('{objects}', str(args.objects)), group, timeout,
              func) for name, group, timeout, func in TESTS]
    tests = [x for x in tests if args.group in ('all', x[1]) and
             args.filter in x[0]]
    if args.list:
        for name, group, _, _ in tests:
            print(f'{group}: {name}')
        return 0
    try:
        env = resolve(args)
    except Exception as err:    # pylint: disable=broad-except
        print(f'not ok 1 - setup: {type(err).__name__}: {err}')
        print('# 0 passed, 1 failed')
        return 1
    print(f'# {env.dev} GID[{env.gid_index}] {env.own_gid} netdev '
          f'{env.netdev}, peer GID {env.peer_gid}', flush=True)
    return run_tap(lambda: T(env),
                   [(name, timeout, func) for name, _, timeout, func in tests])

if __name__ == '__main__':
    sys.exit(main())
