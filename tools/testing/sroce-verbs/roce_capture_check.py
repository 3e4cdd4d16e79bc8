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

Reading captures, parsing frames and the ICRC are in roce_frames.py; this
file holds the tshark cross-check, the verdict and the self-tests.
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

from roce_frames import (CNP_OPCODE, ICRC_LEN, LINKTYPE_ETHERNET, OPS,
                         ROCE_PORT, CaptureError, build_frame, crc32_slow,
                         icrc, icrc_input, ip_packet, parse_transport,
                         read_capture, roce_udp_payload, sample_frames,
                         write_pcap)

TSHARK = '/usr/bin/tshark'

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
