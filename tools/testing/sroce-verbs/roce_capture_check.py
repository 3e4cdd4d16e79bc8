#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The sroce authors
"""Check a packet capture of RoCEv2 traffic.

    roce_capture_check.py [--min-packets N] [--expect-op NAME ...] FILE
    roce_capture_check.py --self-test
    roce_capture_check.py --corrupt-test FILE

FILE is a classic libpcap file (either byte order, micro- or nanosecond
time stamps, as ``tshark -w FILE -F pcap`` writes it) or a pcapng file
(tshark's default), with Ethernet (optionally 802.1Q tagged) or Linux
cooked (SLL) link-layer headers.  Every IPv4 or IPv6 UDP datagram to port
4791 is a RoCEv2 frame; for each one this program

* parses the BTH and the extension headers its opcode implies (IBA vol 1
  ch. 9: RDETH is never used, DETH on UD, RETH, AtomicETH, AETH,
  AtomicAckETH, ImmDt, IETH) and checks their lengths, the header version,
  the pad count and that opcodes which carry no payload have none;
* recomputes the ICRC (IBA annex A17.3.3) and compares it with the frame's
  last four bytes;
* compares the headers tshark's InfiniBand dissector decoded for the same
  frame (``-d udp.port==4791,infiniband``) with its own parse: opcode,
  destination QP and PSN, and the presence and values of RETH, AETH,
  AtomicETH, DETH, ImmDt and IETH fields, and the ICRC field; and that
  tshark marked nothing malformed and raised no expert warning or error.
  tshark's payload heuristics (RPC-over-RDMA, iSER, ...) are disabled:
  they guess at application data.  A zero UDP checksum over IPv6, which
  tshark calls an error but RoCEv2 senders use and Linux accepts, is
  counted in a note unless --strict-udp-csum.

It prints one line per finding, then a summary, and exits 0 if and only if
there were at least --min-packets RoCEv2 frames, every ICRC verified, every
frame decoded cleanly and every --expect-op was seen.  Exit 1 on a failed
check, 2 on a usage error or an unreadable capture.

--self-test checks the ICRC code against a frame captured from a
ConnectX-4 Lx and against frames built here (and, if tshark is installed,
runs the whole check on a capture of those frames).  --corrupt-test copies
FILE, flips one payload byte of one RoCEv2 frame in the copy and checks
that the checker reports exactly that frame's ICRC as bad.
"""

import argparse
import collections
import io
import os
import struct
import subprocess
import sys
import tempfile
import zlib

ROCE_PORT = 4791
TSHARK = '/usr/bin/tshark'

ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86dd
ETH_P_8021Q = 0x8100
ETH_P_8021AD = 0x88a8
IPPROTO_UDP = 17

LINKTYPE_ETHERNET = 1
LINKTYPE_LINUX_SLL = 113

BTH_LEN = 12
ICRC_LEN = 4

# Extension header lengths (IBA vol 1 9.3 - 9.6).
RDETH_LEN = 4
DETH_LEN = 8
RETH_LEN = 16
ATOMICETH_LEN = 28
AETH_LEN = 4
ATOMICACKETH_LEN = 8
IMMDT_LEN = 4
IETH_LEN = 4
CNP_RSVD_LEN = 16

# BTH opcode bits 7-5: the transport service.
TRANSPORTS = {0: 'RC', 1: 'UC', 2: 'RD', 3: 'UD', 4: 'CNP', 5: 'XRC'}

# BTH opcode bits 4-0: the operation, with the headers that follow the BTH
# (in wire order, after any RDETH/DETH) and whether a payload may follow.
Op = collections.namedtuple('Op', 'name headers payload')
OPS = {
    0x00: Op('send_first', (), True),
    0x01: Op('send_middle', (), True),
    0x02: Op('send_last', (), True),
    0x03: Op('send_last_imm', ('immdt',), True),
    0x04: Op('send_only', (), True),
    0x05: Op('send_only_imm', ('immdt',), True),
    0x06: Op('rdma_write_first', ('reth',), True),
    0x07: Op('rdma_write_middle', (), True),
    0x08: Op('rdma_write_last', (), True),
    0x09: Op('rdma_write_last_imm', ('immdt',), True),
    0x0a: Op('rdma_write_only', ('reth',), True),
    0x0b: Op('rdma_write_only_imm', ('reth', 'immdt'), True),
    0x0c: Op('rdma_read_request', ('reth',), False),
    0x0d: Op('rdma_read_response_first', ('aeth',), True),
    0x0e: Op('rdma_read_response_middle', (), True),
    0x0f: Op('rdma_read_response_last', ('aeth',), True),
    0x10: Op('rdma_read_response_only', ('aeth',), True),
    0x11: Op('acknowledge', ('aeth',), False),
    0x12: Op('atomic_acknowledge', ('aeth', 'atomicacketh'), False),
    0x13: Op('compare_swap', ('atomiceth',), False),
    0x14: Op('fetch_add', ('atomiceth',), False),
    0x16: Op('send_last_inv', ('ieth',), True),
    0x17: Op('send_only_inv', ('ieth',), True),
}

# The operations each transport may carry (IBA vol 1 table 38).
TRANSPORT_OPS = {
    'RC': frozenset(OPS),
    'UC': frozenset(range(0x00, 0x0c)),
    'RD': frozenset(range(0x00, 0x15)),
    'UD': frozenset((0x04, 0x05)),
    'XRC': frozenset(OPS),
}
CNP_OPCODE = 0x81

