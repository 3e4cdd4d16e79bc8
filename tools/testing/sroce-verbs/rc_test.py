#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The sroce authors
"""RC operations between two sroce devices through stock rdma-core (pyverbs).

    rc_test.py [options] DEV0 DEV1

Every test connects its own RC QP pair, requester on DEV0 and responder on
DEV1 (or both on DEV0 for the local-delivery tests), over the GIDs of the
addresses given with --addr0/--addr1 (IPv4) and --addr0-6/--addr1-6
(IPv6), moves data patterns with SEND, SEND_IMM, SEND_INV, RDMA WRITE,
WRITE_IMM, RDMA READ and the atomics, and checks the data, the bytes around
it, the work completions of both sides, QP states and counters against
IBA vol 1 ch. 9.  A completion that does not arrive within a deadline is
a failure, never a hang.  Prints "ok N - name" or "not ok N - name:
reason" per test, then "# N passed, N failed"; exits 1 if any failed.
With SROCE_VOLUME=small in the environment (the VM harness's small volume)
the largest messages are 160 packets instead of 1 MiB.  Run it with
Debian's /usr/bin/python3 (python3-pyverbs), as root.
"""

import errno
import struct
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CompChannel
from pyverbs.mr import MW, MWBind, MWBindInfo
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QPAttr
from pyverbs.wr import SendWR

from rc_lib import (FLUSH, LW, MW_BIND, OK, RA, RR, RW, SIG, Pair, big,
                    counters, delta, expect_bytes, expect_qp, expect_wc,
                    main, no_more, one_send, pattern, poll, post, post_recv,
                    sges, size_name, st)
from verbs_lib import (EVENT_TIMEOUT, NO_EVENT_WAIT, Fail, check, expect_eq,
                       ib_event_fds, modify, new_event_fd, readable,
                       registry)


TESTS, test = registry()

# ------------------------------------------------------------ SEND tests

def send_test(mtu, size, imm=False, fam=4, **pair):
    """A SEND (with immediate) of size bytes; pair: more Pair options
    (uc_test.py runs the same test over UC)."""
    def run(t):
        p = Pair(t, mtu=mtu, fam=fam, **pair)
        opcode = e.IBV_WR_SEND_WITH_IMM if imm else e.IBV_WR_SEND
        imm_val = 0x1a2b3c4d if imm else None
        src, dst, before = one_send(t, p, size, 0x10, 0x20, opcode, imm_val)
        (swc,) = poll(p.a.scq, 1, 'requester')
        expect_wc(swc, 'requester', 0x10, OK, e.IBV_WC_SEND, p.a.qpn)
        (rwc,) = poll(p.b.rcq, 1, 'responder')
        expect_wc(rwc, 'responder', 0x20, OK, e.IBV_WC_RECV, p.b.qpn,
                  size, imm_val,
                  e.IBV_WC_WITH_IMM if imm else 0)
        expect_bytes('received data', dst.read(size, 0) if size else b'',
                     src.read(size, 0) if size else b'')
        expect_bytes('bytes beyond the message', dst.read(64, size),
                     before[size:])
        expect_qp(p.a.qp, e.IBV_QPS_RTS, 'requester after')
        expect_qp(p.b.qp, e.IBV_QPS_RTS, 'responder after')
        no_more(p.a.scq, 'requester CQ', 0)
    return run


SIZES = lambda mtu: (0, 1, mtu - 1, mtu, mtu + 1, 3 * mtu + 5,  # noqa
                     big(mtu))

for _mtu in (1024, 4096):
    for _size in SIZES(_mtu):
        test(f'send: {_size} B at path MTU {_mtu}')(send_test(_mtu, _size))
    for _size in SIZES(_mtu):
        test(f'send_imm: {_size} B at path MTU {_mtu}')(
            send_test(_mtu, _size, imm=True))
test('send: 3 MTU + 5 B over IPv6 GIDs, MTU 1024')(
    send_test(1024, 3 * 1024 + 5, fam=6))
test(f'send_imm: {size_name(big(4096))} over IPv6 GIDs, MTU 4096')(
    send_test(4096, big(4096), imm=True, fam=6))


def send_sge_test(**pair):
    """The seed walkthrough: gather 7,680 B from three SGEs of two MRs,
    scatter into 2 KiB + 8 KiB at MTU 4096; pair: more Pair options."""
    return lambda t: send_sge_run(t, Pair(t, mtu=4096, **pair))


def send_sge_run(t, p):
    mr1 = p.a.mr(t, 4096, fill=1)
    mr2 = p.a.mr(t, 8192, fill=2)
    gather = sges(mr1, [(100, 1024), (2048, 512)]) + sges(mr2, [(8, 6144)])
    want = mr1.read(1024, 100) + mr1.read(512, 2048) + mr2.read(6144, 8)
    r1 = p.b.mr(t, 4096, fill=3)
    r2 = p.b.mr(t, 16384, fill=4)
    old1, old2 = r1.read(4096, 0), r2.read(16384, 0)
    post_recv(p.b.qp, 0x21, sges(r1, [(512, 2048)]) + sges(r2, [(0, 8192)]))
    post(p.a.qp, 0x11, e.IBV_WR_SEND, gather)
    expect_wc(poll(p.a.scq, 1, 'requester')[0], 'requester', 0x11, OK,
              e.IBV_WC_SEND)
    expect_wc(poll(p.b.rcq, 1, 'responder')[0], 'responder', 0x21, OK,
              e.IBV_WC_RECV, byte_len=7680)
    expect_bytes('first receive SGE', r1.read(2048, 512), want[:2048])
    expect_bytes('second receive SGE', r2.read(5632, 0), want[2048:])
    expect_bytes('the last 2,560 B of the 8 KiB SGE', r2.read(2560, 5632),
                 old2[5632:8192])
    expect_bytes('bytes around the first SGE', r1.read(512, 0) +
                 r1.read(1536, 2560), old1[:512] + old1[2560:])
    expect_bytes('the rest of MR 2', r2.read(8192, 8192), old2[8192:])


