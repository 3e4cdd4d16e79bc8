#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The sroce authors
"""What every verbs_test.py test stands on: the registry (test()), the
setup a test sees (Env) and its resources (T), and the small steps many
tests take (setup(), to_err(), flushed_recvs(), make_srq()).
"""

import errno

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QPAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr

from verbs_lib import (Fail, bring_up, create_qp, ib_event_fds, modify,
                       post_recvs)

EINVAL, ENOMEM, EFAULT, EBUSY = (errno.EINVAL, errno.ENOMEM, errno.EFAULT,
                                 errno.EBUSY)
RC, UC, UD = e.IBV_QPT_RC, e.IBV_QPT_UC, e.IBV_QPT_UD
LW = e.IBV_ACCESS_LOCAL_WRITE
FLUSH = e.IBV_WC_WR_FLUSH_ERR
SETTLE = 0.5        # lets an asynchronous flush land before a CQ resize

TESTS = []


def test(name, group='verbs', timeout=120):
    def register(func):
        TESTS.append((name, group, timeout, func))
        return func
    return register


class Env:
    """What every test knows about the setup."""
    dev = None
    gid_index = None
    own_gid = None
    peer_dev = None
    peer_gid = None
    netdev = None
    peer_netdev = None
    objects = 1000


class T:
    """One test's device context, event fds and deferred cleanups."""

    def __init__(self, env):
        self.env = env
        before = ib_event_fds()
        self.ctx = Context(name=env.dev)
        self._async = ib_event_fds() - before
        self.cleanups = []
        self.held = []

    @property
    def async_fd(self):
        if len(self._async) != 1:
            raise Fail('cannot tell the async event fd: new [infinibandevent]'
                       f' fds after opening the device: {sorted(self._async)}')
        return next(iter(self._async))

    def defer(self, func):
        self.cleanups.append(func)

    def hold(self, *objs):
        """Keeps pyverbs objects alive (and in use) until the test ends."""
        self.held.extend(objs)

    def close(self):
        self.held.clear()
        self.ctx.close()
        for func in reversed(self.cleanups):
            func()


def setup(t, cqe=63, mr_len=4096, access=LW):
    pd = PD(t.ctx)
    cq = CQ(t.ctx, cqe, None, None, 0)
    mr = MR(pd, mr_len, access)
    return pd, cq, mr


def to_err(qp):
    modify(qp, (QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE), '->ERR')


def flushed_recvs(t, cq, count, pd=None, mr=None, qpt=RC):
    """count receives on a new QP in INIT, flushed to cq; returns qp, ids."""
    if pd is None:
        pd = PD(t.ctx)
        mr = MR(pd, 4096, LW)
        t.hold(pd, mr)
    qp, _ = create_qp(pd, cq, qpt, recv_wr=count)
    bring_up(qp, qpt, t.env, e.IBV_QPS_INIT)
    ids = [0xc0de0000 + i for i in range(count)]
    post_recvs(qp, mr, ids)
    to_err(qp)
    return qp, ids



def make_srq(pd, max_wr, max_sge=1):
    init = SrqInitAttr(SrqAttr(max_wr=max_wr, max_sge=max_sge))
    return SRQ(pd, init), init