HEADER_LEN = {
    'reth': RETH_LEN, 'immdt': IMMDT_LEN, 'aeth': AETH_LEN,
    'atomicacketh': ATOMICACKETH_LEN, 'atomiceth': ATOMICETH_LEN,
    'ieth': IETH_LEN,
}


class CaptureError(Exception):
    """The capture file cannot be read."""


# ---------------------------------------------------------------- ICRC --

def _crc32_table():
    """The byte table of the reflected CRC-32 (polynomial 0x04c11db7)."""
    table = []
    for byte in range(256):
        reg = byte
        for _ in range(8):
            reg = (reg >> 1) ^ (0xedb88320 if reg & 1 else 0)
        table.append(reg)
    return table


CRC32_TABLE = _crc32_table()


def crc32_slow(data, crc=0):
    """CRC-32 as in IEEE 802.3 / zlib, computed here byte by byte.

    Used by the self-test to check the fast path (zlib.crc32) is the same
    function; too slow for whole captures under TCG.
    """
    reg = crc ^ 0xffffffff
    for byte in data:
        reg = (reg >> 8) ^ CRC32_TABLE[(reg ^ byte) & 0xff]
    return reg ^ 0xffffffff


def icrc_input(ippkt):
    """The bytes the ICRC covers, for an IP packet ending in its ICRC.

    IBA annex A17.3.3: a 64-bit field of ones stands in for the LRH; the
    variant fields of the IP and UDP headers and the BTH's resv8a byte
    (which holds FECN/BECN on RoCEv2) are replaced by ones; the ICRC
    itself is not covered.  Returns a bytearray, or raises ValueError if
    the packet is neither IPv4 nor IPv6 or too short.
    """
    data = bytearray(ippkt[:-ICRC_LEN])
    version = data[0] >> 4 if data else 0
    if version == 4:
        ihl = (data[0] & 0x0f) * 4
        if ihl < 20 or len(data) < ihl + 8 + BTH_LEN:
            raise ValueError('IPv4 packet too short for UDP + BTH')
        data[1] = 0xff                      # type of service (DSCP, ECN)
        data[8] = 0xff                      # time to live
        data[10:12] = b'\xff\xff'           # header checksum
        udp = ihl
    elif version == 6:
        if len(data) < 40 + 8 + BTH_LEN:
            raise ValueError('IPv6 packet too short for UDP + BTH')
        data[0] |= 0x0f                     # traffic class, high nibble
        data[1] = 0xff                      # traffic class low, flow label
        data[2:4] = b'\xff\xff'             # flow label
        data[7] = 0xff                      # hop limit
        udp = 40
    else:
        raise ValueError('not an IP packet (version %d)' % version)
    data[udp + 6:udp + 8] = b'\xff\xff'     # UDP checksum
    data[udp + 8 + 4] = 0xff                # BTH resv8a (FECN, BECN)
    return b'\xff' * 8 + data


def icrc(ippkt, crc32=zlib.crc32):
    """The ICRC of an IP packet ending in an ICRC field, as wire bytes.

    The CRC is the IEEE 802.3 CRC-32 (initial value and final XOR of
    ones), transmitted least significant byte first.
    """
    return struct.pack('<I', crc32(icrc_input(ippkt)) & 0xffffffff)


# ---------------------------------------------------------- capture I/O --

def _read_pcap(data):
    """Yield (linktype, frame bytes, original length) of a libpcap file."""
    magic = data[:4]
    if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):
        endian = '<'
    elif magic in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'):
        endian = '>'
    else:
        raise CaptureError('not a pcap file')
    if len(data) < 24:
        raise CaptureError('pcap file header truncated')
    linktype = struct.unpack(endian + 'I', data[20:24])[0] & 0x0fffffff
    off = 24
    while off < len(data):
        if off + 16 > len(data):
            raise CaptureError('record header truncated at offset %d' % off)
        _, _, caplen, origlen = struct.unpack(endian + 'IIII',
                                              data[off:off + 16])
        off += 16
        if off + caplen > len(data):
            raise CaptureError('record truncated at offset %d' % off)
        yield linktype, data[off:off + caplen], origlen
        off += caplen


def _read_pcapng(data):
    """Yield (linktype, frame bytes, original length) of a pcapng file."""
    off = 0
    endian = '<'
    links = []
    while off < len(data):
        if off + 12 > len(data):
            raise CaptureError('block header truncated at offset %d' % off)
        if data[off:off + 4] == b'\x0a\x0d\x0d\x0a':
            bom = data[off + 8:off + 12]
            if bom == b'\x4d\x3c\x2b\x1a':
                endian = '<'
            elif bom == b'\x1a\x2b\x3c\x4d':
                endian = '>'
            else:
                raise CaptureError('bad byte-order magic at offset %d' % off)
            links = []
        btype, blen = struct.unpack(endian + 'II', data[off:off + 8])
        if blen < 12 or blen % 4 or off + blen > len(data):
            raise CaptureError('bad block length %d at offset %d' %
                               (blen, off))
        body = data[off + 8:off + blen - 4]
        if btype == 1:                                  # interface
            links.append(struct.unpack(endian + 'H', body[:2])[0])
        elif btype == 6:                                # enhanced packet
            ifid, _, _, caplen, origlen = struct.unpack(endian + 'IIIII',
                                                        body[:20])
            if ifid >= len(links) or 20 + caplen > len(body):
                raise CaptureError('bad packet block at offset %d' % off)
            yield links[ifid], body[20:20 + caplen], origlen
        elif btype == 3:                                # simple packet
            if not links:
                raise CaptureError('packet before interface block')
            origlen = struct.unpack(endian + 'I', body[:4])[0]
            yield links[0], body[4:4 + origlen], origlen
        off += blen