test('send: 7,680 B gathered from 1 KiB + 512 B (MR 1) + 6 KiB (MR 2), '
     'scattered into 2 KiB + 8 KiB')(send_sge_test())


@test('send: larger than the posted receive: REM_INV_REQ_ERR / LOC_LEN_ERR, '
      'both QPs to ERR, later WRs flush')
def t_send_too_long(t):
    p = Pair(t, mtu=1024)
    src = p.a.mr(t, 4096, fill=5)
    dst = p.b.mr(t, 4096, fill=6)
    old = dst.read(4096, 0)
    post_recv(p.b.qp, 0x22, sges(dst, [(0, 2000)]))
    post_recv(p.b.qp, 0x23, sges(dst, [(3000, 1000)]))
    post(p.a.qp, 0x12, e.IBV_WR_SEND, sges(src, [(0, 2500)]))
    post(p.a.qp, 0x13, e.IBV_WR_SEND, sges(src, [(0, 16)]))
    wcs = poll(p.a.scq, 2, 'requester')
    expect_wc(wcs[0], 'requester', 0x12, e.IBV_WC_REM_INV_REQ_ERR)
    expect_wc(wcs[1], 'the WR after it', 0x13, FLUSH)
    rwcs = poll(p.b.rcq, 2, 'responder')
    expect_wc(rwcs[0], 'responder receive', 0x22, e.IBV_WC_LOC_LEN_ERR)
    expect_wc(rwcs[1], 'second receive', 0x23, FLUSH)
    expect_qp(p.a.qp, e.IBV_QPS_ERR, 'requester')
    expect_qp(p.b.qp, e.IBV_QPS_ERR, 'responder')
    expect_bytes('receive buffer beyond its SGE', dst.read(2096, 2000),
                 old[2000:])
    post(p.a.qp, 0x14, e.IBV_WR_SEND, sges(src, [(0, 16)]))
    expect_wc(poll(p.a.scq, 1, 'post after ERR')[0], 'post after ERR', 0x14,
              FLUSH)


# --------------------------------------------------------- WRITE / READ

def write_test(mtu, size, fam=4, imm=False):
    def run(t):
        p = Pair(t, mtu=mtu, fam=fam)
        src = p.a.mr(t, size, fill=size + 3)
        dst = p.b.mr(t, size + 128, fill=size + 4)
        rbuf = p.b.mr(t, 64, fill=9)
        old, rold = dst.read(size + 128, 0), rbuf.read(64, 0)
        imm_val = 0x55aa1234 if imm else None
        if imm:
            post_recv(p.b.qp, 0x24, sges(rbuf, [(0, 64)]))
            post_recv(p.b.qp, 0x25, sges(rbuf, [(0, 64)]))
        opcode = e.IBV_WR_RDMA_WRITE_WITH_IMM if imm else e.IBV_WR_RDMA_WRITE
        post(p.a.qp, 0x15, opcode, sges(src, [(0, size)]),
             rkey=dst.rkey, addr=dst.buf + 64, imm=imm_val)
        expect_wc(poll(p.a.scq, 1, 'requester')[0], 'requester', 0x15, OK,
                  e.IBV_WC_RDMA_WRITE, p.a.qpn)
        if imm:
            (rwc,) = poll(p.b.rcq, 1, 'responder')
            expect_wc(rwc, 'responder', 0x24, OK,
                      e.IBV_WC_RECV_RDMA_WITH_IMM, p.b.qpn, size, imm_val,
                      e.IBV_WC_WITH_IMM)
            expect_bytes('receive buffer of WRITE_IMM', rbuf.read(64, 0),
                         rold)
        no_more(p.b.rcq, 'responder CQ', 0.1)
        got = dst.read(size + 128, 0)
        expect_bytes('written data', got[64:64 + size],
                     src.read(size, 0) if size else b'')
        expect_bytes('bytes before the target', got[:64], old[:64])
        expect_bytes('bytes after the target', got[64 + size:],
                     old[64 + size:])
        if imm:
            # the second receive is still there: a SEND lands in it
            post(p.a.qp, 0x16, e.IBV_WR_SEND, sges(src, [(0, 1)]))
            expect_wc(poll(p.b.rcq, 1, 'SEND after WRITE_IMM')[0],
                      'SEND after WRITE_IMM', 0x25, OK, e.IBV_WC_RECV,
                      byte_len=1)
    return run


