#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The sroce authors
"""rdma_cm between two sroce devices through stock librdmacm (pyverbs).

    cm_test.py [options] DEV0 DEV1

The server listens on DEV1's address, the client's rdma_cm ID is bound to
DEV0's (IPv4; see ADDR for IPv6); every step is driven by the events of two event channels, as an
application would: address and route resolution over IPv4 and IPv6, the
connection request carrying the client's private data, the reply carrying
the server's, data over the connected RC QP both ways, disconnect seen on
both sides; a reject with private data; a connect to a port nobody
listens on; address resolution of an address nobody has, which must end
in RDMA_CM_EVENT_ADDR_ERROR within its timeout, not hang.  Options as
rc_test.py's (only DEV0 and DEV1 are used: the addresses are the veth
pair's of sroce_rdma_pair).
"""

import sys
import time

import pyverbs.cm_enums as ce
import pyverbs.enums as e
from pyverbs.cmid import AddrInfo, CMEvent, CMEventChannel, CMID, ConnParam
from pyverbs.qp import QPCap, QPInitAttr

from rc_lib import expect_bytes, main, pattern
from verbs_lib import Fail, registry

# (client source, server, an address nobody has). The IPv6 client is not
# bound: rdma_cm 6.1 rejects (REJ 28, consumer-defined) a request from one
# local IPv6 address to another on a different netdev, whatever the RDMA
# device, so over IPv6 both ends sit on DEV1 and sroce loops back.
ADDR = {4: ('10.0.0.1', '10.0.0.2', '10.0.0.77'),
        6: (None, 'fd00::2', 'fd00::77')}
TCP = ce.RDMA_PS_TCP
EVENTS = {getattr(ce, n): n[len('RDMA_CM_EVENT_'):] for n in dir(ce)
          if n.startswith('RDMA_CM_EVENT_')}
TESTS, test = registry(60)


def ev_name(kind):
    return EVENTS.get(kind, str(kind))


def event(channel, want, what):
    """The next event of channel: it must be of kind want.

    Returns its private data (read before the event is acked).
    """
    ev = CMEvent(channel)
    kind, data = ev.event_type, ev.private_data
    ev.close()
    if kind != want:
        raise Fail(f'{what}: event {ev_name(kind)}, expected {ev_name(want)}')
    return data


def expect_private(what, got, want):
    """rdma_cm hands over the private data padded to the MAD's field."""
    if got is None or bytes(got[:len(want)]) != want:
        raise Fail(f'{what}: private data {bytes(got or b"")[:len(want)]!r}, '
                   f'expected {want!r}')


def qp_init():
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1,
                max_recv_sge=1)
    return QPInitAttr(qp_type=e.IBV_QPT_RC, cap=cap, sq_sig_all=1)


class Cm:
    """A listener on DEV1's address and a client ID bound to DEV0's."""

    def __init__(self, t, family, port):
        self.src, self.dst, self.nobody = ADDR[family]
        self.port = str(port)
        self.sch = CMEventChannel()
        self.cch = CMEventChannel()
        self.listener = CMID(creator=self.sch, port_space=TCP)
        self.client = CMID(creator=self.cch, port_space=TCP)
        self.conn = None
        t.hold(self)

    def listen(self):
        self.listener.bind_addr(AddrInfo(src=self.dst, src_service=self.port,
                                         port_space=TCP,
                                         flags=ce.RAI_PASSIVE))
        self.listener.listen()

    def resolve(self, dst=None, timeout_ms=2000):
        """Address and route resolution of the client, event by event."""
        self.client.resolve_addr(AddrInfo(src=self.src, dst=dst or self.dst,
                                          dst_service=self.port, port_space=TCP),
                                 timeout_ms)
        event(self.cch, ce.RDMA_CM_EVENT_ADDR_RESOLVED, 'resolve_addr')
        self.client.resolve_route(timeout_ms)
        event(self.cch, ce.RDMA_CM_EVENT_ROUTE_RESOLVED, 'resolve_route')

    def request(self, data):
        """Client: connect with data; server: the request and its data."""
        self.client.create_qp(qp_init())
        param = ConnParam(data_len=len(data))
        param.set_private_data(data)
        self.client.connect(param)
        ev = CMEvent(self.sch)
        kind, got = ev.event_type, ev.private_data
        if kind == ce.RDMA_CM_EVENT_CONNECT_REQUEST:
            self.conn = CMID(creator=ev, listen_id=self.listener)
        ev.close()
        if kind != ce.RDMA_CM_EVENT_CONNECT_REQUEST:
            raise Fail(f'server: event {ev_name(kind)}, expected '
                       'CONNECT_REQUEST')
        expect_private('connection request', got, data)

    def close(self):
        for cmid in (self.conn, self.client, self.listener):
            if cmid is not None:
                cmid.close()
        self.sch.close()
        self.cch.close()


