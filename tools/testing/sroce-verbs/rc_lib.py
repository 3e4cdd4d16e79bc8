#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The sroce authors
"""What the connected-QP pyverbs suites share (rc_test.py, uc_test.py,
srq_test.py, ud_test.py, cm_test.py, interop_test.py).

The constants and names of verbs values, data patterns and their check,
the two devices' GIDs (Env, find_gid()), counters, a test's resources
(T), one side's PD, CQ, QP and MRs (Side) and a connected pair (Pair),
posting and polling with deadlines, and main(), which runs a suite's
tests as TAP between two devices.
"""

import argparse
import ipaddress
import os
import random
import re
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import RecvWR, SGE, SendWR

from verbs_lib import (PORT, QPS_NAMES, RC_ACCESS, SMALL, Fail, expect_eq,
                       modify, run_tap, wait_state)

RC = e.IBV_QPT_RC
LW = e.IBV_ACCESS_LOCAL_WRITE
RW = e.IBV_ACCESS_REMOTE_WRITE
RR = e.IBV_ACCESS_REMOTE_READ
RA = e.IBV_ACCESS_REMOTE_ATOMIC
MW_BIND = e.IBV_ACCESS_MW_BIND
SIG = e.IBV_SEND_SIGNALED
OK = e.IBV_WC_SUCCESS
FLUSH = e.IBV_WC_WR_FLUSH_ERR
MIB = 1 << 20


def big(mtu):
    """The largest message size of the tests: 1 MiB; at the small volume
    (verbs_lib.SMALL) 160 packets of the path MTU, still more than the
    requester's window (SROCE_REQ_WINDOW, 128 packets in flight) and five
    AckReq intervals, so the same paths run with less data."""
    return 160 * mtu if SMALL else MIB


def size_name(size):
    """A size for a test name: '1 MiB' or 'N B'."""
    return '1 MiB' if size == MIB else f'{size} B'

MTU_ENUM = {256: e.IBV_MTU_256, 512: e.IBV_MTU_512, 1024: e.IBV_MTU_1024,
            2048: e.IBV_MTU_2048, 4096: e.IBV_MTU_4096}

WC_STATUS = {getattr(e, n): n[7:] for n in (
    'IBV_WC_SUCCESS', 'IBV_WC_LOC_LEN_ERR', 'IBV_WC_LOC_QP_OP_ERR',
    'IBV_WC_LOC_EEC_OP_ERR', 'IBV_WC_LOC_PROT_ERR', 'IBV_WC_WR_FLUSH_ERR',
    'IBV_WC_MW_BIND_ERR', 'IBV_WC_BAD_RESP_ERR', 'IBV_WC_LOC_ACCESS_ERR',
    'IBV_WC_REM_INV_REQ_ERR', 'IBV_WC_REM_ACCESS_ERR', 'IBV_WC_REM_OP_ERR',
    'IBV_WC_RETRY_EXC_ERR', 'IBV_WC_RNR_RETRY_EXC_ERR',
    'IBV_WC_LOC_RDD_VIOL_ERR', 'IBV_WC_REM_INV_RD_REQ_ERR',
    'IBV_WC_REM_ABORT_ERR', 'IBV_WC_INV_EECN_ERR', 'IBV_WC_INV_EEC_STATE_ERR',
    'IBV_WC_FATAL_ERR', 'IBV_WC_RESP_TIMEOUT_ERR', 'IBV_WC_GENERAL_ERR')}
WC_OPCODE = {getattr(e, n): n[7:] for n in (
    'IBV_WC_SEND', 'IBV_WC_RDMA_WRITE', 'IBV_WC_RDMA_READ',
    'IBV_WC_COMP_SWAP', 'IBV_WC_FETCH_ADD', 'IBV_WC_BIND_MW',
    'IBV_WC_LOCAL_INV', 'IBV_WC_RECV', 'IBV_WC_RECV_RDMA_WITH_IMM')}
# The requester completion opcode of each send WR opcode.
WR_TO_WC = {e.IBV_WR_SEND: e.IBV_WC_SEND, e.IBV_WR_SEND_WITH_IMM:
            e.IBV_WC_SEND, e.IBV_WR_SEND_WITH_INV: e.IBV_WC_SEND,
            e.IBV_WR_RDMA_WRITE: e.IBV_WC_RDMA_WRITE,
            e.IBV_WR_RDMA_WRITE_WITH_IMM: e.IBV_WC_RDMA_WRITE,
            e.IBV_WR_RDMA_READ: e.IBV_WC_RDMA_READ,
            e.IBV_WR_ATOMIC_CMP_AND_SWP: e.IBV_WC_COMP_SWAP,
            e.IBV_WR_ATOMIC_FETCH_AND_ADD: e.IBV_WC_FETCH_ADD}