def read_test(mtu, size, fam=4):
    def run(t):
        p = Pair(t, mtu=mtu, fam=fam)
        src = p.b.mr(t, size + 64, fill=size + 5)
        dst = p.a.mr(t, size + 128, fill=size + 6)
        old, want = dst.read(size + 128, 0), src.read(size + 64, 0)
        post(p.a.qp, 0x17, e.IBV_WR_RDMA_READ,
             sges(dst, [(64, size)]), rkey=src.rkey,
             addr=src.buf + 32)
        expect_wc(poll(p.a.scq, 1, 'requester')[0], 'requester', 0x17, OK,
                  e.IBV_WC_RDMA_READ, p.a.qpn)
        got = dst.read(size + 128, 0)
        expect_bytes('read data', got[64:64 + size], want[32:32 + size])
        expect_bytes('bytes before', got[:64], old[:64])
        expect_bytes('bytes after', got[64 + size:], old[64 + size:])
        expect_bytes('remote memory', src.read(size + 64, 0), want)
        no_more(p.b.rcq, 'responder CQ', 0)
    return run


for _mtu in (1024, 4096):
    for _size in SIZES(_mtu):
        test(f'write: {_size} B at path MTU {_mtu}')(write_test(_mtu, _size))
    for _size in (0, _mtu + 1, big(_mtu)):
        test(f'write_imm: {_size} B at path MTU {_mtu}, one receive WQE')(
            write_test(_mtu, _size, imm=True))
    for _size in SIZES(_mtu):
        test(f'read: {_size} B at path MTU {_mtu}')(read_test(_mtu, _size))
test('write: 3 MTU + 5 B over IPv6 GIDs')(write_test(1024, 3077, fam=6))
test('read: 3 MTU + 5 B over IPv6 GIDs')(read_test(1024, 3077, fam=6))
test(f'write: {size_name(big(4096))} over IPv6 GIDs, MTU 4096')(
    write_test(4096, big(4096), fam=6))
test(f'read: {size_name(big(4096))} over IPv6 GIDs, MTU 4096')(
    read_test(4096, big(4096), fam=6))


@test('write: gathered from 3 SGEs of 2 MRs (7,680 B at MTU 1024)')
def t_write_sge(t):
    p = Pair(t, mtu=1024)
    mr1, mr2 = p.a.mr(t, 4096, fill=11), p.a.mr(t, 8192, fill=12)
    gather = sges(mr1, [(0, 1024), (3000, 512)]) + sges(mr2, [(100, 6144)])
    want = mr1.read(1024, 0) + mr1.read(512, 3000) + mr2.read(6144, 100)
    dst = p.b.mr(t, 8192, fill=13)
    old = dst.read(8192, 0)
    post(p.a.qp, 0x18, e.IBV_WR_RDMA_WRITE, gather, rkey=dst.rkey,
         addr=dst.buf + 1)
    expect_wc(poll(p.a.scq, 1, 'requester')[0], 'requester', 0x18)
    got = dst.read(8192, 0)
    expect_bytes('written data', got[1:7681], want)
    expect_bytes('around it', got[:1] + got[7681:], old[:1] + old[7681:])


@test('read: 7,680 B scattered into 3 local SGEs of 2 MRs, MTU 1024')
def t_read_sge(t):
    p = Pair(t, mtu=1024)
    src = p.b.mr(t, 8192, fill=14)
    want = src.read(7680, 7)
    mr1, mr2 = p.a.mr(t, 4096, fill=15), p.a.mr(t, 8192, fill=16)
    old1, old2 = mr1.read(4096, 0), mr2.read(8192, 0)
    post(p.a.qp, 0x19, e.IBV_WR_RDMA_READ,
         sges(mr1, [(10, 1000), (2048, 2000)]) + sges(mr2, [(0, 4680)]),
         rkey=src.rkey, addr=src.buf + 7)
    expect_wc(poll(p.a.scq, 1, 'requester')[0], 'requester', 0x19, OK,
              e.IBV_WC_RDMA_READ)
    got1, got2 = mr1.read(4096, 0), mr2.read(8192, 0)
    expect_bytes('SGE 1', got1[10:1010], want[:1000])
    expect_bytes('SGE 2', got1[2048:4048], want[1000:3000])
    expect_bytes('SGE 3', got2[:4680], want[3000:])
    expect_bytes('MR 1 outside the SGEs', got1[:10] + got1[1010:2048] +
                 got1[4048:], old1[:10] + old1[1010:2048] + old1[4048:])
    expect_bytes('MR 2 beyond SGE 3', got2[4680:], old2[4680:])


# --------------------------------------------------------------- atomics

def u64(val):
    return struct.pack('<Q', val & (2 ** 64 - 1))


def get64(mr, off):
    return struct.unpack('<Q', mr.read(8, off))[0]


@test('atomic: CMP_SWAP taken and not taken return the old value')
def t_cmp_swap(t):
    p = Pair(t)
    tgt = p.b.mr(t, 64, fill=17)
    res = p.a.mr(t, 64, fill=18)
    first = 0x0123456789abcdef
    tgt.write(u64(first), 8, 16)
    post(p.a.qp, 0x30, e.IBV_WR_ATOMIC_CMP_AND_SWP, sges(res, [(0, 8)]),
         rkey=tgt.rkey, addr=tgt.buf + 16,
         atomic=(first, 0xfedcba9876543210))
    expect_wc(poll(p.a.scq, 1, 'taken')[0], 'taken', 0x30, OK,
              e.IBV_WC_COMP_SWAP)
    expect_eq('value returned by the taken swap', get64(res, 0), first)
    expect_eq('target after the taken swap', get64(tgt, 16),
              0xfedcba9876543210)
    post(p.a.qp, 0x31, e.IBV_WR_ATOMIC_CMP_AND_SWP, sges(res, [(8, 8)]),
         rkey=tgt.rkey, addr=tgt.buf + 16, atomic=(first, 0x1111))
    expect_wc(poll(p.a.scq, 1, 'not taken')[0], 'not taken', 0x31, OK,
              e.IBV_WC_COMP_SWAP)
    expect_eq('value returned by the failed compare', get64(res, 8),
              0xfedcba9876543210)
    expect_eq('target after the failed compare', get64(tgt, 16),
              0xfedcba9876543210)
    old = pattern(64, 17)
    expect_bytes('target bytes around the word', tgt.read(16, 0) +
                 tgt.read(40, 24), old[:16] + old[24:])
    expect_bytes('result bytes around', res.read(48, 16),
                 pattern(64, 18)[16:])


