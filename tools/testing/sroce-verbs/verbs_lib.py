# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The sroce authors
"""Helpers for the sroce verbs suite (verbs_test.py).

Everything here talks to the device the way an application does: through
pyverbs (rdma-core 44's Python binding of libibverbs + librxe), a few raw
libibverbs calls through ctypes where pyverbs would hide the behaviour under
test, /proc for the event file descriptors and the iproute2 ``rdma`` tool
for the kernel's resource tracking.
"""

import ctypes
import errno
import faulthandler
import json
import os
import select
import subprocess
import sys
import time
import traceback

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import RecvWR, SGE, SendWR

RDMA = '/usr/bin/rdma'
IP = '/usr/sbin/ip'

# How long to wait for things the kernel may do asynchronously.  Generous:
# the suite runs under TCG, possibly on a KASAN + lockdep kernel.
COMPLETION_TIMEOUT = 10.0
EVENT_TIMEOUT = 10.0
NO_EVENT_WAIT = 1.0

# The volume of the scenario running the suite (SROCE_VOLUME in
# tools/testing/sroce-vm/guest-lib.sh): at 'small', the debug sweep of make
# check, the suites register the same cases with less data or fewer
# repetitions (each suite says which).  Read at import: the suites register
# their tests at import.
SMALL = os.environ.get('SROCE_VOLUME', 'full') == 'small'

PORT = 1
QKEY = 0x11111111
RQ_PSN = 0x123456
SQ_PSN = 0x654321

QP_ALL_ATTRS = (e.IBV_QP_STATE | e.IBV_QP_CUR_STATE |
                e.IBV_QP_EN_SQD_ASYNC_NOTIFY | e.IBV_QP_ACCESS_FLAGS |
                e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_QKEY |
                e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_TIMEOUT |
                e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY | e.IBV_QP_RQ_PSN |
                e.IBV_QP_MAX_QP_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER |
                e.IBV_QP_SQ_PSN | e.IBV_QP_MAX_DEST_RD_ATOMIC |
                e.IBV_QP_CAP | e.IBV_QP_DEST_QPN)

QPT_NAMES = {e.IBV_QPT_RC: 'RC', e.IBV_QPT_UC: 'UC', e.IBV_QPT_UD: 'UD'}
QPS_NAMES = {e.IBV_QPS_RESET: 'RESET', e.IBV_QPS_INIT: 'INIT',
             e.IBV_QPS_RTR: 'RTR', e.IBV_QPS_RTS: 'RTS',
             e.IBV_QPS_SQD: 'SQD', e.IBV_QPS_SQE: 'SQE',
             e.IBV_QPS_ERR: 'ERR'}


class Fail(Exception):
    """A check failed; the message says what differed."""


class Skip(Exception):
    """The test cannot run here; the message says why."""


def errname(code):
    return errno.errorcode.get(code, str(code))


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def expect_eq(what, got, want):
    if got != want:
        raise Fail(f'{what}: got {fmt(got)}, expected {fmt(want)}')


def fmt(val):
    if isinstance(val, int) and not isinstance(val, bool) and val > 9:
        return f'{val} ({val:#x})'
    return repr(val)


def expect_errno(what, want, func, *args, **kwargs):
    """Run func(*args); it must raise PyverbsRDMAError with errno want.

    Returns nothing; a success or another errno raises Fail.
    """
    try:
        obj = func(*args, **kwargs)
    except PyverbsRDMAError as err:
        if err.error_code != want:
            raise Fail(f'{what}: failed with {errname(err.error_code)}, '
                       f'expected {errname(want)} ({err})') from None
        return
    close = getattr(obj, 'close', None)
    if close:
        close()
    raise Fail(f'{what}: succeeded, expected {errname(want)}')


def expect_error(what, func, *args, **kwargs):
    """func(*args) must fail with some PyverbsRDMAError; returns its errno."""
    try:
        obj = func(*args, **kwargs)
    except PyverbsRDMAError as err:
        return err.error_code
    close = getattr(obj, 'close', None)
    if close:
        close()
    raise Fail(f'{what}: succeeded, expected an error')


# ---------------------------------------------------------------- fds, events

def ib_event_fds():
    """This process's uverbs event files (async and completion channels)."""
    fds = set()
    for name in os.listdir('/proc/self/fd'):
        try:
            link = os.readlink(f'/proc/self/fd/{name}')
        except OSError:
            continue
        if link == 'anon_inode:[infinibandevent]':
            fds.add(int(name))
    return fds