def exchange(sender, receiver, length, seed, what):
    """One SEND of a pattern from sender to receiver, checked."""
    rmr = receiver.reg_msgs(length)
    smr = sender.reg_msgs(length)
    data = pattern(length, seed)
    smr.write(data, length)
    receiver.post_recv(rmr, length)
    sender.post_send(smr, e.IBV_SEND_SIGNALED, length)
    swc = sender.get_send_comp()
    rwc = receiver.get_recv_comp()
    for wc, side in ((swc, 'send'), (rwc, 'receive')):
        if wc.status != e.IBV_WC_SUCCESS:
            raise Fail(f'{what}: {side} completion status {wc.status}')
    if rwc.byte_len != length:
        raise Fail(f'{what}: byte_len {rwc.byte_len}, expected {length}')
    expect_bytes(what, rmr.read(length, 0), data)
    smr.close()
    rmr.close()


def connect_accept_disconnect(t, family, port):
    cm = Cm(t, family, port)
    cm.listen()
    cm.resolve()
    cm.request(b'sroce client hello')
    cm.conn.create_qp(qp_init())
    param = ConnParam(data_len=20)
    param.set_private_data(b'sroce server welcome')
    cm.conn.accept(param)
    reply = event(cm.cch, ce.RDMA_CM_EVENT_ESTABLISHED, 'client')
    expect_private('connection reply', reply, b'sroce server welcome')
    event(cm.sch, ce.RDMA_CM_EVENT_ESTABLISHED, 'server')
    exchange(cm.client, cm.conn, 4096, family, 'client to server, 4 KiB')
    exchange(cm.conn, cm.client, 9000, family + 1, 'server to client, 9000 B')
    cm.client.disconnect()
    event(cm.sch, ce.RDMA_CM_EVENT_DISCONNECTED, 'server after disconnect')
    # the passive side answers the DREQ (DREP) by disconnecting too
    cm.conn.disconnect()
    event(cm.cch, ce.RDMA_CM_EVENT_DISCONNECTED, 'client after disconnect')


@test('rdma_cm IPv4: resolve, connect with private data both ways, '
      'SENDs both ways, disconnect')
def t_connect4(t):
    connect_accept_disconnect(t, 4, 7601)


@test('rdma_cm IPv6: resolve, connect with private data both ways, '
      'SENDs both ways, disconnect')
def t_connect6(t):
    connect_accept_disconnect(t, 6, 7602)


@test('rdma_cm: a reject carries the server\'s private data to the client')
def t_reject(t):
    cm = Cm(t, 4, 7603)
    cm.listen()
    cm.resolve()
    cm.request(b'let me in')
    cm.conn.reject(b'go away')
    got = event(cm.cch, ce.RDMA_CM_EVENT_REJECTED, 'client')
    expect_private('reject', got, b'go away')


@test('rdma_cm: a connect to a port nobody listens on is rejected')
def t_no_listener(t):
    cm = Cm(t, 4, 7604)
    cm.resolve()
    cm.client.create_qp(qp_init())
    cm.client.connect(ConnParam())
    event(cm.cch, ce.RDMA_CM_EVENT_REJECTED, 'client')


def unreachable(t, family):
    cm = Cm(t, family, 7605)
    start = time.monotonic()
    cm.client.resolve_addr(AddrInfo(src=cm.src, dst=cm.nobody,
                                    dst_service=cm.port, port_space=TCP), 1000)
    event(cm.cch, ce.RDMA_CM_EVENT_ADDR_ERROR, f'resolve_addr {cm.nobody}')
    took = time.monotonic() - start
    if took > 15:
        raise Fail(f'ADDR_ERROR after {took:.1f} s for a 1 s timeout')


@test('rdma_cm IPv4: an address nobody has: ADDR_ERROR after the timeout')
def t_unreachable4(t):
    unreachable(t, 4)


@test('rdma_cm IPv6: an address nobody has: ADDR_ERROR after the timeout')
def t_unreachable6(t):
    unreachable(t, 6)


if __name__ == '__main__':
    sys.exit(main(TESTS, __doc__))
