#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The sroce authors
"""Wire interop between two hosts' RDMA devices (sroce or rdma_rxe).

    interop_test.py --role server --dev DEV --local IP --port PORT
                    --mtu 1024|4096 [--filter RE] [--ack-timeout N]
                    [--deadline S]
    interop_test.py --role client --dev DEV --local IP --peer IP --port PORT
                    --mtu 1024|4096 [--filter RE] [--ack-timeout N]
                    [--deadline S]

Runs as two processes, one per host, each owning one RDMA device, with a
TCP side channel (newline-delimited JSON) between them: the server listens
on --local:--port, the client connects from --local, retrying for up to
60 s.  Each side makes one RC, one UC and one UD QP (own CQs) on the GID of
its --local address (IPv4-mapped for IPv4); they exchange GIDs, QPNs, PSNs,
Q_Keys and their MR's address and R_Key, connect RC and UC at path MTU
--mtu, and walk the same case list: first the client is the requester of
every case (c->s), then the server (s->c):

  RC  send, send_imm, write, write_imm, read at 1, MTU+1 and 3*MTU+17 B;
      cmp_swap that matches (swaps), cmp_swap that does not, fetch_add
  UC  send, send_imm, write, write_imm at the same sizes
  UD  send, send_imm at 1 B and MTU B (GRH, src_qp, Q_Key checked)

Data gathered by the requester comes from 3 SGEs at odd offsets (where
the size allows), lands in 2 SGEs on the receiving side (the requester's
for READ), every SGE with canary bytes around it; byte i of case k is
(k*131 + i*7 + (i>>8)) & 0xff.  Every completion's status, opcode,
byte_len and imm_data is checked, every landed byte and every canary.  The
responder sends its verdict back, so both sides print the same TAP line:

  ok 3 - rc send 1025B c->s
  not ok 47 - rc read 3089B s->c: responder rxe1: ...

A case that does not complete fails after ~10 s; a failed case takes its
QP type back through RESET to RTS on both sides (remaining cases of that
QP type fail if that does not work).  The whole run ends within
--deadline seconds.  Exit 0 iff every case passed.  (rdma_rxe of 6.1 takes
retry_cnt 7 as "retry forever": a lost RC packet there is a 10 s case
timeout, not RETRY_EXC_ERR.)  Run it with Debian's
/usr/bin/python3 (python3-pyverbs), as root.
"""

import argparse
import faulthandler
import hashlib
import ipaddress
import json
import random
import re
import socket
import struct
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AH
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QPAttr

from rc_lib import (MTU_ENUM, WR_TO_WC, expect_wc, find_gid, no_more, poll,
                    post, post_recv, sges)
from ud_test import GRH, addr_of, expect_grh, send_ud
from verbs_lib import (PORT, QPS_NAMES, RC_ACCESS, Fail, ah_attr, create_qp,
                       expect_eq, init_attr, modify, outcome, qp_state,
                       rtr_attr, rts_attr)

RC, UC, UD = e.IBV_QPT_RC, e.IBV_QPT_UC, e.IBV_QPT_UD
QP_TYPES = {'rc': RC, 'uc': UC, 'ud': UD}
ACCESS = {'rc': RC_ACCESS,
          'uc': e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE}
OK = e.IBV_WC_SUCCESS
QKEY = {'client': 0x0c11e47, 'server': 0x05e12e7}
MASK64 = (1 << 64) - 1

CASE_TIMEOUT = 10.0     # one completion, or data landing
MSG_TIMEOUT = 45.0      # one side-channel message (the peer may be polling)
CONNECT_TIMEOUT = 60.0
DEADLINE_MSG = 'not run: the --deadline was reached'

# MR layout, the same on both sides: the requester's gather (or READ
# scatter) region, the responder's landing region (receive buffers, WRITE
# target, READ source, atomic target) and a small one for the WRITE_IMM
# receive WQE and the atomic's returned value.
SRC, DST, AUX = 0x0000, 0x4000, 0x8000
MR_LEN = 0x9000
GUARD = 24              # canary bytes around every SGE
SLACK = 32              # receive buffers are this much longer than needed
AUX_LEN = 64
ATOMIC_OFF = 64         # atomic target at DST + 64 (8-byte aligned)
ATOMIC_REGION = 128