@test('atomic: 100 sequential FETCH_ADDs return the running sum (wraps)')
def t_fetch_add(t):
    p = Pair(t, send_wr=128)
    tgt = p.b.mr(t, 64, fill=19)
    res = p.a.mr(t, 800, fill=20)
    init = 2 ** 64 - 5000
    tgt.write(u64(init), 8, 8)
    for i in range(100):
        post(p.a.qp, 0x100 + i, e.IBV_WR_ATOMIC_FETCH_AND_ADD,
             sges(res, [(8 * i, 8)]), rkey=tgt.rkey, addr=tgt.buf + 8,
             atomic=(i + 1 + (i << 40), 0))
    wcs = poll(p.a.scq, 100, '100 FETCH_ADDs')
    val = init
    for i, wc in enumerate(wcs):
        expect_wc(wc, f'FETCH_ADD {i}', 0x100 + i, OK, e.IBV_WC_FETCH_ADD)
        expect_eq(f'FETCH_ADD {i} returned', get64(res, 8 * i),
                  val & (2 ** 64 - 1))
        val += i + 1 + (i << 40)
    expect_eq('final target value', get64(tgt, 8), val & (2 ** 64 - 1))


@test('atomic: unaligned address: refused (post EINVAL or REM_INV_REQ_ERR), '
      'target unchanged')
def t_atomic_unaligned(t):
    """IBA 9.4.5: an atomic's VA is 8-byte aligned.  Stock librxe refuses a
    misaligned one in ibv_post_send (EINVAL) before the kernel sees it; a
    provider that lets it through must get an invalid request NAK."""
    p = Pair(t)
    tgt = p.b.mr(t, 64, fill=21)
    res = p.a.mr(t, 64, fill=22)
    old = tgt.read(64, 0)
    try:
        post(p.a.qp, 0x32, e.IBV_WR_ATOMIC_FETCH_AND_ADD, sges(res, [(0, 8)]),
             rkey=tgt.rkey, addr=tgt.buf + 12, atomic=(1, 0))
    except PyverbsRDMAError as err:
        expect_eq('errno of the refused post', err.error_code, errno.EINVAL)
        no_more(p.a.scq, 'requester CQ after the refused post')
        # the QP is untouched: an aligned FETCH_ADD still works
        post(p.a.qp, 0x33, e.IBV_WR_ATOMIC_FETCH_AND_ADD,
             sges(res, [(8, 8)]), rkey=tgt.rkey, addr=tgt.buf + 16,
             atomic=(1, 0))
        expect_wc(poll(p.a.scq, 1, 'aligned FETCH_ADD')[0],
                  'aligned FETCH_ADD', 0x33, OK, e.IBV_WC_FETCH_ADD)
        expect_eq('value returned', get64(res, 8), get64(tgt, 16) - 1)
        expect_bytes('target outside the aligned word',
                     tgt.read(16, 0) + tgt.read(40, 24),
                     old[:16] + old[24:])
        return
    expect_wc(poll(p.a.scq, 1, 'requester')[0], 'requester', 0x32,
              e.IBV_WC_REM_INV_REQ_ERR)
    expect_qp(p.a.qp, e.IBV_QPS_ERR, 'requester')
    expect_bytes('target', tgt.read(64, 0), old)
    expect_bytes('result buffer', res.read(64, 0), pattern(64, 22))


# ------------------------------------------------------- many outstanding

def outstanding_test(rd_atomic):
    def run(t):
        p = Pair(t, mtu=1024, send_wr=128, rd_atomic=rd_atomic,
                 dest_rd_atomic=16)
        chunk = 4096 + 100
        src = p.a.mr(t, 64 * chunk, fill=23)
        rdst = p.a.mr(t, 64 * chunk, fill=24)
        wdst = p.b.mr(t, 64 * chunk, fill=25)
        rsrc = p.b.mr(t, 64 * chunk, fill=26)
        for i in range(64):
            off = i * chunk
            post(p.a.qp, 0x200 + 2 * i, e.IBV_WR_RDMA_WRITE,
                 sges(src, [(off, chunk)]), rkey=wdst.rkey,
                 addr=wdst.buf + off)
            post(p.a.qp, 0x201 + 2 * i, e.IBV_WR_RDMA_READ,
                 sges(rdst, [(off, chunk)]), rkey=rsrc.rkey,
                 addr=rsrc.buf + off)
        wcs = poll(p.a.scq, 128, '64 WRITEs + 64 READs', 60)
        for i, wc in enumerate(wcs):
            expect_wc(wc, f'WR {i}', 0x200 + i, OK,
                      e.IBV_WC_RDMA_READ if i & 1 else e.IBV_WC_RDMA_WRITE)
        expect_bytes('written data', wdst.read(64 * chunk, 0),
                     src.read(64 * chunk, 0))
        expect_bytes('read data', rdst.read(64 * chunk, 0),
                     rsrc.read(64 * chunk, 0))
    return run