COMPLETION_TIMEOUT = 20.0



def st(status):
    return WC_STATUS.get(status, str(status))


def opn(opcode):
    return WC_OPCODE.get(opcode, str(opcode))


def pattern(length, seed):
    """length bytes of a reproducible non-zero-heavy pattern."""
    return random.Random(seed).randbytes(length)


def expect_bytes(what, got, want):
    if got == want:
        return
    if len(got) != len(want):
        raise Fail(f'{what}: {len(got)} bytes, expected {len(want)}')
    first = next(i for i in range(len(got)) if got[i] != want[i])
    bad = sum(1 for a, b in zip(got, want) if a != b)
    raise Fail(f'{what}: {bad} of {len(want)} bytes differ, first at offset '
               f'{first}: {got[first]:#04x}, expected {want[first]:#04x}')


# ----------------------------------------------------------------- setup

class Env:
    """The two devices and their GID indices per address family."""
    dev0 = dev1 = None
    gid0 = {}
    gid1 = {}


def find_gid(dev, addr):
    """(index, GID string) of addr in the port-1 GID table of dev."""
    ip = ipaddress.ip_address(addr)
    if ip.version == 4:
        ip = ipaddress.ip_address('::ffff:' + addr)
    want = ip.exploded
    base = f'/sys/class/infiniband/{dev}/ports/{PORT}/gids'
    for name in sorted(os.listdir(base), key=int):
        try:
            with open(f'{base}/{name}', encoding='ascii') as f:
                gid = f.read().strip()
        except OSError:
            continue
        if gid == want:
            return int(name), gid
    raise Fail(f'{dev} has no GID for {addr}')


def counters(dev):
    """The port-1 hw_counters of dev: {'sent_pkts': n, ...}.

    ib_core serves hw_counters from a cache it refreshes only when it is
    older than 10 ms: two reads closer than that give the same values,
    however much happened between them. A check that ran faster than
    that (rnr_retry 0 can be over in a few ms) read no change at all, so
    every read waits out the cache's lifespan first.
    """
    time.sleep(0.02)
    base = f'/sys/class/infiniband/{dev}/ports/{PORT}/hw_counters'
    out = {}
    for name in os.listdir(base):
        try:
            with open(f'{base}/{name}', encoding='ascii') as f:
                out[name] = int(f.read().strip())
        except (OSError, ValueError):
            continue
    return out


def delta(before, after, name):
    if name not in after:
        raise Fail(f'no hw counter {name}')
    return after[name] - before.get(name, 0)


class T:
    """One test's device contexts and objects, closed at its end."""

    def __init__(self, env):
        self.env = env
        self.ctxs = {}
        self.held = []

    def ctx(self, dev):
        if dev not in self.ctxs:
            self.ctxs[dev] = Context(name=dev)
        return self.ctxs[dev]

    def hold(self, *objs):
        self.held.extend(objs)

    def close(self):
        # QPs first: a QP stuck in a message may hold its MRs, and
        # deregistering those first would wait for the QP (see the report
        # on sroce_dereg_mr()).
        for obj in reversed(self.held):
            if isinstance(obj, QP):
                obj.close()
        for obj in reversed(self.held):
            obj.close()
        self.held.clear()
        for ctx in self.ctxs.values():
            ctx.close()