def new_event_fd(before, what):
    """The one uverbs event file opened since the set `before` was taken."""
    new = ib_event_fds() - before
    if len(new) != 1:
        raise Fail(f'{what}: expected one new [infinibandevent] fd, '
                   f'found {sorted(new)}')
    return new.pop()


def readable(fd, timeout):
    """True if fd becomes readable within timeout seconds."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(int(timeout * 1000)))


# ----------------------------------------------------------- memory, ctypes

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                       ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.restype = ctypes.c_int
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]

PROT_READ = 0x1
PROT_WRITE = 0x2
MAP_PRIVATE = 0x02
MAP_ANONYMOUS = 0x20
MAP_NORESERVE = 0x4000
MAP_FAILED = ctypes.c_void_p(-1).value
PAGE_SIZE = os.sysconf('SC_PAGE_SIZE')


class Mapping:
    """An anonymous private mapping made with mmap(2), not touched."""

    def __init__(self, size, prot):
        addr = _libc.mmap(None, size, prot,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        if addr is None or addr == MAP_FAILED:
            err = ctypes.get_errno()
            raise Fail(f'mmap of {size} bytes failed: {errname(err)}')
        self.addr = addr
        self.size = size

    def close(self):
        if self.addr:
            _libc.munmap(self.addr, self.size)
            self.addr = 0


# ----------------------------------------------------------------- CQ, WQEs

def poll_n(cq, count, timeout=COMPLETION_TIMEOUT):
    """Poll until count completions arrived or timeout; returns them all."""
    wcs = []
    deadline = time.monotonic() + timeout
    while len(wcs) < count:
        _, batch = cq.poll(count - len(wcs))
        wcs.extend(batch)
        if len(wcs) >= count or time.monotonic() > deadline:
            break
        time.sleep(0.005)
    return wcs


def expect_no_more(cq, what, wait=0.2):
    time.sleep(wait)
    got, wcs = cq.poll(4)
    if got:
        raise Fail(f'{what}: {got} unexpected extra completion(s), first '
                   f'wr_id {wcs[0].wr_id:#x} status {wcs[0].status}')


def expect_completions(wcs, what, wr_ids, qpn, status, opcode=None):
    """wcs must be exactly wr_ids, in order, all of qpn and status."""
    got_ids = [wc.wr_id for wc in wcs]
    if got_ids != list(wr_ids):
        raise Fail(f'{what}: completions for wr_ids {hexlist(got_ids)}, '
                   f'expected {hexlist(wr_ids)} in that order')
    for wc in wcs:
        if wc.status != status:
            raise Fail(f'{what}: wr_id {wc.wr_id:#x} status {wc.status}, '
                       f'expected {status}')
        if wc.qp_num != qpn:
            raise Fail(f'{what}: wr_id {wc.wr_id:#x} qp_num {wc.qp_num:#x}, '
                       f'expected {qpn:#x}')
        if opcode is not None and wc.opcode != opcode:
            raise Fail(f'{what}: wr_id {wc.wr_id:#x} opcode {wc.opcode}, '
                       f'expected {opcode}')


def hexlist(ids):
    return '[' + ', '.join(f'{i:#x}' for i in ids) + ']'


def post_recvs(qp_or_srq, mr, wr_ids, length=64):
    for wr_id in wr_ids:
        sge = SGE(mr.buf, length, mr.lkey)
        qp_or_srq.post_recv(RecvWR(wr_id=wr_id, num_sge=1, sg=[sge]))


def post_sends(qp, mr, wr_ids, length=64):
    for wr_id in wr_ids:
        sge = SGE(mr.buf, length, mr.lkey)
        qp.post_send(SendWR(wr_id=wr_id, opcode=e.IBV_WR_SEND, num_sge=1,
                            sg=[sge], send_flags=e.IBV_SEND_SIGNALED))


def depth(requested):
    """The ring depth the rxe ABI reports: roundup_pow_of_two(n + 1) - 1."""
    slots = 1
    while slots < requested + 1:
        slots <<= 1
    return slots - 1


# ------------------------------------------------------------------------ QPs

def create_qp(pd, cq, qpt, send_wr=16, recv_wr=16, send_sge=1, recv_sge=1,
              inline=0, srq=None, rcq=None):
    cap = QPCap(max_send_wr=send_wr, max_recv_wr=recv_wr,
                max_send_sge=send_sge, max_recv_sge=recv_sge,
                max_inline_data=inline)
    attr = QPInitAttr(qp_type=qpt, scq=cq, rcq=rcq or cq, srq=srq, cap=cap,
                      sq_sig_all=1)
    return QP(pd, attr), attr


def ah_attr(env, sgid_index=None, port=PORT, dgid=None):
    route = GlobalRoute(dgid=GID(dgid or env.peer_gid), hop_limit=64,
                        sgid_index=env.gid_index if sgid_index is None
                        else sgid_index)
    return AHAttr(port_num=port, is_global=1, gr=route)


RC_ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
             e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)


def init_attr(qpt, access=RC_ACCESS):
    attr = QPAttr(qp_state=e.IBV_QPS_INIT)
    attr.pkey_index = 0
    attr.port_num = PORT
    mask = e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT
    if qpt == e.IBV_QPT_UD:
        attr.qkey = QKEY
        mask |= e.IBV_QP_QKEY
    else:
        attr.qp_access_flags = access
        mask |= e.IBV_QP_ACCESS_FLAGS
    return attr, mask


def rtr_attr(qpt, env, dest_qpn, mtu=e.IBV_MTU_1024):
    attr = QPAttr(qp_state=e.IBV_QPS_RTR)
    mask = e.IBV_QP_STATE
    if qpt == e.IBV_QPT_UD:
        return attr, mask
    attr.ah_attr = ah_attr(env)
    attr.path_mtu = mtu
    attr.dest_qp_num = dest_qpn
    attr.rq_psn = RQ_PSN
    mask |= (e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN |
             e.IBV_QP_RQ_PSN)
    if qpt == e.IBV_QPT_RC:
        attr.max_dest_rd_atomic = 4
        attr.min_rnr_timer = 12
        mask |= e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER
    return attr, mask


def rts_attr(qpt, timeout=14):
    """RTR->RTS attributes; timeout 0 is an infinite local ACK timeout."""
    attr = QPAttr(qp_state=e.IBV_QPS_RTS)
    attr.sq_psn = SQ_PSN
    mask = e.IBV_QP_STATE | e.IBV_QP_SQ_PSN
    if qpt == e.IBV_QPT_RC:
        attr.timeout = timeout
        attr.retry_cnt = 7
        attr.rnr_retry = 7
        attr.max_rd_atomic = 4
        mask |= (e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT |
                 e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC)
    return attr, mask


def modify(qp, attr_mask, what):
    attr, mask = attr_mask
    try:
        qp.modify(attr, mask)
    except PyverbsRDMAError as err:
        raise Fail(f'{what}: {errname(err.error_code)} ({err})') from None


def bring_up(qp, qpt, env, state, dest_qpn=None, timeout=14):
    """Move a RESET QP forward to state (INIT, RTR or RTS)."""
    modify(qp, init_attr(qpt), 'RESET->INIT')
    if state == e.IBV_QPS_INIT:
        return
    dest = qp.qp_num if dest_qpn is None else dest_qpn
    modify(qp, rtr_attr(qpt, env, dest), 'INIT->RTR')
    if state == e.IBV_QPS_RTR:
        return
    modify(qp, rts_attr(qpt, timeout), 'RTR->RTS')


def qp_state(qp):
    attr, _ = qp.query(e.IBV_QP_STATE)
    return attr.qp_state


def expect_state(qp, want, what):
    got = qp_state(qp)
    if got != want:
        raise Fail(f'{what}: QP state {QPS_NAMES.get(got, got)}, expected '
                   f'{QPS_NAMES.get(want, want)}')


def wait_state(qp, want, timeout=2.0):
    deadline = time.monotonic() + timeout
    while qp_state(qp) != want and time.monotonic() < deadline:
        time.sleep(0.01)
    return qp_state(qp)


# ------------------------------------------------------------ restrack, ip

def _json_docs(text):
    dec = json.JSONDecoder()
    idx = 0
    while True:
        while idx < len(text) and text[idx].isspace():
            idx += 1
        if idx >= len(text):
            return
        doc, idx = dec.raw_decode(text, idx)
        yield doc


def _dicts(node):
    if isinstance(node, dict):
        if 'ifname' in node or 'dev' in node:
            yield node
        for val in node.values():
            if isinstance(val, (list, dict)):
                yield from _dicts(val)
    elif isinstance(node, list):
        for val in node:
            yield from _dicts(val)


def entry_dev(entry):
    name = entry.get('ifname') or entry.get('dev') or entry.get('link', '')
    return name.split('/')[0]


def restrack(kind, dev):
    """Entries of `rdma -j resource show KIND` for dev (KIND '' = summary)."""
    cmd = [RDMA, '-j', 'resource', 'show'] + ([kind] if kind else [])
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                         check=False)
    if res.returncode:
        raise Fail(f'{" ".join(cmd)} exited {res.returncode}: '
                   f'{res.stderr.strip()}')
    try:
        docs = list(_json_docs(res.stdout))
    except ValueError as err:
        raise Fail(f'{" ".join(cmd)}: bad JSON ({err}): '
                   f'{res.stdout[:200]!r}') from None
    return [d for doc in docs for d in _dicts(doc) if entry_dev(d) == dev]


def mine(entries):
    pid = os.getpid()
    return [d for d in entries if int(d.get('pid', -1)) == pid]


def res_counts(dev):
    """The restrack summary for dev: {'pd': n, 'cq': n, 'qp': n, ...}."""
    for entry in restrack('', dev):
        return {k: v for k, v in entry.items() if isinstance(v, int)}
    raise Fail(f'rdma resource show lists no {dev}')


def as_int(val):
    if isinstance(val, str):
        return int(val, 0)
    return int(val)


def netdev_mtu(netdev):
    with open(f'/sys/class/net/{netdev}/mtu', encoding='ascii') as f:
        return int(f.read())


def set_mtu(netdev, mtu):
    res = subprocess.run([IP, 'link', 'set', 'dev', netdev, 'mtu', str(mtu)],
                         capture_output=True, text=True, check=False)
    if res.returncode:
        raise Fail(f'ip link set {netdev} mtu {mtu}: {res.stderr.strip()}')


def wait_active_mtu(ctx, want, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        got = ctx.query_port(PORT).active_mtu
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


# ------------------------------------------------------------------ runner

def registry(default_timeout=120):
    """A suite's test list, (name, timeout, func), and the decorator that fills it.

        TESTS, test = registry()

        @test('what it checks', timeout=60)
        def t_something(t): ...
    """
    tests = []

    def test(name, timeout=default_timeout):
        def register(func):
            tests.append((name, timeout, func))
            return func
        return register
    return tests, test


def outcome(func, *args):
    """None if func(*args) passed, else why not ('SKIP: ...' if skipped)."""
    try:
        func(*args)
    except Skip as why:
        return f'SKIP: {why}'
    except Fail as why:
        return str(why)
    except PyverbsRDMAError as err:
        return f'{errname(err.error_code)}: {err}'
    except Exception as err:    # pylint: disable=broad-except
        traceback.print_exc(file=sys.stdout)
        return f'{type(err).__name__}: {err}'
    return None


def run_one(make, timeout, func):
    """Runs func on the context make() builds, then closes that context.

    A hang (in the kernel or in libibverbs) ends the process after timeout
    seconds with a Python traceback: the scenario then fails.
    """
    faulthandler.dump_traceback_later(timeout, exit=True)
    box = []
    why = outcome(lambda: box.append(make()))
    if why is None:
        why = outcome(func, box[0])
        cleanup = outcome(box[0].close)
        if cleanup and (why is None or why.startswith('SKIP: ')):
            why = f'cleanup: {cleanup}'
    faulthandler.cancel_dump_traceback_later()
    return why


def run_tap(make, tests):
    """Runs (name, timeout, func) tests as TAP; returns the exit status.

    Each test gets a fresh context from make(). Ends with the
    '# N passed, M failed' line the VM harness counts.
    """
    print(f'1..{len(tests)}', flush=True)
    passed = failed = skipped = 0
    start = time.monotonic()
    for num, (name, timeout, func) in enumerate(tests, 1):
        t0 = time.monotonic()
        why = run_one(make, timeout, func)
        took = f' ({time.monotonic() - t0:.1f}s)'
        if why is None:
            passed += 1
            print(f'ok {num} - {name}{took}', flush=True)
        elif why.startswith('SKIP: '):
            skipped += 1
            passed += 1
            print(f'ok {num} - {name} # SKIP {why[6:]}', flush=True)
        else:
            failed += 1
            print(f'not ok {num} - {name}: {why}{took}', flush=True)
    print(f'# {skipped} skipped, {time.monotonic() - start:.0f}s')
    print(f'# {passed} passed, {failed} failed', flush=True)
    return 1 if failed else 0