test('outstanding: 64 WRITEs + 64 READs, max_rd_atomic 1')(
    outstanding_test(1))
test('outstanding: 64 WRITEs + 64 READs, max_rd_atomic 16')(
    outstanding_test(16))


@test('unsignaled: 256 WRITEs, every 16th signaled, SQ of 16: 16 CQEs')
def t_unsignaled(t):
    p = Pair(t, mtu=1024, send_wr=16)
    src = p.a.mr(t, 256 * 100, fill=27)
    dst = p.b.mr(t, 256 * 100, fill=28)
    for batch in range(16):
        for j in range(16):
            i = batch * 16 + j
            try:
                post(p.a.qp, 0x300 + i, e.IBV_WR_RDMA_WRITE,
                     sges(src, [(i * 100, 100)]), rkey=dst.rkey,
                     addr=dst.buf + i * 100, flags=SIG if j == 15 else 0)
            except Exception as err:
                raise Fail(f'post of WR {i} failed: {err}') from None
        (wc,) = poll(p.a.scq, 1, f'batch {batch}')
        expect_wc(wc, f'batch {batch}', 0x300 + batch * 16 + 15, OK,
                  e.IBV_WC_RDMA_WRITE)
    no_more(p.a.scq, 'requester CQ')
    expect_bytes('written data', dst.read(25600, 0), src.read(25600, 0))


@test('fence: READ fenced after a WRITE to the same address sees the WRITE')
def t_fence(t):
    p = Pair(t, mtu=1024)
    src = p.a.mr(t, 5000, fill=29)
    back = p.a.mr(t, 5000, fill=30)
    dst = p.b.mr(t, 5000, fill=31)
    post(p.a.qp, 0x40, e.IBV_WR_RDMA_WRITE, sges(src, [(0, 5000)]),
         rkey=dst.rkey, addr=dst.buf)
    post(p.a.qp, 0x41, e.IBV_WR_RDMA_READ, sges(back, [(0, 5000)]),
         rkey=dst.rkey, addr=dst.buf, flags=SIG | e.IBV_SEND_FENCE)
    wcs = poll(p.a.scq, 2, 'WRITE + fenced READ')
    expect_wc(wcs[0], 'WRITE', 0x40, OK, e.IBV_WC_RDMA_WRITE)
    expect_wc(wcs[1], 'READ', 0x41, OK, e.IBV_WC_RDMA_READ)
    expect_bytes('read back', back.read(5000, 0), src.read(5000, 0))


@test('solicited: a solicited SEND wakes a CQ armed solicited-only, an '
      'unsolicited one does not')
def t_solicited(t):
    ctx = t.ctx(t.env.dev1)
    before = ib_event_fds()
    chan = CompChannel(ctx)
    fd = new_event_fd(before, 'completion channel')
    t.hold(chan)
    p = Pair(t, chan=chan)
    src = p.a.mr(t, 64, fill=32)
    dst = p.b.mr(t, 128, fill=33)
    post_recv(p.b.qp, 0x26, sges(dst, [(0, 64)]))
    post_recv(p.b.qp, 0x27, sges(dst, [(64, 64)]))
    p.b.rcq.req_notify(1)
    post(p.a.qp, 0x42, e.IBV_WR_SEND, sges(src, [(0, 64)]))
    expect_wc(poll(p.b.rcq, 1, 'unsolicited SEND')[0], 'unsolicited SEND',
              0x26, OK, e.IBV_WC_RECV, byte_len=64)
    check(not readable(fd, NO_EVENT_WAIT),
          'completion event for an unsolicited SEND on a solicited-only CQ')
    post(p.a.qp, 0x43, e.IBV_WR_SEND_WITH_IMM, sges(src, [(0, 32)]),
         flags=SIG | e.IBV_SEND_SOLICITED, imm=0x77)
    check(readable(fd, EVENT_TIMEOUT),
          f'no completion event within {EVENT_TIMEOUT}s of a solicited SEND')
    chan.get_cq_event(p.b.rcq)
    p.b.rcq.ack_events(1)
    expect_wc(poll(p.b.rcq, 1, 'solicited SEND')[0], 'solicited SEND', 0x27,
              OK, e.IBV_WC_RECV, byte_len=32, imm=0x77)
    poll(p.a.scq, 2, 'requester')


# ---------------------------------------------------------------- errors