class Side:
    """One end of an RC connection: PD, send CQ, receive CQ, QP."""

    def __init__(self, t, dev, gid_index, opts, chan=None):
        self.dev = dev
        self.gid_index = gid_index
        ctx = t.ctx(dev)
        self.ctx = ctx
        self.pd = PD(ctx)
        self.scq = CQ(ctx, opts['cqe'], None, None, 0)
        self.rcq = CQ(ctx, opts['cqe'], None, chan, 0)
        cap = QPCap(max_send_wr=opts['send_wr'], max_recv_wr=opts['recv_wr'],
                    max_send_sge=opts['sge'], max_recv_sge=opts['sge'])
        init = QPInitAttr(qp_type=opts['qp_type'], scq=self.scq,
                          rcq=self.rcq, cap=cap, sq_sig_all=0)
        self.qp = QP(self.pd, init)
        self.qpn = self.qp.qp_num
        t.hold(self.pd, self.scq, self.rcq)
        t.hold(self.qp)

    def mr(self, t, length, access=LW | RW | RR | RA, fill=None):
        mr = MR(self.pd, max(length, 1), access)
        t.hold(mr)
        if fill is not None:
            data = pattern(max(length, 1), fill)
            mr.write(data, len(data), 0)
        return mr

    def connect(self, peer_gid, peer_qpn, opts):
        """RESET->INIT->RTR->RTS with the attributes the QP type takes:
        UC has no responder resources, RNR timer, timeout or retries."""
        rc = opts['qp_type'] == RC
        attr = QPAttr(qp_state=e.IBV_QPS_INIT)
        attr.pkey_index = 0
        attr.port_num = PORT
        attr.qp_access_flags = opts['qp_access']
        modify(self.qp, (attr, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
                         e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS),
               f'{self.dev} RESET->INIT')
        attr = QPAttr(qp_state=e.IBV_QPS_RTR)
        attr.ah_attr = AHAttr(port_num=PORT, is_global=1, gr=GlobalRoute(
            dgid=GID(peer_gid), hop_limit=64, sgid_index=self.gid_index))
        attr.path_mtu = MTU_ENUM[opts['mtu']]
        attr.dest_qp_num = peer_qpn
        attr.rq_psn = opts['psn']
        attr.max_dest_rd_atomic = opts['dest_rd_atomic']
        attr.min_rnr_timer = opts['min_rnr_timer']
        mask = (e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU |
                e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN)
        if rc:
            mask |= e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER
        modify(self.qp, (attr, mask), f'{self.dev} INIT->RTR')
        attr = QPAttr(qp_state=e.IBV_QPS_RTS)
        attr.sq_psn = opts['psn']
        attr.timeout = opts['timeout']
        attr.retry_cnt = opts['retry_cnt']
        attr.rnr_retry = opts['rnr_retry']
        attr.max_rd_atomic = opts['rd_atomic']
        mask = e.IBV_QP_STATE | e.IBV_QP_SQ_PSN
        if rc:
            mask |= (e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT |
                     e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC)
        modify(self.qp, (attr, mask), f'{self.dev} RTR->RTS')


DEFAULTS = dict(mtu=4096, fam=4, local=False, send_wr=32, recv_wr=32,
                sge=4, cqe=255, timeout=14, retry_cnt=7, rnr_retry=7,
                rd_atomic=4, dest_rd_atomic=16, min_rnr_timer=12,
                qp_access=RC_ACCESS, chan=None, psn=None, qp_type=RC)


class Pair:
    """A connected QP pair (RC unless qp_type says UC): a (requester) on
    dev0, b (responder) on dev1, or both on dev0 with local=True."""

    def __init__(self, t, **kw):
        opts = dict(DEFAULTS)
        unknown = set(kw) - set(opts)
        if unknown:
            raise ValueError(f'unknown Pair options {unknown}')
        opts.update(kw)
        if opts['psn'] is None:
            opts['psn'] = random.randrange(1 << 24)
        env = t.env
        gid_a = env.gid0[opts['fam']]
        gid_b = gid_a if opts['local'] else env.gid1[opts['fam']]
        dev_b = env.dev0 if opts['local'] else env.dev1
        self.a = Side(t, env.dev0, gid_a[0], opts)
        self.b = Side(t, dev_b, gid_b[0], opts, opts['chan'])
        self.a.connect(gid_b[1], self.b.qpn, opts)
        self.b.connect(gid_a[1], self.a.qpn, opts)
        self.opts = opts
        self.mtu = opts['mtu']


# -------------------------------------------------------------- posting

def sges(mr, pieces):
    """SGEs over mr: pieces is a list of (offset, length)."""
    return [SGE(mr.buf + off, length, mr.lkey) for off, length in pieces]


def post(qp, wr_id, opcode, sg=None, flags=SIG, rkey=None, addr=None,
         imm=None, atomic=None):
    if not sg and opcode not in (e.IBV_WR_ATOMIC_CMP_AND_SWP,
                                 e.IBV_WR_ATOMIC_FETCH_AND_ADD):
        # pyverbs wants one SGE: a zero-length message has one of length 0
        sg = [SGE(0, 0, 0)]
    wr = SendWR(wr_id=wr_id, opcode=opcode, num_sge=len(sg),
                sg=sg, send_flags=flags)
    if imm is not None:
        wr.imm_data = imm
    if atomic is not None:
        wr.set_wr_atomic(rkey, addr, atomic[0], atomic[1])
    elif rkey is not None:
        wr.set_wr_rdma(rkey, addr)
    qp.post_send(wr)


def post_recv(qp, wr_id, sg):
    qp.post_recv(RecvWR(wr_id=wr_id, num_sge=len(sg), sg=sg or None))