class ChannelError(Exception):
    """The side channel broke or went out of step."""


class Case:
    """One operation, in one direction; k is its number in the full list
    (it seeds the data pattern, so --filter does not change the data)."""

    def __init__(self, k, qp, op, size, direction):
        self.k, self.qp, self.op, self.size = k, qp, op, size
        self.dir = direction
        self.name = f'{qp} {op} {size}B {direction}'


def case_list(mtu):
    cases = []

    def add(qp, op, size, direction):
        cases.append(Case(len(cases) + 1, qp, op, size, direction))

    sizes = (1, mtu + 1, 3 * mtu + 17)
    for direction in ('c->s', 's->c'):
        for op in ('send', 'send_imm', 'write', 'write_imm', 'read'):
            for size in sizes:
                add('rc', op, size, direction)
        for op in ('cmp_swap_hit', 'cmp_swap_miss', 'fetch_add'):
            add('rc', op, 8, direction)
        for op in ('send', 'send_imm', 'write', 'write_imm'):
            for size in sizes:
                add('uc', op, size, direction)
        for op in ('send', 'send_imm'):
            for size in (1, mtu):
                add('ud', op, size, direction)
    return cases


# ------------------------------------------------------------- data, layout

def pattern(k, length):
    return bytes((k * 131 + i * 7 + (i >> 8)) & 0xff for i in range(length))


def canary(k, length):
    return bytes(0xa5 ^ ((k * 17 + j * 29) & 0xff) for j in range(length))


def imm_of(k):
    return (0x9e3779b9 * k) & 0xffffffff


def atomic_values(case):
    """(original, compare_add, swap, final) of an atomic case."""
    k = case.k
    orig = (0x0123456789abcdef * (2 * k + 1)) & MASK64
    if case.op == 'cmp_swap_hit':
        swap = orig ^ 0xffff0000ffff0000
        return orig, orig, swap, swap
    if case.op == 'cmp_swap_miss':
        # differs only in the upper half: a 32-bit compare would swap
        return orig, orig ^ (1 << 40), orig ^ MASK64, orig
    orig = 0x00001234fffffff0 | (k << 48)
    add = 0x0000000100000020        # carries from the low word
    return orig, add, 0, (orig + add) & MASK64


def layout(base, lengths):
    """SGEs (offset, length) at odd offsets from base with GUARD canary
    bytes around each; returns them and the region's length."""
    pieces, off = [], base + GUARD
    for length in lengths:
        off |= 1
        pieces.append((off, length))
        off += length + GUARD
    return pieces, off - base