def access_error_test(opcode, access, how, want=e.IBV_WC_REM_ACCESS_ERR):
    """One remote op a->b that b must refuse; checks both sides."""
    def run(t):
        p = Pair(t, mtu=1024)
        tgt = p.b.mr(t, 8192, access=access, fill=34)
        loc = p.a.mr(t, 8192, fill=35)
        rbuf = p.b.mr(t, 64, fill=36)
        old_t, old_l = tgt.read(8192, 0), loc.read(8192, 0)
        rkey, addr, length = tgt.rkey, tgt.buf, 256
        if how == 'rkey':
            rkey = (tgt.rkey + 0x1000) & 0xffffffff
        elif how == 'bounds':
            addr, length = tgt.buf + 8192 - 100, 200
        post_recv(p.b.qp, 0x28, sges(rbuf, [(0, 64)]))
        atomic = None
        if opcode in (e.IBV_WR_ATOMIC_CMP_AND_SWP,
                      e.IBV_WR_ATOMIC_FETCH_AND_ADD):
            atomic, length = (struct.unpack('<Q', old_t[:8])[0], 5), 8
        post(p.a.qp, 0x50, opcode, sges(loc, [(0, length)]), rkey=rkey,
             addr=addr, atomic=atomic)
        post(p.a.qp, 0x51, e.IBV_WR_SEND, sges(loc, [(0, 8)]))
        wcs = poll(p.a.scq, 2, 'requester')
        expect_wc(wcs[0], 'requester', 0x50, want)
        expect_wc(wcs[1], 'the WR after it', 0x51, FLUSH)
        expect_qp(p.a.qp, e.IBV_QPS_ERR, 'requester')
        expect_qp(p.b.qp, e.IBV_QPS_ERR, 'responder')
        expect_wc(poll(p.b.rcq, 1, 'responder receive')[0],
                  'responder receive', 0x28, FLUSH)
        post(p.a.qp, 0x52, e.IBV_WR_RDMA_WRITE, sges(loc, [(0, 8)]),
             rkey=tgt.rkey, addr=tgt.buf)
        expect_wc(poll(p.a.scq, 1, 'post after ERR')[0], 'post after ERR',
                  0x52, FLUSH)
        time.sleep(0.1)
        expect_bytes('target memory', tgt.read(8192, 0), old_t)
        expect_bytes('local memory', loc.read(8192, 0), old_l)
        expect_bytes('responder receive buffer', rbuf.read(64, 0),
                     pattern(64, 36))
    return run


ALL_REMOTE = LW | RW | RR | RA
test('error: WRITE with a bad rkey: REM_ACCESS_ERR')(
    access_error_test(e.IBV_WR_RDMA_WRITE, ALL_REMOTE, 'rkey'))
test('error: WRITE past the end of the MR: REM_ACCESS_ERR')(
    access_error_test(e.IBV_WR_RDMA_WRITE, ALL_REMOTE, 'bounds'))
test('error: WRITE to an MR without REMOTE_WRITE: REM_ACCESS_ERR')(
    access_error_test(e.IBV_WR_RDMA_WRITE, LW | RR | RA, 'access'))
test('error: READ with a bad rkey: REM_ACCESS_ERR')(
    access_error_test(e.IBV_WR_RDMA_READ, ALL_REMOTE, 'rkey'))
test('error: READ past the end of the MR: REM_ACCESS_ERR')(
    access_error_test(e.IBV_WR_RDMA_READ, ALL_REMOTE, 'bounds'))
test('error: READ from an MR without REMOTE_READ: REM_ACCESS_ERR')(
    access_error_test(e.IBV_WR_RDMA_READ, LW | RW | RA, 'access'))
test('error: CMP_SWAP on an MR without REMOTE_ATOMIC: REM_ACCESS_ERR')(
    access_error_test(e.IBV_WR_ATOMIC_CMP_AND_SWP, LW | RW | RR, 'access'))
test('error: FETCH_ADD on an MR without REMOTE_ATOMIC: REM_ACCESS_ERR')(
    access_error_test(e.IBV_WR_ATOMIC_FETCH_AND_ADD, LW | RW | RR, 'access'))


# ----------------------------------------------------------- RNR, timeout

@test('rnr: receive posted 0.5 s late, rnr_retry 7: SEND succeeds, '
      'RNR NAKs counted')
def t_rnr_late(t):
    c0, c1 = counters(t.env.dev0), counters(t.env.dev1)
    p = Pair(t, mtu=1024, rnr_retry=7, min_rnr_timer=14)
    src = p.a.mr(t, 3000, fill=37)
    dst = p.b.mr(t, 3000, fill=38)
    post(p.a.qp, 0x60, e.IBV_WR_SEND, sges(src, [(0, 3000)]))
    time.sleep(0.5)
    _, early = p.a.scq.poll(1)
    check(not early, f'requester completed before any receive: status '
          f'{st(early[0].status) if early else ""}')
    post_recv(p.b.qp, 0x29, sges(dst, [(0, 3000)]))
    expect_wc(poll(p.a.scq, 1, 'requester')[0], 'requester', 0x60)
    expect_wc(poll(p.b.rcq, 1, 'responder')[0], 'responder', 0x29, OK,
              e.IBV_WC_RECV, byte_len=3000)
    expect_bytes('received data', dst.read(3000, 0), src.read(3000, 0))
    a1, b1 = counters(t.env.dev0), counters(t.env.dev1)
    check(delta(c1, b1, 'send_rnr_err') >= 1,
          f'{t.env.dev1} send_rnr_err did not move')
    check(delta(c0, a1, 'rcvd_rnr_err') >= 1,
          f'{t.env.dev0} rcvd_rnr_err did not move')