def read_capture(path):
    """Yield (linktype, frame, original length) for each frame of path."""
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except OSError as err:
        raise CaptureError(str(err)) from err
    if data[:4] == b'\x0a\x0d\x0d\x0a':
        yield from _read_pcapng(data)
    else:
        yield from _read_pcap(data)


def write_pcap(path, frames):
    """Write Ethernet frames to a classic little-endian libpcap file."""
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 262144,
                            LINKTYPE_ETHERNET))
        for i, frame in enumerate(frames):
            f.write(struct.pack('<IIII', i, 0, len(frame), len(frame)))
            f.write(frame)


# ------------------------------------------------------------- parsing --

Frame = collections.namedtuple('Frame', 'number ip udp_payload')


def ip_packet(linktype, frame):
    """The IP packet inside a link-layer frame, or None."""
    if linktype == LINKTYPE_ETHERNET:
        if len(frame) < 14:
            return None
        ethertype = struct.unpack('!H', frame[12:14])[0]
        off = 14
        while ethertype in (ETH_P_8021Q, ETH_P_8021AD) and \
                len(frame) >= off + 4:
            ethertype = struct.unpack('!H', frame[off + 2:off + 4])[0]
            off += 4
    elif linktype == LINKTYPE_LINUX_SLL:
        if len(frame) < 16:
            return None
        ethertype = struct.unpack('!H', frame[14:16])[0]
        off = 16
    else:
        return None
    if ethertype not in (ETH_P_IP, ETH_P_IPV6):
        return None
    return frame[off:]


def roce_udp_payload(ip):
    """Split an IP packet carrying a RoCEv2 datagram.

    Returns (IP packet without link-layer padding, UDP payload), None if
    it is not a UDP datagram to port 4791, or raises ValueError with what
    is wrong with a datagram to port 4791.
    """
    if len(ip) < 20:
        return None
    version = ip[0] >> 4
    if version == 4:
        ihl = (ip[0] & 0x0f) * 4
        total = struct.unpack('!H', ip[2:4])[0]
        if ip[9] != IPPROTO_UDP or ihl < 20 or len(ip) < ihl + 8:
            return None
        udp = ihl
        frag = struct.unpack('!H', ip[6:8])[0]
    elif version == 6:
        if len(ip) < 48 or ip[6] != IPPROTO_UDP:
            return None
        total = 40 + struct.unpack('!H', ip[4:6])[0]
        udp = 40
        frag = 0
    else:
        return None
    if struct.unpack('!H', ip[udp + 2:udp + 4])[0] != ROCE_PORT:
        return None
    if frag & 0x3fff:
        raise ValueError('IPv4 fragment')
    if total > len(ip):
        raise ValueError('IP packet truncated (%d of %d bytes captured)' %
                         (len(ip), total))
    ip = ip[:total]
    udp_len = struct.unpack('!H', ip[udp + 4:udp + 6])[0]
    if udp_len != total - udp:
        raise ValueError('UDP length %d, IP payload %d' %
                         (udp_len, total - udp))
    return ip, ip[udp + 8:]


class Bth(collections.namedtuple('Bth', 'opcode se migreq pad tver pkey '
                                 'resv8a dqpn ackreq psn')):
    """A parsed Base Transport Header."""

    @classmethod
    def parse(cls, raw):
        """Parse the first 12 bytes of raw."""
        b1 = raw[1]
        return cls(raw[0], b1 >> 7, (b1 >> 6) & 1, (b1 >> 4) & 3, b1 & 0xf,
                   struct.unpack('!H', raw[2:4])[0], raw[4],
                   int.from_bytes(raw[5:8], 'big'), raw[8] >> 7,
                   int.from_bytes(raw[9:12], 'big'))

    @property
    def transport(self):
        """RC, UC, RD, UD, CNP or XRC, or None if reserved."""
        return TRANSPORTS.get(self.opcode >> 5)

    @property
    def name(self):
        """The opcode as TRANSPORT:operation (e.g. RC:send_only)."""
        if self.opcode == CNP_OPCODE:
            return 'CNP:cnp'
        op = OPS.get(self.opcode & 0x1f)
        return '%s:%s' % (self.transport or 'opcode_%#04x' % self.opcode,
                          op.name if op else 'op_%#04x' % self.opcode)