def split(size, parts):
    """size bytes in up to parts pieces of similar length."""
    if size < parts:
        return [size]
    out = []
    for i in range(parts, 0, -1):
        out.append((size - sum(out) + i - 1) // i)
    return out


def recv_lengths(case):
    """The 2 receive SGEs: SLACK bytes more than the message (and the GRH
    in the first for UD)."""
    n = case.size
    first = max(1, n // 2) if case.qp != 'ud' else GRH + n // 2
    total = n + (GRH if case.qp == 'ud' else 0)
    return [first, total - first + SLACK]


def fill(mr, base, length, k):
    data = canary(k, length)
    mr.write(data, length, base)
    return data


def landed(before, base, pieces, stream):
    """The region as it must be: before, with stream scattered over pieces
    (in order, as far as it goes)."""
    want = bytearray(before)
    pos = 0
    for off, length in pieces:
        take = min(length, len(stream) - pos)
        if take <= 0:
            break
        want[off - base:off - base + take] = stream[pos:pos + take]
        pos += take
    return bytes(want)


def gathered(region, base, pieces, count):
    """The first count bytes scattered over pieces of region."""
    out = b''
    for off, length in pieces:
        out += region[off - base:off - base + min(length, count - len(out))]
    return out


def expect_region(what, got, want, base, pieces, stream_len):
    """got must be want; a difference says whether it hit the data or a
    canary (which SGE it is next to)."""
    if got == want:
        return
    bad = [i for i in range(len(want)) if got[i] != want[i]]
    first = bad[0]
    where, pos = None, 0
    for num, (off, length) in enumerate(pieces):
        if off - base <= first < off - base + length:
            inside = first - (off - base)
            where = (f'data byte {pos + inside} (SGE {num} byte {inside})'
                     if pos + inside < stream_len else
                     f'SGE {num} byte {inside}, past the message')
            break
        pos += length
    if where is None:
        near = min(range(len(pieces)), default=None,
                   key=lambda j: abs(pieces[j][0] - base - first))
        where = (f'canary at region offset {first}' +
                 (f' (near SGE {near})' if near is not None else ''))
    raise Fail(f'{what}: {len(bad)} byte(s) wrong, first at {where}: '
               f'{got[first]:#04x}, expected {want[first]:#04x}')


def expect_ip_header(grh, case, src, dst):
    """GRH as ud_test.py checks it, plus the IP length fields and (IPv4)
    the header checksum of the datagram as it came off the wire."""
    expect_grh(grh, 6 if ':' in src else 4, src, dst)
    imm = 4 if case.op == 'send_imm' else 0
    pad = -case.size % 4
    udp_len = 8 + 12 + 8 + imm + case.size + pad + 4
    if ':' in src:
        expect_eq('IPv6 payload length', struct.unpack('>H', grh[4:6])[0],
                  udp_len)
        return
    hdr = grh[20:40]
    expect_eq('IPv4 total length', struct.unpack('>H', hdr[2:4])[0],
              20 + udp_len)
    csum = sum(struct.unpack('>10H', hdr))
    while csum >> 16:
        csum = (csum & 0xffff) + (csum >> 16)
    expect_eq('IPv4 header checksum (folded sum)', csum, 0xffff)


def is_atomic(case):
    return case.op in ('cmp_swap_hit', 'cmp_swap_miss', 'fetch_add')


def mapped_gid(addr):
    ip = ipaddress.ip_address(addr)
    if ip.version == 4:
        ip = ipaddress.ip_address('::ffff:' + addr)
    return ip.exploded


def attempt(func, *args):
    """(result, None) or (None, why) as verbs_lib.outcome() says."""
    box = []
    why = outcome(lambda: box.append(func(*args)))
    return (box[0] if box else None), why


# --------------------------------------------------------------- the host

class Qp:
    """One of the three QPs with its CQs and connection state."""

    def __init__(self, host, name):
        self.name, self.qpt = name, QP_TYPES[name]
        self.scq = CQ(host.ctx, 32, None, None, 0)
        self.rcq = CQ(host.ctx, 32, None, None, 0)
        self.qp, _ = create_qp(host.pd, self.scq, self.qpt, send_wr=16,
                               recv_wr=16, send_sge=3, recv_sge=2,
                               rcq=self.rcq)
        self.qpn = self.qp.qp_num
        self.sq_psn = random.randrange(1 << 24)
        self.peer_qpn = self.peer_psn = None

    def close(self):
        self.qp.close()
        self.scq.close()
        self.rcq.close()


class Host:
    """This side's device, PD, MR and QPs; the GIDs of both sides."""

    def __init__(self, args):
        self.dev, self.local, self.mtu = args.dev, args.local, args.mtu
        self.ack_timeout = args.ack_timeout
        self.qkey = QKEY[args.role]
        self.gid_index, self.gid = find_gid(args.dev, args.local)
        self.peer_gid = mapped_gid(args.peer) if args.peer else None
        self.ah = None
        self.ctx = Context(name=args.dev)
        self.pd = PD(self.ctx)
        self.mr = MR(self.pd, MR_LEN, RC_ACCESS | e.IBV_ACCESS_LOCAL_WRITE)
        self.qps = {}
        for name in QP_TYPES:
            self.qps[name] = Qp(self, name)
        self.active_mtu = self.ctx.query_port(PORT).active_mtu

    def bring_up(self, q):
        """RESET -> INIT -> RTR -> RTS to the peer's QP (verbs_lib's
        attributes: RC timeout --ack-timeout, retry_cnt 7, rnr_retry 7)."""
        attr, mask = init_attr(q.qpt, ACCESS.get(q.name, RC_ACCESS))
        if q.qpt == UD:
            attr.qkey = self.qkey
        modify(q.qp, (attr, mask), f'{q.name} RESET->INIT')
        attr, mask = rtr_attr(q.qpt, self, q.peer_qpn, MTU_ENUM[self.mtu])
        if q.qpt != UD:
            attr.rq_psn = q.peer_psn
        if q.qpt == RC:
            attr.min_rnr_timer = 1
        modify(q.qp, (attr, mask), f'{q.name} INIT->RTR')
        attr, mask = rts_attr(q.qpt, self.ack_timeout)
        attr.sq_psn = q.sq_psn
        modify(q.qp, (attr, mask), f'{q.name} RTR->RTS')

    def reset(self, q):
        modify(q.qp, (QPAttr(qp_state=e.IBV_QPS_RESET), e.IBV_QP_STATE),
               f'{q.name} ->RESET')
        for cq in (q.scq, q.rcq):
            while cq.poll(16)[0]:
                pass

    def close(self):
        for q in self.qps.values():
            q.close()
        if self.ah:
            self.ah.close()
        self.mr.close()
        self.pd.close()
        self.ctx.close()


def expect_rts(q, what):
    got = qp_state(q.qp)
    if got != e.IBV_QPS_RTS:
        raise Fail(f'{what}: QP state {QPS_NAMES.get(got, got)} after the '
                   'case, expected RTS')


def expect_flags(wc, what, case):
    """IB_WC_WITH_IMM as the opcode says; UD also IB_WC_GRH.  (rxe sets
    IB_WC_GRH on every user-space receive completion: libibverbs defines
    it for UD only, so RC and UC ignore it.)"""
    want = e.IBV_WC_WITH_IMM if case.op.endswith('_imm') else 0
    got = wc.wc_flags
    if case.qp == 'ud':
        want |= e.IBV_WC_GRH
    else:
        got &= ~e.IBV_WC_GRH
    expect_eq(f'{what}: wc_flags', got, want)


# ------------------------------------------------------------- the channel

class Channel:
    """Newline-delimited JSON over a TCP socket."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b''

    def send(self, msg):
        try:
            self.sock.sendall(json.dumps(msg).encode() + b'\n')
        except OSError as err:
            raise ChannelError(f'send: {err}') from None

    def recv(self, timeout):
        end = time.monotonic() + timeout
        while b'\n' not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                raise ChannelError(f'no message from the peer within '
                                   f'{timeout:.0f}s')
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError as err:
                raise ChannelError(f'recv: {err}') from None
            if not data:
                raise ChannelError('the peer closed the side channel')
            self.buf += data
        line, self.buf = self.buf.split(b'\n', 1)
        try:
            return json.loads(line)
        except ValueError:
            raise ChannelError(f'bad message {line[:80]!r}') from None

    def expect(self, kind, case, timeout):
        msg = self.recv(timeout)
        if msg.get('t') != kind or msg.get('case') != case:
            raise ChannelError(f'out of step: got {msg.get("t")} of case '
                               f'{msg.get("case")}, expected {kind} of case '
                               f'{case}')
        return msg

    def exchange(self, kind, case, timeout, **payload):
        self.send(dict(t=kind, case=case, **payload))
        return self.expect(kind, case, timeout)

    def close(self):
        self.sock.close()


def family(addr):
    return socket.AF_INET6 if ipaddress.ip_address(addr).version == 6 \
        else socket.AF_INET


def listen(local, port, until):
    srv = socket.socket(family(local), socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((local, port))
    srv.listen(1)
    srv.settimeout(max(0.1, until - time.monotonic()))
    try:
        sock, _ = srv.accept()
    except socket.timeout:
        raise ChannelError('no client connected before the deadline') \
            from None
    finally:
        srv.close()
    return sock


def connect(local, peer, port, until):
    until = min(until, time.monotonic() + CONNECT_TIMEOUT)
    while True:
        sock = socket.socket(family(local), socket.SOCK_STREAM)
        sock.settimeout(5)
        try:
            sock.bind((local, 0))
            sock.connect((peer, port))
            return sock
        except OSError as err:
            sock.close()
            if time.monotonic() > until:
                raise ChannelError(f'connect to {peer} port {port}: {err}') \
                    from None
        time.sleep(0.5)


# -------------------------------------------------------------- the runner

class Runner:
    """Walks the case list in step with the peer."""

    def __init__(self, args, cases):
        self.args, self.cases = args, cases
        start = time.monotonic()
        self.hard_end = start + args.deadline - 3
        self.soft_end = start + args.deadline - (2 * CASE_TIMEOUT + 15)
        self.host = self.ch = self.peer = None
        self.fatal = None
        self.dead = {}

    def timeout(self):
        return max(0.1, min(MSG_TIMEOUT, self.hard_end - time.monotonic()))

    def requester(self, case):
        return (case.dir == 'c->s') == (self.args.role == 'client')

    # ---------------------------------------------------------- setup

    def setup(self):
        """Device, side channel, hello, QPs to RTS; sets self.fatal on
        failure (every case then fails with that reason)."""
        args = self.args
        self.host, why = attempt(Host, args)
        try:
            if args.role == 'server':
                sock = listen(args.local, args.port, self.soft_end)
            else:
                sock = connect(args.local, args.peer, args.port, self.soft_end)
            self.ch = Channel(sock)
            self.hello(why)
        except ChannelError as err:
            self.fatal = f'setup: side channel: {err}'
        except Fail as err:
            self.fatal = f'setup: {err}'

    def hello(self, why):
        args, host = self.args, self.host
        digest = hashlib.sha1('\n'.join(c.name for c in self.cases)
                              .encode()).hexdigest()
        mine = dict(role=args.role, mtu=args.mtu, cases=digest, why=why)
        if host:
            mine.update(dev=host.dev, gid=host.gid, qkey=host.qkey,
                        mr=dict(addr=host.mr.buf, rkey=host.mr.rkey,
                                length=MR_LEN),
                        qpn={n: q.qpn for n, q in host.qps.items()},
                        psn={n: q.sq_psn for n, q in host.qps.items()})
        peer = self.ch.exchange('hello', 0, self.timeout(), **mine)
        self.peer = peer
        if why or peer['why']:
            raise Fail(f'local: {why}' if why else
                       f'peer: {peer["why"]}')
        if peer['cases'] != digest or peer['mtu'] != args.mtu:
            raise Fail('the peer walks another case list (--mtu or --filter '
                       'differ)')
        if host.peer_gid is None:
            host.peer_gid = peer['gid']
        elif peer['gid'] != host.peer_gid:
            raise Fail(f'the server\'s GID {peer["gid"]} is not that of '
                       f'--peer ({host.peer_gid})')
        print(f'# {host.dev} gid[{host.gid_index}] {host.gid} qpn '
              f'{mine["qpn"]} <-> {peer["dev"]} {peer["gid"]} qpn '
              f'{peer["qpn"]}; active MTU enum {host.active_mtu}',
              flush=True)
        for name, q in host.qps.items():
            q.peer_qpn, q.peer_psn = peer['qpn'][name], peer['psn'][name]
        why = None
        for q in host.qps.values():
            why = why or outcome(host.bring_up, q)
        if not why:
            host.ah, why = attempt(lambda: AH(host.pd, attr=ah_attr(host)))
            why = why and f'AH to the peer: {why}'
        up = self.ch.exchange('up', 0, self.timeout(), why=why)
        if why or up['why']:
            raise Fail(f'local: {why}' if why else f'peer: {up["why"]}')

    # ---------------------------------------------------------- cases

    def run(self, case):
        """None if the case passed on both sides, else why not."""
        if self.fatal:
            return self.fatal
        if case.qp in self.dead:
            return self.dead[case.qp]
        try:
            if self.requester(case):
                why = self.run_requester(case)
            else:
                why = self.run_responder(case)
            if why and not self.fatal:
                self.recover(case)
        except ChannelError as err:
            self.fatal = f'side channel: {err}'
            return self.fatal
        return why

    def verdict(self, r_why, p_why, requester_dev, responder_dev):
        parts = []
        if r_why:
            parts.append(f'requester {requester_dev}: {r_why}')
        if p_why:
            parts.append(f'responder {responder_dev}: {p_why}')
        return '; '.join(parts) or None

    def run_responder(self, case):
        ch, k = self.ch, case.k
        if time.monotonic() > self.soft_end:
            ch.send(dict(t='ready', case=k, why=DEADLINE_MSG, deadline=True))
            self.fatal = DEADLINE_MSG
            return self.fatal
        state, why = attempt(self.prepare, case)
        ch.send(dict(t='ready', case=k, why=why))
        done = ch.expect('done', k, self.timeout())
        if done.get('deadline'):
            self.fatal = DEADLINE_MSG
            return self.fatal
        r_why = done['why']
        p_why = why and f'prepare: {why}'
        if not p_why:
            p_why = outcome(self.check, case, state, r_why is not None)
        ch.send(dict(t='verdict', case=k, why=p_why))
        return self.verdict(r_why, p_why, self.peer['dev'], self.host.dev)

    def run_requester(self, case):
        ch, k = self.ch, case.k
        ready = ch.expect('ready', k, self.timeout())
        if ready.get('deadline'):
            self.fatal = DEADLINE_MSG
            return self.fatal
        if time.monotonic() > self.soft_end:
            ch.send(dict(t='done', case=k, why=DEADLINE_MSG, deadline=True))
            self.fatal = DEADLINE_MSG
            return self.fatal
        if ready['why']:
            r_why = 'not run: the responder could not prepare'
        else:
            r_why = outcome(self.request, case)
        ch.send(dict(t='done', case=k, why=r_why))
        p_why = ch.expect('verdict', k, self.timeout())['why']
        return self.verdict(r_why, p_why, self.host.dev, self.peer['dev'])

    def recover(self, case):
        """After a failed case, both sides take that QP type through RESET
        back to RTS with new PSNs; if either cannot, it is dead."""
        host, q, k = self.host, self.host.qps[case.qp], case.k
        q.sq_psn = random.randrange(1 << 24)
        why = outcome(host.reset, q)
        peer = self.ch.exchange('reset', k, self.timeout(), psn=q.sq_psn,
                                why=why)
        q.peer_psn = peer['psn']
        if not (why or peer['why']):
            why = outcome(host.bring_up, q)
        up = self.ch.exchange('up', k, self.timeout(), why=why)
        why = why or peer['why'] and f'peer: {peer["why"]}' or \
            up['why'] and f'peer: {up["why"]}'
        if why:
            self.dead[case.qp] = (f'{case.qp} QP unusable after case '
                                  f'{case.name}: {why}')

    # ------------------------------------------------ responder side

    def prepare(self, case):
        """Canaries over the landing region, the pattern of a READ, the
        original value of an atomic, the receive WQE; returns what check()
        compares against."""
        mr, q, k, n = self.host.mr, self.host.qps[case.qp], case.k, case.size
        st = {}
        if case.op in ('send', 'send_imm'):
            st['pieces'], length = layout(DST, recv_lengths(case))
        elif is_atomic(case):
            st['pieces'], length = [(DST + ATOMIC_OFF, 8)], ATOMIC_REGION
        else:
            st['pieces'], length = layout(DST, [n])
        fill(mr, DST, length, k)
        if case.op == 'read':
            mr.write(pattern(k, n), n, st['pieces'][0][0])
        elif is_atomic(case):
            orig = atomic_values(case)[0]
            mr.write(struct.pack('<Q', orig), 8, DST + ATOMIC_OFF)
        st['before'] = mr.read(length, DST)
        if case.op in ('send', 'send_imm'):
            post_recv(q.qp, 0x2000 + k, sges(mr, st['pieces']))
        elif case.op == 'write_imm':
            st['aux'] = fill(mr, AUX, AUX_LEN, k + 1)
            post_recv(q.qp, 0x2000 + k, sges(mr, [(AUX + 17, 16)]))
        return st

    def check(self, case, st, peer_failed):
        """The receive completion, the landed bytes, the canaries."""
        host, mr, q, k, n = (self.host, self.host.mr,
                             self.host.qps[case.qp], case.k, case.size)
        wait = 1.0 if peer_failed else CASE_TIMEOUT
        before, pieces = st['before'], st['pieces']
        length = len(before)
        imm = imm_of(k) if case.op.endswith('_imm') else None
        if case.op in ('send', 'send_imm', 'write_imm'):
            (wc,) = poll(q.rcq, 1, 'receive completion', wait)
            opcode = (e.IBV_WC_RECV_RDMA_WITH_IMM if case.op == 'write_imm'
                      else e.IBV_WC_RECV)
            extra = GRH if case.qp == 'ud' else 0
            expect_wc(wc, 'receive completion', 0x2000 + k, OK, opcode,
                      q.qpn, n + extra, imm)
            expect_flags(wc, 'receive completion', case)
        if case.qp == 'ud':
            expect_eq('src_qp', wc.src_qp, q.peer_qpn)
            got = mr.read(length, DST)
            grh = gathered(got, DST, pieces, GRH)
            expect_ip_header(grh, case, addr_of(host.peer_gid),
                             addr_of(host.gid))
            stream = grh + pattern(k, n)
        elif case.op in ('send', 'send_imm', 'write', 'write_imm'):
            stream = pattern(k, n)
        elif case.op == 'read':
            stream = b''
        else:
            stream = struct.pack('<Q', atomic_values(case)[3])
        want = landed(before, DST, pieces, stream)
        got = mr.read(length, DST)
        if case.qp == 'uc' and case.op == 'write':
            # nothing tells a UC responder that a WRITE has landed
            end = time.monotonic() + wait
            while got != want and time.monotonic() < end:
                time.sleep(0.01)
                got = mr.read(length, DST)
        what = ('atomic target' if is_atomic(case) else
                {'read': 'READ source (must stay as it was)',
                 'write': 'written data'}.get(case.op, 'landed data'))
        expect_region(what, got, want, DST, pieces, len(stream))
        if case.op == 'write_imm':
            expect_region('WRITE_IMM receive buffer (must stay untouched)',
                          mr.read(AUX_LEN, AUX), st['aux'], AUX, [], 0)
        no_more(q.rcq, 'receive CQ', 0)
        expect_rts(q, 'responder')

    # ------------------------------------------------ requester side

    def request(self, case):
        """Post the case's WR, check its completion and, for READ and the
        atomics, what came back."""
        host, mr, q, k, n = (self.host, self.host.mr,
                             self.host.qps[case.qp], case.k, case.size)
        peer_mr = self.peer['mr']
        wr_id = 0x1000 + k
        remote = peer_mr['addr'] + layout(DST, [n])[0][0][0]
        imm = imm_of(k) if case.op.endswith('_imm') else None
        atomic = is_atomic(case)
        if case.op == 'read':
            pieces, length = layout(SRC, split(n, 2))
            want = landed(fill(mr, SRC, length, k + 2), SRC, pieces,
                          pattern(k, n))
        elif atomic:
            pieces, length = [(AUX + 32, 8)], AUX_LEN
            orig, comp_add, swap, _ = atomic_values(case)
            want = landed(fill(mr, AUX, length, k + 2), AUX, pieces,
                          struct.pack('<Q', orig))
        else:
            # the gather buffer must stay as it is
            pieces, length = layout(SRC, split(n, 3))
            want = landed(canary(k + 2, length), SRC, pieces, pattern(k, n))
            mr.write(want, length, SRC)
        base = AUX if atomic else SRC
        sg = sges(mr, pieces)
        opcode = OPCODES[case.op]
        if case.qp == 'ud':
            send_ud(q, host.ah, q.peer_qpn, wr_id, sg,
                    qkey=self.peer['qkey'], imm=imm)
        elif atomic:
            post(q.qp, wr_id, opcode, sg, rkey=peer_mr['rkey'],
                 addr=peer_mr['addr'] + DST + ATOMIC_OFF,
                 atomic=(comp_add, swap))
        elif case.op in ('write', 'write_imm', 'read'):
            post(q.qp, wr_id, opcode, sg, rkey=peer_mr['rkey'], addr=remote,
                 imm=imm)
        else:
            post(q.qp, wr_id, opcode, sg, imm=imm)
        (wc,) = poll(q.scq, 1, 'send completion', CASE_TIMEOUT)
        expect_wc(wc, 'send completion', wr_id, OK, WR_TO_WC[opcode], q.qpn,
                  n if case.op == 'read' or atomic else None)
        what = ('READ data' if case.op == 'read' else
                'returned original value' if atomic else 'gather buffer')
        expect_region(what, mr.read(length, base), want, base, pieces,
                      n if case.op == 'read' else 8 if atomic else 0)
        no_more(q.scq, 'send CQ', 0)
        expect_rts(q, 'requester')


OPCODES = {'send': e.IBV_WR_SEND, 'send_imm': e.IBV_WR_SEND_WITH_IMM,
           'write': e.IBV_WR_RDMA_WRITE,
           'write_imm': e.IBV_WR_RDMA_WRITE_WITH_IMM,
           'read': e.IBV_WR_RDMA_READ,
           'cmp_swap_hit': e.IBV_WR_ATOMIC_CMP_AND_SWP,
           'cmp_swap_miss': e.IBV_WR_ATOMIC_CMP_AND_SWP,
           'fetch_add': e.IBV_WR_ATOMIC_FETCH_AND_ADD}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--role', choices=('server', 'client'),
                        required=True)
    parser.add_argument('--dev', required=True, help='RDMA device')
    parser.add_argument('--local', required=True,
                        help='this host\'s IPv4 or IPv6 address (its GID)')
    parser.add_argument('--peer', help='the server\'s address (client)')
    parser.add_argument('--port', type=int, required=True,
                        help='TCP port of the side channel')
    parser.add_argument('--mtu', type=int, choices=(1024, 4096),
                        required=True, help='path MTU of RC and UC')
    parser.add_argument('--filter', default='',
                        help='run only cases whose name matches this regex')
    parser.add_argument('--ack-timeout', type=int, default=14,
                        choices=range(8, 21), metavar='8..20',
                        help='RC local ACK timeout exponent (4.096 us * '
                        '2^N; default 14)')
    parser.add_argument('--deadline', type=float, default=300,
                        help='seconds the whole run may take')
    args = parser.parse_args()
    if args.role == 'client' and not args.peer:
        parser.error('the client needs --peer')
    if args.peer and family(args.peer) != family(args.local):
        parser.error('--local and --peer are of different address families')
    return args


def main():
    args = parse_args()
    # the last resort against a hang inside a verbs call
    faulthandler.dump_traceback_later(args.deadline, exit=True)
    cases = [c for c in case_list(args.mtu) if re.search(args.filter, c.name)]
    runner = Runner(args, cases)
    start = time.monotonic()
    print(f'1..{len(cases)}', flush=True)
    runner.setup()
    passed = failed = 0
    for num, case in enumerate(cases, 1):
        why = runner.run(case)
        if why is None:
            passed += 1
            print(f'ok {num} - {case.name}', flush=True)
        else:
            failed += 1
            print(f'not ok {num} - {case.name}: {why}', flush=True)
    if runner.ch:
        if not runner.fatal:
            try:
                runner.ch.exchange('bye', 0, runner.timeout())
            except ChannelError as err:
                print(f'# bye: {err}')
        runner.ch.close()
    cleanup = runner.host and outcome(runner.host.close)
    if cleanup:
        print(f'# cleanup failed: {cleanup}')
    fam = ipaddress.ip_address(args.local).version
    print(f'# {time.monotonic() - start:.1f}s', flush=True)
    print(f'interop: {passed} passed, {failed} failed (dev {args.dev}, '
          f'IPv{fam}, mtu {args.mtu})', flush=True)
    faulthandler.cancel_dump_traceback_later()
    return 1 if failed or cleanup else 0


if __name__ == '__main__':
    sys.exit(main())
