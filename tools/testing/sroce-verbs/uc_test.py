#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The sroce authors
"""UC operations between two sroce devices through stock rdma-core (pyverbs).

    uc_test.py [options] DEV0 DEV1

Every test connects its own UC QP pair (rc_lib.py's Pair with
qp_type=UC): SEND, SEND_IMM, RDMA WRITE and WRITE_IMM at sizes around the
path MTU, with the data, the bytes around it and both sides' completions
checked; and the unreliable side of UC (IBA vol 1 9.8.3, 9.9.3): a message
the responder cannot take (no receive posted, bad R_Key, no remote-write
access) is dropped silently and counted while the requester completes it
successfully and both QPs stay in RTS, as for a SEND longer than its
receive, whose receive then takes the next SEND; a send
WQE that fails locally takes the UC QP to SQE (its receive queue keeps
working) and the QP can go back to RTS.  Options as rc_test.py's, and
SROCE_VOLUME=small as there (the largest messages are 160 packets).
"""

import sys

import pyverbs.enums as e

from pyverbs.qp import QPAttr
from pyverbs.wr import SGE

from rc_lib import (OK, FLUSH, Pair, SIG, big, counters, delta,
                    expect_bytes, expect_qp, expect_wc, main, no_more, poll,
                    post, post_recv, sges, size_name)
from rc_test import send_sge_test, send_test
from verbs_lib import Fail, modify, registry

UC = e.IBV_QPT_UC
LW = e.IBV_ACCESS_LOCAL_WRITE
RW = e.IBV_ACCESS_REMOTE_WRITE
UC_ACCESS = LW | RW
DROPPED = 'dropped_uc_msg'
TESTS, test = registry()


UC_PAIR = dict(qp_type=UC, qp_access=UC_ACCESS)


def uc_pair(t, **kw):
    return Pair(t, **{**UC_PAIR, **kw})


# ------------------------------------------------------------ data

def write_test(mtu, size, imm=False, fam=4):
    def run(t):
        p = uc_pair(t, mtu=mtu, fam=fam)
        src = p.a.mr(t, size, fill=size + 3)
        dst = p.b.mr(t, size + 128, fill=size + 4)
        before = dst.read(size + 128, 0)
        opcode = e.IBV_WR_RDMA_WRITE_WITH_IMM if imm else e.IBV_WR_RDMA_WRITE
        if imm:
            post_recv(p.b.qp, 0x21, sges(p.b.mr(t, 64), [(0, 64)]))
        post(p.a.qp, 0x11, opcode, sges(src, [(0, size)]), rkey=dst.rkey,
             addr=dst.buf + 64, imm=0x01020304 if imm else None)
        (swc,) = poll(p.a.scq, 1, 'requester')
        expect_wc(swc, 'requester', 0x11, OK, e.IBV_WC_RDMA_WRITE, p.a.qpn)
        if imm:
            (rwc,) = poll(p.b.rcq, 1, 'responder')
            expect_wc(rwc, 'responder', 0x21, OK,
                      e.IBV_WC_RECV_RDMA_WITH_IMM, p.b.qpn, size,
                      0x01020304, e.IBV_WC_WITH_IMM)
        else:
            # no completion tells when a plain UC WRITE has landed: a
            # SEND behind it on the same QP arrives after it
            post_recv(p.b.qp, 0x22, sges(p.b.mr(t, 64), [(0, 64)]))
            post(p.a.qp, 0x12, e.IBV_WR_SEND, [])
            poll(p.a.scq, 1, 'requester fence SEND')
            expect_wc(poll(p.b.rcq, 1, 'responder')[0], 'fence SEND', 0x22)
        expect_bytes('written data', dst.read(size, 64), src.read(size, 0))
        expect_bytes('bytes before the target', dst.read(64, 0), before[:64])
        expect_bytes('bytes after the target', dst.read(64, size + 64),
                     before[size + 64:])
    return run