def parse_transport(payload):
    """Parse the IBA transport headers of a RoCEv2 UDP payload.

    Returns (bth, fields, problems): fields maps header names to dicts of
    their values (the keys match the dissector's field names), problems
    lists what does not follow IBA vol 1 ch. 9.
    """
    problems = []
    if len(payload) < BTH_LEN + ICRC_LEN:
        return None, {}, ['UDP payload of %d bytes is too short for BTH '
                          '+ ICRC' % len(payload)]
    bth = Bth.parse(payload)
    fields = {'icrc': _tshark_int('0x' + bytes(payload[-4:]).hex())}
    if bth.tver != 0:
        problems.append('BTH header version %d' % bth.tver)
    if bth.opcode == CNP_OPCODE:
        if len(payload) != BTH_LEN + CNP_RSVD_LEN + ICRC_LEN:
            problems.append('CNP of %d bytes' % len(payload))
        return bth, fields, problems
    transport = bth.transport
    op = OPS.get(bth.opcode & 0x1f)
    if transport not in TRANSPORT_OPS or \
            bth.opcode & 0x1f not in TRANSPORT_OPS[transport]:
        problems.append('opcode %#04x is reserved' % bth.opcode)
        return bth, fields, problems
    off = BTH_LEN
    headers = list(op.headers)
    if transport == 'RD':
        headers.insert(0, 'rdeth')
    if transport in ('RD', 'UD'):
        headers.insert(1 if transport == 'RD' else 0, 'deth')
    for hdr in headers:
        size = {'rdeth': RDETH_LEN, 'deth': DETH_LEN}.get(hdr) or \
            HEADER_LEN[hdr]
        raw = payload[off:off + size]
        if len(raw) + ICRC_LEN > len(payload) - off:
            problems.append('%s truncated' % hdr.upper())
            return bth, fields, problems
        fields[hdr] = _header_fields(hdr, raw)
        off += size
    data_len = len(payload) - off - ICRC_LEN
    if not op.payload and (data_len or bth.pad):
        problems.append('%s with %d payload bytes, pad count %d' %
                        (op.name, data_len, bth.pad))
    elif data_len % 4:
        problems.append('payload + pad of %d bytes is not a multiple of 4'
                        % data_len)
    elif bth.pad > data_len:
        problems.append('pad count %d with %d payload bytes' %
                        (bth.pad, data_len))
    fields['payload_len'] = max(0, data_len - bth.pad)
    return bth, fields, problems


def _header_fields(hdr, raw):
    """The values of one extension header, keyed by dissector field."""
    be = int.from_bytes
    if hdr == 'reth':
        return {'va': be(raw[0:8], 'big'), 'r_key': be(raw[8:12], 'big'),
                'dmalen': be(raw[12:16], 'big')}
    if hdr == 'aeth':
        return {'syndrome': raw[0], 'msn': be(raw[1:4], 'big')}
    if hdr == 'atomiceth':
        return {'va': be(raw[0:8], 'big'), 'r_key': be(raw[8:12], 'big'),
                'swapdt': be(raw[12:20], 'big'),
                'cmpdt': be(raw[20:28], 'big')}
    if hdr == 'atomicacketh':
        return {'origremdt': be(raw[0:8], 'big')}
    if hdr == 'deth':
        return {'q_key': be(raw[0:4], 'big'),
                'srcqp': be(raw[5:8], 'big')}
    if hdr == 'rdeth':
        return {'eecnxt': be(raw[1:4], 'big')}
    return {'raw': bytes(raw).hex()}                    # immdt, ieth


# ------------------------------------------------------------- tshark --

# Dissector fields read per frame: (header, key in our parse, tshark
# field).  A header's first entry also proves the dissector decoded it.
TSHARK_FIELDS = [
    ('bth', 'opcode', 'infiniband.bth.opcode'),
    ('bth', 'dqpn', 'infiniband.bth.destqp'),
    ('bth', 'psn', 'infiniband.bth.psn'),
    ('reth', 'va', 'infiniband.reth.va'),
    ('reth', 'r_key', 'infiniband.reth.r_key'),
    ('reth', 'dmalen', 'infiniband.reth.dmalen'),
    ('aeth', 'syndrome', 'infiniband.aeth.syndrome'),
    ('aeth', 'msn', 'infiniband.aeth.msn'),
    ('atomiceth', 'swapdt', 'infiniband.atomiceth.swapdt'),
    ('atomiceth', 'cmpdt', 'infiniband.atomiceth.cmpdt'),
    ('atomicacketh', 'origremdt', 'infiniband.atomicacketh.origremdt'),
    ('deth', 'q_key', 'infiniband.deth.q_key'),
    ('deth', 'srcqp', 'infiniband.deth.srcqp'),
    ('immdt', 'raw', 'infiniband.immdt'),
    ('ieth', 'raw', 'infiniband.ieth'),
    ('icrc', 'wire', 'infiniband.invariant.crc'),
]
TSHARK_EXTRA = ['frame.number', 'frame.protocols', '_ws.malformed',
                '_ws.expert.severity', '_ws.expert.message']
# tshark 4.0's heuristic dissectors for InfiniBand payloads (RPC-over-RDMA,
# iSER, SMB Direct, ...): they guess at application data, and a guess
# that fails marks a well-formed RoCEv2 frame malformed.
PAYLOAD_HEURISTICS = ('rpcrdma_infiniband', 'iser_infiniband',
                      'smb_direct_infiniband', 'smcr_infiniband',
                      'sdp_infiniband', 'fc_infiniband', 'lnet_ib',
                      'eth_over_ib', 'mellanox_eoib', 'nvme_rdma',
                      'drbd_rdma')
# tshark's UDP dissector calls a zero checksum over IPv6 an error (RFC
# 8200); RoCEv2 senders (rdma_rxe, sroce) send zero and Linux's RoCE
# receive sockets accept it (RFC 6935 allows zero for tunnels).  Counted
# and shown, not a failure unless --strict-udp-csum.
ZERO_CSUM_MSG = 'Illegal checksum value (0)'
# Expert info severities (epan/proto.h PI_*).
PI_WARN = 0x00600000
PI_ERROR = 0x00800000


