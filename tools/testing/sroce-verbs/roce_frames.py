#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The sroce authors
"""RoCEv2 frames for roce_capture_check.py: reading captures, parsing.

* read_capture(): the frames of a classic libpcap (either byte order,
  micro- or nanosecond time stamps) or pcapng file; write_pcap() writes
  one.
* ip_packet(), roce_udp_payload(): from a link-layer frame (Ethernet,
  802.1Q, Linux cooked) to the IPv4/IPv6 packet and its RoCEv2 payload.
* parse_transport(): the BTH and the extension headers its opcode implies
  (IBA vol 1 ch. 9), with their lengths, version and pad count checked.
* icrc(): the invariant CRC of IBA annex A17.3.3 over an IP packet.
* build_frame(), sample_frames(): frames with a correct ICRC, for the
  self-tests.
"""

import collections
import struct
import zlib

ROCE_PORT = 4791

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
    fields = {'icrc': int.from_bytes(payload[-4:], 'big')}
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