for _mtu in (1024, 4096):
    for _size in (0, 1, _mtu, 3 * _mtu + 5, big(_mtu)):
        test(f'uc send: {_size} B at path MTU {_mtu}')(
            send_test(_mtu, _size, **UC_PAIR))
    for _size in (1, 3 * _mtu + 5):
        test(f'uc send_imm: {_size} B at path MTU {_mtu}')(
            send_test(_mtu, _size, imm=True, **UC_PAIR))
    for _size in (1, 3 * _mtu + 5, big(_mtu)):
        test(f'uc write: {_size} B at path MTU {_mtu}')(
            write_test(_mtu, _size))
        test(f'uc write_imm: {_size} B at path MTU {_mtu}')(
            write_test(_mtu, _size, imm=True))
test('uc send: 3 MTU + 5 B over IPv6 GIDs, MTU 1024')(
    send_test(1024, 3 * 1024 + 5, fam=6, **UC_PAIR))
test(f'uc write_imm: {size_name(big(4096))} over IPv6 GIDs, MTU 4096')(
    write_test(4096, big(4096), imm=True, fam=6))


test('uc send: 7,680 B gathered from 1 KiB + 512 B (MR 1) + 6 KiB (MR 2), '
     'scattered into 2 KiB + 8 KiB, MTU 4096')(send_sge_test(**UC_PAIR))


# ------------------------------------------------------ lost messages

def expect_dropped(before, dev, want, what):
    got = delta(before, counters(dev), DROPPED)
    if got != want:
        raise Fail(f'{what}: {DROPPED} moved by {got}, expected {want}')


@test('uc send: no receive posted: dropped silently and counted, requester '
      'SUCCESS, the next SEND is delivered whole')
def t_no_recv(t):
    p = uc_pair(t, mtu=1024)
    src = p.a.mr(t, 8192, fill=7)
    dst = p.b.mr(t, 8192, fill=8)
    before = counters(p.b.dev)
    post(p.a.qp, 0x40, e.IBV_WR_SEND, sges(src, [(0, 3000)]))
    expect_wc(poll(p.a.scq, 1, 'requester')[0], 'requester', 0x40, OK,
              e.IBV_WC_SEND)
    no_more(p.b.rcq, 'responder CQ', 0.5)
    expect_dropped(before, p.b.dev, 1, 'SEND without a receive')
    expect_qp(p.b.qp, e.IBV_QPS_RTS, 'responder')
    post_recv(p.b.qp, 0x41, sges(dst, [(0, 8192)]))
    post(p.a.qp, 0x42, e.IBV_WR_SEND, sges(src, [(4000, 2500)]))
    expect_wc(poll(p.a.scq, 1, 'requester')[0], 'second SEND', 0x42)
    expect_wc(poll(p.b.rcq, 1, 'responder')[0], 'second receive', 0x41, OK,
              e.IBV_WC_RECV, byte_len=2500)
    expect_bytes('second message', dst.read(2500, 0), src.read(2500, 4000))


@test('uc send: longer than the receive: dropped and counted, the receive '
      'kept for the next SEND, both QPs in RTS')
def t_too_long(t):
    p = uc_pair(t, mtu=1024)
    src = p.a.mr(t, 4096, fill=9)
    dst = p.b.mr(t, 4096, fill=10)
    old = dst.read(4096, 0)
    before = counters(p.b.dev)
    post_recv(p.b.qp, 0x50, sges(dst, [(0, 2000)]))
    post_recv(p.b.qp, 0x51, sges(dst, [(3000, 1000)]))
    post(p.a.qp, 0x52, e.IBV_WR_SEND, sges(src, [(0, 2500)]))
    expect_wc(poll(p.a.scq, 1, 'requester')[0], 'requester', 0x52, OK)
    no_more(p.b.rcq, 'responder CQ', 0.5)
    if delta(before, counters(p.b.dev), 'dropped_uc_msg') != 1:
        raise Fail('dropped_uc_msg did not count the message')
    expect_qp(p.b.qp, e.IBV_QPS_RTS, 'responder')
    expect_qp(p.a.qp, e.IBV_QPS_RTS, 'requester')
    # The first receive takes the next SEND, from its start.
    post(p.a.qp, 0x53, e.IBV_WR_SEND, sges(src, [(1000, 1500)]))
    expect_wc(poll(p.a.scq, 1, 'requester')[0], 'second SEND', 0x53, OK)
    expect_wc(poll(p.b.rcq, 1, 'responder')[0], 'first receive', 0x50, OK,
              e.IBV_WC_RECV, byte_len=1500)
    expect_bytes('the second message', dst.read(1500, 0), src.read(1500, 1000))
    expect_bytes('receive buffer beyond its SGE', dst.read(1000, 2000),
                 old[2000:3000])