def run_tshark(path, tshark=TSHARK):
    """Dissect path with tshark; map frame number to {field: value}.

    Raises CaptureError if tshark fails.
    """
    names = TSHARK_EXTRA + [f for _, _, f in TSHARK_FIELDS]
    cmd = [tshark, '-n', '-r', path, '-d',
           'udp.port==%d,infiniband' % ROCE_PORT, '-T', 'fields',
           '-E', 'separator=\t', '-E', 'occurrence=a', '-E', 'aggregator=|',
           '-E', 'quote=n']
    for name in names:
        cmd += ['-e', name]
    cmd.append('udp.dstport == %d' % ROCE_PORT)
    heur = []
    for name in PAYLOAD_HEURISTICS:
        heur += ['--disable-heuristic', name]
    try:
        res = subprocess.run(cmd[:1] + heur + cmd[1:],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             check=False, universal_newlines=True)
        if res.returncode and "can't disable" in res.stderr:
            # another tshark version: keep its payload heuristics
            res = subprocess.run(cmd, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, check=False,
                                 universal_newlines=True)
    except OSError as err:
        raise CaptureError('cannot run %s: %s' % (tshark, err)) from err
    if res.returncode:
        raise CaptureError('%s exit %d: %s' % (tshark, res.returncode,
                                               res.stderr.strip()))
    out = {}
    for line in res.stdout.splitlines():
        vals = line.split('\t')
        vals += [''] * (len(names) - len(vals))
        rec = dict(zip(names, vals))
        out[int(rec['frame.number'])] = rec
    return out


def _tshark_int(text):
    """A tshark integer field (decimal or 0x hex), None if absent."""
    if text == '':
        return None
    return int(text, 0)


def compare_dissection(bth, fields, rec, strict_csum=False):
    """What the dissector's record rec says differently from our parse.

    Returns (problems, notes): notes are the IPv6 zero UDP checksums
    tshark flags (see ZERO_CSUM_MSG) unless strict_csum.
    """
    problems = []
    notes = []
    protos = rec['frame.protocols'].split(':')
    if 'infiniband' not in protos:
        return ['not dissected as InfiniBand (%s)' %
                rec['frame.protocols']], notes
    if rec['_ws.malformed']:
        problems.append('dissector: malformed packet')
    sevs = [int(s, 0) for s in rec['_ws.expert.severity'].split('|') if s]
    msgs = rec['_ws.expert.message'].split('|')
    for i, sev in enumerate(sevs):
        msg = msgs[i] if i < len(msgs) else '?'
        if msg == ZERO_CSUM_MSG and 'ipv6' in protos and not strict_csum:
            notes.append('IPv6 UDP checksum 0')
        elif sev >= PI_WARN:
            problems.append('dissector expert %s: %s' %
                            ('error' if sev >= PI_ERROR else 'warning', msg))
    mine = {k: v for k, v in fields.items() if isinstance(v, dict)}
    mine['bth'] = {'opcode': bth.opcode, 'dqpn': bth.dqpn, 'psn': bth.psn}
    if bth.opcode != CNP_OPCODE:
        # tshark 4.0 does not know the CNP opcode: BTH only.
        mine['icrc'] = {'wire': fields['icrc']}
    if 'atomiceth' in fields:
        # The dissector shows AtomicETH's VA and R_Key in RETH's fields.
        mine['reth'] = {k: fields['atomiceth'][k] for k in ('va', 'r_key')}
    for hdr, key, name in TSHARK_FIELDS:
        text = rec[name]
        if key not in mine.get(hdr, {}):
            if text != '':
                problems.append('dissector decoded %s (%s=%s) where the '
                                'opcode has none' % (hdr.upper(), name,
                                                     text))
            continue
        want = mine[hdr][key]
        if text == '':
            problems.append('dissector did not decode %s (%s)' %
                            (hdr.upper(), name))
            continue
        if key == 'raw':
            # ImmDt and IETH: the header and its one field share a name.
            vals = set(text.replace(':', '').lower().split('|'))
            got = vals.pop() if len(vals) == 1 else text
        elif '|' in text:
            problems.append('dissector decoded %s twice' % name)
            continue
        else:
            got = _tshark_int(text)
        if got != want:
            problems.append('dissector %s %s, frame says %s' %
                            (name, text, want if isinstance(want, str) else
                             '%#x' % want))
    return problems, notes


# ------------------------------------------------------------- checker --

class Report:
    """Findings and counts of one capture check."""

    def __init__(self, out=sys.stdout):
        self.out = out
        self.frames = 0
        self.roce = 0
        self.icrc_ok = 0
        self.icrc_bad = []
        self.bad_frames = set()
        self.ops = collections.Counter()
        self.findings = 0
        self.notes = collections.Counter()
        self.strict_csum = False

    def finding(self, number, text):
        """Print one finding about frame number (0: the whole capture)."""
        self.findings += 1
        if number:
            self.bad_frames.add(number)
            print('frame %d: %s' % (number, text), file=self.out)
        else:
            print(text, file=self.out)