def poll(cq, count, what, timeout=COMPLETION_TIMEOUT):
    """Exactly count completions within timeout, or Fail."""
    wcs = []
    deadline = time.monotonic() + timeout
    while len(wcs) < count:
        _, batch = cq.poll(count - len(wcs))
        wcs.extend(batch)
        if len(wcs) >= count:
            break
        if time.monotonic() > deadline:
            got = ', '.join(f'{w.wr_id:#x}:{st(w.status)}' for w in wcs)
            raise Fail(f'{what}: {len(wcs)} of {count} completions within '
                       f'{timeout:.0f}s [{got}]')
        time.sleep(0.002)
    return wcs


def no_more(cq, what, wait=0.2):
    time.sleep(wait)
    got, wcs = cq.poll(4)
    if got:
        raise Fail(f'{what}: {got} unexpected completion(s), first wr_id '
                   f'{wcs[0].wr_id:#x} status {st(wcs[0].status)} opcode '
                   f'{opn(wcs[0].opcode)}')


def expect_wc(wc, what, wr_id, status=OK, opcode=None, qpn=None,
              byte_len=None, imm=None, flags=None):
    if wc.wr_id != wr_id:
        raise Fail(f'{what}: completion for wr_id {wc.wr_id:#x} (status '
                   f'{st(wc.status)}), expected {wr_id:#x}')
    if wc.status != status:
        raise Fail(f'{what}: wr_id {wr_id:#x} status {st(wc.status)}, '
                   f'expected {st(status)}')
    if status != OK:
        return
    if opcode is not None and wc.opcode != opcode:
        raise Fail(f'{what}: opcode {opn(wc.opcode)}, expected {opn(opcode)}')
    if qpn is not None:
        expect_eq(f'{what}: qp_num', wc.qp_num, qpn)
    if byte_len is not None:
        expect_eq(f'{what}: byte_len', wc.byte_len, byte_len)
    if flags is not None:
        expect_eq(f'{what}: wc_flags', wc.wc_flags, flags)
    if imm is not None:
        expect_eq(f'{what}: imm_data', wc.imm_data, imm)


def expect_qp(qp, want, what, timeout=5.0):
    got = wait_state(qp, want, timeout)
    if got != want:
        raise Fail(f'{what}: QP state {QPS_NAMES.get(got, got)}, expected '
                   f'{QPS_NAMES.get(want, want)}')


def one_send(t, p, length, wr_id, rwr_id, opcode=e.IBV_WR_SEND, imm=None,
             flags=SIG):
    """SEND length bytes a->b, receive into a buffer 64 bytes longer."""
    src = p.a.mr(t, length, fill=length + 1)
    dst = p.b.mr(t, length + 64, fill=length + 2)
    before = dst.read(length + 64, 0)
    post_recv(p.b.qp, rwr_id, sges(dst, [(0, length + 64)]))
    post(p.a.qp, wr_id, opcode, sges(src, [(0, length)]),
         flags=flags, imm=imm)
    return src, dst, before


# ------------------------------------------------------------------ main

def main(tests, doc):
    """Run tests, a registry()'s list, as TAP between two devices.

    doc: the suite's docstring; its first line describes the command.
    """
    parser = argparse.ArgumentParser(description=doc.split('\n')[0])
    parser.add_argument('dev0')
    parser.add_argument('dev1')
    parser.add_argument('--addr0', default='10.0.0.1')
    parser.add_argument('--addr1', default='10.0.0.2')
    parser.add_argument('--addr0-6', default='fd00::1')
    parser.add_argument('--addr1-6', default='fd00::2')
    parser.add_argument('--filter', default='',
                        help='run only tests whose name matches this regex')
    parser.add_argument('--list', action='store_true')
    args = parser.parse_args()

    tests = [x for x in tests if re.search(args.filter, x[0])]
    if args.list:
        for name, _, _ in tests:
            print(name)
        return 0
    env = Env()
    env.dev0, env.dev1 = args.dev0, args.dev1
    try:
        env.gid0 = {4: find_gid(env.dev0, args.addr0),
                    6: find_gid(env.dev0, args.addr0_6)}
        env.gid1 = {4: find_gid(env.dev1, args.addr1),
                    6: find_gid(env.dev1, args.addr1_6)}
    except Exception as err:    # pylint: disable=broad-except
        print(f'not ok 1 - setup: {type(err).__name__}: {err}')
        print('# 0 passed, 1 failed')
        return 1
    print(f'# {env.dev0} {env.gid0} <-> {env.dev1} {env.gid1}', flush=True)
    return run_tap(lambda: T(env), tests)