def write_refused_test(how):
    def run(t):
        access = LW if how == 'qp' else UC_ACCESS
        p = uc_pair(t, mtu=1024, qp_access=access)
        src = p.a.mr(t, 8192, fill=11)
        mr_access = LW if how == 'mr' else LW | RW
        dst = p.b.mr(t, 8192, access=mr_access, fill=12)
        old = dst.read(8192, 0)
        rkey = dst.rkey ^ 0x5500 if how == 'rkey' else dst.rkey
        addr = dst.buf + (8192 - 100 if how == 'bounds' else 0)
        before = counters(p.b.dev)
        post(p.a.qp, 0x60, e.IBV_WR_RDMA_WRITE, sges(src, [(0, 3000)]),
             rkey=rkey, addr=addr)
        expect_wc(poll(p.a.scq, 1, 'requester')[0], 'requester', 0x60, OK,
                  e.IBV_WC_RDMA_WRITE)
        no_more(p.b.rcq, 'responder CQ', 0.5)
        expect_dropped(before, p.b.dev, 1, f'WRITE refused ({how})')
        expect_bytes('target memory', dst.read(8192, 0), old)
        expect_qp(p.b.qp, e.IBV_QPS_RTS, 'responder')
        expect_qp(p.a.qp, e.IBV_QPS_RTS, 'requester')
        # the next message is delivered: a SEND the refusal did not touch
        post_recv(p.b.qp, 0x61, sges(p.b.mr(t, 64), [(0, 64)]))
        post(p.a.qp, 0x62, e.IBV_WR_SEND_WITH_IMM, [], imm=0x77)
        expect_wc(poll(p.b.rcq, 1, 'responder')[0], 'SEND after it', 0x61,
                  OK, e.IBV_WC_RECV, byte_len=0, imm=0x77)
    return run


test('uc write: bad R_Key: dropped and counted, memory unchanged, both in '
     'RTS')(write_refused_test('rkey'))
test('uc write: past the end of the MR: dropped and counted, memory '
     'unchanged')(write_refused_test('bounds'))
test('uc write: MR without REMOTE_WRITE: dropped and counted')(
    write_refused_test('mr'))
test('uc write: QP without REMOTE_WRITE access: dropped and counted')(
    write_refused_test('qp'))


# ------------------------------------------------------------- SQE

@test('uc send: bad lkey: LOC_PROT_ERR, the QP goes to SQE, later WRs '
      'flush, receives still work, back to RTS sends again')