def check_capture(path, min_packets=1, expect_ops=(), use_tshark=True,
                  out=sys.stdout, strict_csum=False):
    """Check one capture; print findings and a summary.

    Returns (ok, report).  Raises CaptureError if it cannot be read.
    """
    rep = Report(out)
    rep.strict_csum = strict_csum
    frames = {}
    for number, (linktype, frame, origlen) in \
            enumerate(read_capture(path), 1):
        rep.frames += 1
        ip = ip_packet(linktype, frame)
        if ip is None:
            continue
        try:
            split = roce_udp_payload(ip)
        except ValueError as err:
            rep.roce += 1
            rep.finding(number, 'RoCEv2 frame not checked: %s (frame of %d '
                        'bytes, %d captured)' % (err, origlen, len(frame)))
            continue
        if split is None:
            continue
        rep.roce += 1
        ippkt, payload = split
        frames[number] = check_frame(rep, number, ippkt, payload)
    if use_tshark:
        check_dissection(rep, path, frames)
    return summarize(rep, min_packets, expect_ops), rep


def check_frame(rep, number, ippkt, payload):
    """Check the ICRC and headers of one RoCEv2 frame; (bth, fields)."""
    bth, fields, problems = parse_transport(payload)
    if bth is None:
        rep.icrc_bad.append(number)
        rep.finding(number, problems[0])
        return None
    rep.ops[bth.name] += 1
    for text in problems:
        rep.finding(number, '%s: %s' % (bth.name, text))
    want = icrc(ippkt)
    if want == ippkt[-ICRC_LEN:]:
        rep.icrc_ok += 1
    else:
        rep.icrc_bad.append(number)
        rep.finding(number, '%s psn %#x dqpn %#x: ICRC %s on the wire, %s '
                    'computed' % (bth.name, bth.psn, bth.dqpn,
                                  bytes(ippkt[-ICRC_LEN:]).hex(),
                                  want.hex()))
    return bth, fields


def check_dissection(rep, path, frames):
    """Compare tshark's dissection of every RoCEv2 frame with ours."""
    try:
        dissected = run_tshark(path)
    except CaptureError as err:
        rep.finding(0, 'tshark: %s' % err)
        rep.bad_frames.add(0)
        return
    for number, parsed in sorted(frames.items()):
        if parsed is None:
            continue
        rec = dissected.get(number)
        if rec is None:
            rep.finding(number, 'tshark did not show this frame')
            continue
        problems, notes = compare_dissection(parsed[0], parsed[1], rec,
                                             rep.strict_csum)
        for text in problems:
            rep.finding(number, '%s: %s' % (parsed[0].name, text))
        rep.notes.update(notes)
    extra = set(dissected) - set(frames)
    for number in sorted(extra):
        rep.finding(number, 'tshark shows a UDP/4791 frame this parser did '
                    'not find')


def op_seen(rep, name):
    """Whether an --expect-op name was seen (TRANSPORT:op or op)."""
    name = name.lower().replace('-', '_')
    for seen in rep.ops:
        transport, op = seen.split(':')
        if name in (op, seen.lower(), '%s_%s' % (transport.lower(), op)):
            return True
    return False


def summarize(rep, min_packets, expect_ops):
    """Print the summary and return the verdict."""
    missing = [name for name in expect_ops if not op_seen(rep, name)]
    for name in missing:
        rep.finding(0, 'expected opcode %s not seen' % name)
    if rep.roce < min_packets:
        rep.finding(0, '%d RoCEv2 frames, fewer than %d' %
                    (rep.roce, min_packets))
    print('frames %d, RoCEv2 frames %d, ICRC ok %d, ICRC bad %d, frames '
          'with findings %d' % (rep.frames, rep.roce, rep.icrc_ok,
                                len(rep.icrc_bad),
                                len(rep.bad_frames - {0})), file=rep.out)
    print('opcodes: %s' % (', '.join('%s %d' % (k, v) for k, v in
                                     sorted(rep.ops.items())) or 'none'),
          file=rep.out)
    for text, count in sorted(rep.notes.items()):
        print('note: %s in %d frames (tshark: "%s"; not a failure without '
              '--strict-udp-csum)' % (text, count, ZERO_CSUM_MSG),
              file=rep.out)
    ok = not rep.findings
    print('verdict: %s' % ('PASS' if ok else 'FAIL'), file=rep.out)
    return ok


# ------------------------------------------------------ frame building --

def _csum_add(csum, data):
    """The ones' complement sum of data added to csum (RFC 1071)."""
    if len(data) % 2:
        data += b'\0'
    csum += sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while csum >> 16:
        csum = (csum & 0xffff) + (csum >> 16)
    return csum


def build_frame(opcode, headers=b'', payload=b'', ipv6=False, dqpn=0x11,
                psn=1, ackreq=True, resv8a=0, tos=0, ttl=64, flow=0,
                sport=0xc000):
    """An Ethernet frame with one RoCEv2 packet and its correct ICRC.

    headers are the extension headers' bytes; payload is padded to a
    multiple of 4 bytes and the BTH pad count set to match.
    """
    pad = -len(payload) % 4
    bth = bytes([opcode, pad << 4, 0xff, 0xff, resv8a]) + \
        dqpn.to_bytes(3, 'big') + bytes([0x80 if ackreq else 0]) + \
        psn.to_bytes(3, 'big')
    roce = bth + headers + payload + b'\0' * pad + b'\0' * ICRC_LEN
    udp = struct.pack('!HHHH', sport, ROCE_PORT, 8 + len(roce), 0) + roce
    if ipv6:
        ip = struct.pack('!IHBB', (6 << 28) | (tos << 20) | flow, len(udp),
                         IPPROTO_UDP, ttl)
        ip += bytes.fromhex('fd00' + '00' * 13 + '01')
        ip += bytes.fromhex('fd00' + '00' * 13 + '02')
        ethertype = ETH_P_IPV6
        csum = _csum_add(0, ip[8:40] + struct.pack('!IxxxB', len(udp),
                                                   IPPROTO_UDP) + udp)
        udp = udp[:6] + struct.pack('!H', (~csum & 0xffff) or 0xffff) + \
            udp[8:]
    else:
        hdr = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, tos,
                                    20 + len(udp), 0, 0x4000, ttl,
                                    IPPROTO_UDP, 0, bytes([10, 0, 0, 1]),
                                    bytes([10, 0, 0, 2])))
        csum = _csum_add(0, hdr)
        hdr[10:12] = struct.pack('!H', ~csum & 0xffff)
        ip = bytes(hdr)
        ethertype = ETH_P_IP
    pkt = bytearray(ip + udp)
    pkt[-ICRC_LEN:] = icrc(pkt)
    eth = bytes.fromhex('020000000002020000000001') + \
        struct.pack('!H', ethertype)
    frame = eth + pkt
    return frame + b'\0' * max(0, 60 - len(frame))