@test('rnr: no receive, rnr_retry 0: RNR_RETRY_EXC_ERR, QP to ERR')
def t_rnr_exceeded(t):
    c0 = counters(t.env.dev0)
    p = Pair(t, mtu=1024, rnr_retry=0)
    src = p.a.mr(t, 64, fill=39)
    post(p.a.qp, 0x61, e.IBV_WR_SEND, sges(src, [(0, 64)]))
    post(p.a.qp, 0x62, e.IBV_WR_SEND, sges(src, [(0, 64)]))
    wcs = poll(p.a.scq, 2, 'requester')
    expect_wc(wcs[0], 'requester', 0x61, e.IBV_WC_RNR_RETRY_EXC_ERR)
    expect_wc(wcs[1], 'the WR after it', 0x62, FLUSH)
    expect_qp(p.a.qp, e.IBV_QPS_ERR, 'requester')
    check(delta(c0, counters(t.env.dev0), 'retry_rnr_exceeded_err') >= 1,
          'retry_rnr_exceeded_err did not move')


@test('timeout: peer QP destroyed, timeout 12, retry_cnt 2: RETRY_EXC_ERR '
      'within 5 s')
def t_timeout(t):
    c0 = counters(t.env.dev0)
    p = Pair(t, mtu=1024, timeout=12, retry_cnt=2)
    src = p.a.mr(t, 64, fill=40)
    p.b.qp.close()
    start = time.monotonic()
    post(p.a.qp, 0x63, e.IBV_WR_SEND, sges(src, [(0, 64)]))
    (wc,) = poll(p.a.scq, 1, 'requester', 30)
    took = time.monotonic() - start
    expect_wc(wc, 'requester', 0x63, e.IBV_WC_RETRY_EXC_ERR)
    check(took < 5.0, f'RETRY_EXC_ERR after {took:.1f}s (3 x 16.8 ms '
          'expected)')
    expect_qp(p.a.qp, e.IBV_QPS_ERR, 'requester')
    check(delta(c0, counters(t.env.dev0), 'retry_exceeded_err') >= 1,
          'retry_exceeded_err did not move')


@test('timeout: peer QP in ERR: RETRY_EXC_ERR within 5 s')
def t_timeout_err(t):
    p = Pair(t, mtu=1024, timeout=12, retry_cnt=2)
    src = p.a.mr(t, 64, fill=41)
    modify(p.b.qp, (QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE), '->ERR')
    start = time.monotonic()
    post(p.a.qp, 0x64, e.IBV_WR_SEND, sges(src, [(0, 64)]))
    (wc,) = poll(p.a.scq, 1, 'requester', 30)
    took = time.monotonic() - start
    expect_wc(wc, 'requester', 0x64, e.IBV_WC_RETRY_EXC_ERR)
    check(took < 5.0, f'RETRY_EXC_ERR after {took:.1f}s')


# --------------------------------------------------------- memory windows

MR_BINDABLE = LW | RW | RR | MW_BIND
MW_ACCESS = RW | RR


def mw_write(p, t, rkey, addr, length, wr_id):
    src = p.a.mr(t, length, fill=wr_id)
    post(p.a.qp, wr_id, e.IBV_WR_RDMA_WRITE, sges(src, [(0, length)]),
         rkey=rkey, addr=addr)
    return src


def mw_window_test(mw_type):
    def run(t):
        p = Pair(t)
        tgt = p.b.mr(t, 16384, access=MR_BINDABLE, fill=42)
        old = tgt.read(16384, 0)
        mw = MW(p.b.pd, mw_type)
        t.hold(mw)
        info = MWBindInfo(tgt, tgt.buf + 4096, 4096, MW_ACCESS)
        if mw_type == e.IBV_MW_TYPE_1:
            p.b.qp.bind_mw(mw, MWBind(info, SIG, wr_id=0x70))
            rkey = None
        else:
            wr = SendWR(wr_id=0x70, opcode=e.IBV_WR_BIND_MW, num_sge=0,
                        send_flags=SIG)
            wr.set_bind_wr(mw, info)
            p.b.qp.post_send(wr)
            rkey = wr.rkey
        expect_wc(poll(p.b.scq, 1, 'bind')[0], 'bind', 0x70, OK,
                  e.IBV_WC_BIND_MW)
        if rkey is None:
            rkey = mw.rkey
        src = mw_write(p, t, rkey, tgt.buf + 4096 + 100, 1000, 0x71)
        expect_wc(poll(p.a.scq, 1, 'WRITE inside')[0], 'WRITE inside', 0x71)
        want = old[:4196] + src.read(1000, 0) + old[5196:]
        expect_bytes('MR after the WRITE inside the window',
                     tgt.read(16384, 0), want)
        mw_write(p, t, rkey, tgt.buf + 8192 - 100, 200, 0x72)
        expect_wc(poll(p.a.scq, 1, 'WRITE across the end')[0],
                  'WRITE across the end', 0x72, e.IBV_WC_REM_ACCESS_ERR)
        expect_qp(p.b.qp, e.IBV_QPS_ERR, 'responder')
        expect_bytes('MR after the refused WRITE', tgt.read(16384, 0), want)
    return run


test('mw: type 1 (ibv_bind_mw): WRITE inside the window, refused outside')(
    mw_window_test(e.IBV_MW_TYPE_1))
test('mw: type 2B (posted BIND_MW): WRITE inside the window, refused '
     'outside')(mw_window_test(e.IBV_MW_TYPE_2))