def t_sqe(t):
    p = uc_pair(t, mtu=1024)
    src = p.a.mr(t, 4096, fill=13)
    ret = p.a.mr(t, 4096, fill=14)
    post(p.a.qp, 0x70, e.IBV_WR_SEND, [SGE(src.buf, 100, src.lkey ^ 0x33)])
    expect_wc(poll(p.a.scq, 1, 'requester')[0], 'bad lkey SEND', 0x70,
              e.IBV_WC_LOC_PROT_ERR)
    expect_qp(p.a.qp, e.IBV_QPS_SQE, 'requester')
    post(p.a.qp, 0x71, e.IBV_WR_SEND, sges(src, [(0, 16)]))
    expect_wc(poll(p.a.scq, 1, 'WR posted in SQE')[0], 'WR posted in SQE',
              0x71, FLUSH)
    # its receive queue still works in SQE
    post_recv(p.a.qp, 0x72, sges(ret, [(0, 4096)]))
    post(p.b.qp, 0x73, e.IBV_WR_SEND, sges(p.b.mr(t, 2000, fill=15),
                                           [(0, 2000)]))
    expect_wc(poll(p.b.scq, 1, 'peer SEND')[0], 'peer SEND', 0x73)
    expect_wc(poll(p.a.rcq, 1, 'receive in SQE')[0], 'receive in SQE', 0x72,
              OK, e.IBV_WC_RECV, byte_len=2000)
    modify(p.a.qp, (QPAttr(qp_state=e.IBV_QPS_RTS), e.IBV_QP_STATE),
           'SQE->RTS')
    expect_qp(p.a.qp, e.IBV_QPS_RTS, 'requester after SQE->RTS')
    dst = p.b.mr(t, 4096, fill=16)
    post_recv(p.b.qp, 0x74, sges(dst, [(0, 4096)]))
    post(p.a.qp, 0x75, e.IBV_WR_SEND, sges(src, [(0, 3333)]))
    expect_wc(poll(p.a.scq, 1, 'SEND after RTS')[0], 'SEND after RTS', 0x75)
    expect_wc(poll(p.b.rcq, 1, 'its receive')[0], 'its receive', 0x74, OK,
              e.IBV_WC_RECV, byte_len=3333)
    expect_bytes('data after SQE->RTS', dst.read(3333, 0), src.read(3333, 0))


@test('uc read: RDMA READ is not a UC operation: LOC_QP_OP_ERR, QP to SQE')
def t_read_refused(t):
    p = uc_pair(t, mtu=1024)
    loc = p.a.mr(t, 4096, fill=17)
    rem = p.b.mr(t, 4096, fill=18)
    old = loc.read(4096, 0)
    post(p.a.qp, 0x80, e.IBV_WR_RDMA_READ, sges(loc, [(0, 512)]),
         rkey=rem.rkey, addr=rem.buf, flags=SIG)
    expect_wc(poll(p.a.scq, 1, 'requester')[0], 'READ on UC', 0x80,
              e.IBV_WC_LOC_QP_OP_ERR)
    expect_qp(p.a.qp, e.IBV_QPS_SQE, 'requester')
    expect_bytes('local buffer', loc.read(4096, 0), old)


@test('uc: 200 SENDs of mixed sizes in a row arrive in order, every byte '
      'checked, nothing dropped on a clean link')
def t_stream(t):
    p = uc_pair(t, mtu=1024, send_wr=64, recv_wr=64)
    sizes = [(i * 977) % 5000 + 1 for i in range(200)]
    src = p.a.mr(t, 5001, fill=19)
    dst = p.b.mr(t, 64 * 5001, fill=20)
    before = counters(p.b.dev)
    for start in range(0, 200, 32):
        batch = sizes[start:start + 32]
        for i in range(len(batch)):
            post_recv(p.b.qp, 0x1000 + start + i,
                      sges(dst, [(i * 5001, 5001)]))
        for i, size in enumerate(batch):
            post(p.a.qp, 0x2000 + start + i, e.IBV_WR_SEND,
                 sges(src, [((start + i) % 7, size - (start + i) % 7 or 1)]),
                 flags=SIG)
        poll(p.a.scq, len(batch), 'requester batch')
        rwcs = poll(p.b.rcq, len(batch), 'responder batch')
        for i, wc in enumerate(rwcs):
            off = (start + i) % 7
            length = sizes[start + i] - off or 1
            expect_wc(wc, f'receive {start + i}', 0x1000 + start + i, OK,
                      e.IBV_WC_RECV, byte_len=length)
            expect_bytes(f'message {start + i}', dst.read(length, i * 5001),
                         src.read(length, off))
    expect_dropped(before, p.b.dev, 0, 'clean stream')


if __name__ == '__main__':
    sys.exit(main(TESTS, __doc__))