def sample_frames():
    """One frame of every header layout, IPv4 and IPv6 alternating."""
    reth = struct.pack('!QII', 0x7f0012345000, 0x1234, 8192)
    aeth = bytes([0x1f]) + (5).to_bytes(3, 'big')
    atomic = struct.pack('!QIQQ', 0x7f0012346000, 0x4321, 7, 3)
    deth = struct.pack('!II', 0x11111111, 0x12)
    imm = b'\x12\x34\x56\x78'
    data = bytes(range(37))
    spec = [
        (0x04, b'', data), (0x05, imm, data[:4]), (0x00, b'', data),
        (0x01, b'', data), (0x02, b'', data), (0x03, imm, data),
        (0x06, reth, data), (0x07, b'', data), (0x08, b'', data),
        (0x09, imm, data), (0x0a, reth, data), (0x0b, reth + imm, b''),
        (0x0c, reth, b''), (0x0d, aeth, data), (0x0e, b'', data),
        (0x0f, aeth, data), (0x10, aeth, b'x'), (0x11, aeth, b''),
        (0x12, aeth + struct.pack('!Q', 7), b''), (0x13, atomic, b''),
        (0x14, atomic, b''), (0x17, imm, data), (0x24, b'', data),
        (0x2a, reth, data), (0x64, deth, data), (0x65, deth + imm, data),
    ]
    return [build_frame(op, hdr, pl, ipv6=bool(i % 2), psn=i, resv8a=0x40,
                        tos=i, ttl=64 - i, flow=i * 0x1111)
            for i, (op, hdr, pl) in enumerate(spec)]


# ------------------------------------------------------------ self-test --

# A CNP captured from a ConnectX-4 Lx (scapy's test/contrib/roce.uts),
# with the ICRC the adapter put on the wire.
CX4_FRAME = bytes.fromhex(
    'e41d 2dab 2bc2 7cfe 9064 3b32 0800 45c2'
    '003c 718c 4000 4011 9161 0a00 1101 0a00'
    '1201 0000 12b7 0028 0000 8100 ffff 4000'
    '0118 0000 0000 0000 0000 0000 0000 0000'
    '0000 0000 0000 82fd 002a')
CX4_ICRC = bytes.fromhex('82fd002a')


def _self_test_vectors():
    """Check the ICRC code on known packets; list of failures."""
    fails = []
    ip = ip_packet(LINKTYPE_ETHERNET, CX4_FRAME)
    ippkt, payload = roce_udp_payload(ip)
    if len(ippkt) != 60 or ippkt[-4:] != CX4_ICRC:
        fails.append('CX4 test frame mangled')
    for name, fn in (('zlib', zlib.crc32), ('table', crc32_slow)):
        if icrc(ippkt, fn) != CX4_ICRC:
            fails.append('%s CRC: CX4 CNP ICRC %s, want %s' %
                         (name, icrc(ippkt, fn).hex(), CX4_ICRC.hex()))
    bth, _, problems = parse_transport(payload)
    if bth.name != 'CNP:cnp' or problems:
        fails.append('CX4 CNP parsed as %s %s' % (bth.name, problems))
    for frame in sample_frames():
        ippkt, payload = roce_udp_payload(ip_packet(LINKTYPE_ETHERNET,
                                                    frame))
        want = struct.pack('<I', crc32_slow(icrc_input(ippkt)))
        bth, _, problems = parse_transport(payload)
        if icrc(ippkt) != want or ippkt[-4:] != want or problems:
            fails.append('sample %s: %s' % (bth.name, problems))
        # Variant fields must not matter, invariant ones must.
        var = bytearray(ippkt)
        if var[0] >> 4 == 4:
            var[1] ^= 0xfc
            var[8] ^= 0x3f
            var[10] ^= 0x55
            udp = 20
        else:
            var[1] ^= 0xf5
            var[3] ^= 0x5a
            var[7] ^= 0x3f
            udp = 40
        var[udp + 6] ^= 0x12
        var[udp + 8 + 4] ^= 0xc0
        if icrc(var) != want:
            fails.append('sample %s: a variant field changed the ICRC' %
                         bth.name)
        for off in (4, udp + 8, udp + 8 + 11, len(ippkt) - 5):
            inv = bytearray(ippkt)
            inv[off] ^= 1
            if icrc(inv) == want:
                fails.append('sample %s: byte %d is not covered' %
                             (bth.name, off))
    # The IPv6 SEND_ONLY example of the reference (flow label 0x54321,
    # traffic class 0x12, dqpn 0x11, psn 1, payload deadbeef).
    frame = build_frame(0x04, b'', bytes.fromhex('deadbeef'), ipv6=True,
                        tos=0x12, flow=0x54321, sport=0xc123)
    ippkt = bytearray(frame[14:])
    ippkt[8:40] = bytes.fromhex('fe80' + '00' * 13 + '01' +
                                'fe80' + '00' * 13 + '02')
    if icrc(ippkt) != bytes.fromhex('02f385f8'):
        fails.append('IPv6 reference SEND_ONLY: ICRC %s, want 02f385f8' %
                     icrc(ippkt).hex())
    return fails