@test('mw: SEND_WITH_INV invalidates a type 2B window; access then refused')
def t_mw_send_inv(t):
    p = Pair(t)
    tgt = p.b.mr(t, 8192, access=MR_BINDABLE, fill=43)
    old = tgt.read(8192, 0)
    rbuf = p.b.mr(t, 64, fill=44)
    mw = MW(p.b.pd, e.IBV_MW_TYPE_2)
    t.hold(mw)
    wr = SendWR(wr_id=0x73, opcode=e.IBV_WR_BIND_MW, num_sge=0,
                send_flags=SIG)
    wr.set_bind_wr(mw, MWBindInfo(tgt, tgt.buf, 8192, MW_ACCESS))
    p.b.qp.post_send(wr)
    expect_wc(poll(p.b.scq, 1, 'bind')[0], 'bind', 0x73, OK, e.IBV_WC_BIND_MW)
    rkey = wr.rkey
    src = p.a.mr(t, 64, fill=45)
    post_recv(p.b.qp, 0x2a, sges(rbuf, [(0, 64)]))
    post(p.a.qp, 0x74, e.IBV_WR_SEND_WITH_INV, sges(src, [(0, 48)]),
         imm=rkey)
    expect_wc(poll(p.a.scq, 1, 'SEND_WITH_INV')[0], 'SEND_WITH_INV', 0x74,
              OK, e.IBV_WC_SEND)
    (rwc,) = poll(p.b.rcq, 1, 'responder')
    expect_wc(rwc, 'responder', 0x2a, OK, e.IBV_WC_RECV, byte_len=48,
              flags=e.IBV_WC_WITH_INV)
    expect_eq('invalidated_rkey', rwc.imm_data, rkey)
    expect_bytes('received data', rbuf.read(48, 0), src.read(48, 0))
    mw_write(p, t, rkey, tgt.buf, 16, 0x75)
    expect_wc(poll(p.a.scq, 1, 'WRITE via the invalidated rkey')[0],
              'WRITE via the invalidated rkey', 0x75, e.IBV_WC_REM_ACCESS_ERR)
    expect_bytes('target', tgt.read(8192, 0), old)


# ------------------------------------------------------------ local, misc

@test('local: SEND and WRITE between two QPs of the same device')
def t_local(t):
    p = Pair(t, mtu=1024, local=True)
    src = p.a.mr(t, 5000, fill=46)
    dst = p.b.mr(t, 5100, fill=47)
    wdst = p.b.mr(t, 5100, fill=48)
    old, wold = dst.read(5100, 0), wdst.read(5100, 0)
    post_recv(p.b.qp, 0x2b, sges(dst, [(0, 5100)]))
    post(p.a.qp, 0x80, e.IBV_WR_SEND, sges(src, [(0, 5000)]))
    post(p.a.qp, 0x81, e.IBV_WR_RDMA_WRITE, sges(src, [(0, 5000)]),
         rkey=wdst.rkey, addr=wdst.buf + 50)
    wcs = poll(p.a.scq, 2, 'requester')
    expect_wc(wcs[0], 'SEND', 0x80, OK, e.IBV_WC_SEND)
    expect_wc(wcs[1], 'WRITE', 0x81, OK, e.IBV_WC_RDMA_WRITE)
    expect_wc(poll(p.b.rcq, 1, 'responder')[0], 'responder', 0x2b, OK,
              e.IBV_WC_RECV, p.b.qpn, 5000)
    want = src.read(5000, 0)
    expect_bytes('SEND data', dst.read(5100, 0), want + old[5000:])
    expect_bytes('WRITE data', wdst.read(5100, 0),
                 wold[:50] + want + wold[5050:])


@test('counters: a 4-packet SEND moves sent/rcvd packets and bytes')
def t_counters(t):
    p = Pair(t, mtu=1024, timeout=18)
    c0, c1 = counters(t.env.dev0), counters(t.env.dev1)
    src = p.a.mr(t, 3077, fill=49)
    dst = p.b.mr(t, 3077, fill=50)
    post_recv(p.b.qp, 0x2c, sges(dst, [(0, 3077)]))
    post(p.a.qp, 0x82, e.IBV_WR_SEND, sges(src, [(0, 3077)]))
    expect_wc(poll(p.a.scq, 1, 'requester')[0], 'requester', 0x82)
    expect_wc(poll(p.b.rcq, 1, 'responder')[0], 'responder', 0x2c)
    time.sleep(0.2)
    a1, b1 = counters(t.env.dev0), counters(t.env.dev1)
    expect_eq(f'{t.env.dev0} sent_pkts delta', delta(c0, a1, 'sent_pkts'), 4)
    expect_eq(f'{t.env.dev1} rcvd_pkts delta', delta(c1, b1, 'rcvd_pkts'), 4)
    acks = delta(c1, b1, 'sent_pkts')
    check(1 <= acks <= 4, f'{t.env.dev1} sent {acks} ACKs for 4 packets')
    expect_eq(f'{t.env.dev0} rcvd_pkts delta (the ACKs)',
              delta(c0, a1, 'rcvd_pkts'), acks)
    check(delta(c0, a1, 'sent_bytes') >= 3077,
          f'{t.env.dev0} sent_bytes moved by {delta(c0, a1, "sent_bytes")}')
    check(delta(c1, b1, 'rcvd_bytes') >= 3077,
          f'{t.env.dev1} rcvd_bytes moved by {delta(c1, b1, "rcvd_bytes")}')


if __name__ == '__main__':
    sys.exit(main(TESTS, __doc__))