def self_test():
    """Run the built-in checks; exit status."""
    fails = _self_test_vectors()
    print('self-test: ICRC vectors %s' % ('FAIL' if fails else 'ok'))
    if os.access(TSHARK, os.X_OK):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'sample.pcap')
            frames = sample_frames()
            write_pcap(path, [CX4_FRAME] + frames)
            names = [name for _, name in
                     sorted((op, o.name) for op, o in OPS.items()
                            if op != 0x15 and op != 0x16)]
            out = io.StringIO()
            ok, rep = check_capture(path, min_packets=len(frames) + 1,
                                    expect_ops=names + ['ud_send_only_imm',
                                                        'uc_send_only'],
                                    out=out)
            print('self-test: sample capture of %d frames: %s' %
                  (len(frames) + 1, out.getvalue().splitlines()[-3]))
            if not ok:
                print(out.getvalue(), end='')
                fails.append('sample capture did not pass')
            elif rep.icrc_ok != len(frames) + 1:
                fails.append('sample capture: %d ICRCs ok' % rep.icrc_ok)
            if not corrupt_test(path, quiet=True):
                fails.append('corrupted sample capture passed')
    else:
        print('self-test: no %s, dissector not checked' % TSHARK)
    for text in fails:
        print('self-test: FAIL: %s' % text)
    print('self-test: %s' % ('FAIL' if fails else 'PASS'))
    return 1 if fails else 0


def corrupt_test(path, quiet=False):
    """Flip a payload byte of one RoCEv2 frame in a copy of path.

    True if the checker then reports that frame's ICRC, and only it, as
    bad while the original's are all good.
    """
    with open(path, 'rb') as f:
        data = bytearray(f.read())
    target = None
    pos = 0
    for number, (linktype, frame, _) in enumerate(read_capture(path), 1):
        pos = data.find(frame, pos)
        ip = ip_packet(linktype, frame)
        split = roce_udp_payload(ip) if ip is not None else None
        if split is None:
            continue
        bth, fields, _ = parse_transport(split[1])
        if bth and fields.get('payload_len'):
            # the last payload byte before pad and ICRC
            off = pos + len(frame) - len(ip) + len(split[0]) - ICRC_LEN - \
                bth.pad - 1
            target = (number, off, bth)
            break
        pos += len(frame)
    if target is None:
        print('corrupt-test: no RoCEv2 frame with a payload in %s' % path)
        return False
    number, off, bth = target
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, 'corrupt' + os.path.splitext(path)[1])
        data[off] ^= 0x01
        with open(copy, 'wb') as f:
            f.write(data)
        if quiet:
            with open(os.devnull, 'w') as sink:
                ok, rep = check_capture(copy, use_tshark=False, out=sink)
        else:
            print('corrupt-test: flipped bit 0 of file byte %d, the last '
                  'payload byte of frame %d (%s psn %#x); checking the '
                  'copy:' % (off, number, bth.name, bth.psn))
            ok, rep = check_capture(copy, use_tshark=False)
    caught = not ok and rep.icrc_bad == [number]
    print('corrupt-test: %s (ICRC bad in frames %s)' %
          ('PASS' if caught else 'FAIL', rep.icrc_bad))
    return caught


def main(argv=None):
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description='Check the ICRCs and headers of RoCEv2 frames in a '
        'pcap or pcapng capture, with tshark\'s InfiniBand dissector.')
    parser.add_argument('file', nargs='?', help='capture file')
    parser.add_argument('--min-packets', type=int, default=1, metavar='N',
                        help='fail with fewer RoCEv2 frames (default 1)')
    parser.add_argument('--expect-op', action='append', default=[],
                        metavar='NAME', help='fail unless this opcode was '
                        'seen (send_only, rc_send_only, UD:send_only, ...)')
    parser.add_argument('--no-tshark', action='store_true',
                        help='skip the dissector checks')
    parser.add_argument('--strict-udp-csum', action='store_true',
                        help='fail on IPv6 frames with UDP checksum 0')
    parser.add_argument('--self-test', action='store_true',
                        help='check the ICRC code on known frames')
    parser.add_argument('--corrupt-test', action='store_true',
                        help='check a corrupted copy of FILE fails')
    args = parser.parse_args(argv)
    if args.self_test:
        return self_test()
    if not args.file:
        parser.error('a capture file is required')
    try:
        if args.corrupt_test:
            return 0 if corrupt_test(args.file) else 1
        ok, _ = check_capture(args.file, args.min_packets, args.expect_op,
                              not args.no_tshark,
                              strict_csum=args.strict_udp_csum)
    except CaptureError as err:
        print('%s: %s' % (args.file, err), file=sys.stderr)
        return 2
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
